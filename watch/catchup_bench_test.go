package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"bottled/internal/synth"
	"bottled/render"
	"bottled/sources"
)

// Catch-up benchmark sizes: the shape of a machine that was off for a day,
// 400 sessions of about 0.58 MB each.
const (
	catchUpSessions = 400
	catchUpSize     = 580 << 10
)

// BenchmarkCatchUp measures what the start-up catch-up costs per session
// beyond rendering: the daemon (in process, one worker, so that times add
// up) is started on catchUpSessions transcripts without bottles and timed
// until its catch-up is over ("catch-up"); in the same run the same
// sessions are parsed and rendered without writing anything ("render").
// overhead-ms/session is (catch-up − render) / sessions: finding the
// transcripts, the freshness check, the claude-mem lookup, the bottle
// write and what durability costs on the way (synced-s is when the last
// bottle was synced to disk, in the background). "fresh" starts the daemon
// again on the bottles it wrote, all current, and reports its catch-up per
// session.
// Target: overhead under 1 ms per session. Run it with
//
//	go test -run '^$' -bench CatchUp -benchtime 1x ./watch
func BenchmarkCatchUp(b *testing.B) {
	root := b.TempDir()
	claude := filepath.Join(root, "claude")
	ids := make([]string, catchUpSessions)
	paths := make([]string, catchUpSessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("ca7c0000-0000-4000-8000-%012d", i)
		paths[i] = filepath.Join(claude, "projects", fmt.Sprintf("-home-dev-p%02d", i%20), ids[i]+".jsonl")
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o700); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := synth.Transcript(f, ids[i], catchUpSize, uint64(i)+1); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	for n := 0; b.Loop(); n++ {
		renderOnly := timeRenders(b, ids, paths)
		data := filepath.Join(root, fmt.Sprintf("data%d", n))
		full, synced := timeCatchUp(b, claude, data, catchUpSessions)
		fresh, _ := timeCatchUp(b, claude, data, 0)
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / catchUpSessions }
		b.ReportMetric(per(renderOnly), "render-ms/session")
		b.ReportMetric(per(full), "catchup-ms/session")
		b.ReportMetric(per(full-renderOnly), "overhead-ms/session")
		b.ReportMetric(per(fresh), "fresh-ms/session")
		b.ReportMetric(synced.Seconds(), "synced-s")
		b.Logf("%d sessions of %d KB: render only %v, catch-up %v (every bottle on disk, synced, after %v), catch-up over fresh bottles %v",
			catchUpSessions, catchUpSize>>10, renderOnly.Round(time.Millisecond), full.Round(time.Millisecond),
			synced.Round(time.Millisecond), fresh.Round(time.Millisecond))
	}
	b.ReportMetric(0, "ns/op")
}

// timeRenders parses and renders every session, writing nothing.
func timeRenders(b *testing.B, ids, paths []string) time.Duration {
	b.Helper()
	start := time.Now()
	for i, id := range ids {
		t, err := sources.ReadTranscript(id, paths[i])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := render.Render(render.Input{SessionID: id, Spine: sources.BuildSpine(id, []*sources.Transcript{t}), Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// timeCatchUp runs the daemon with one worker until its catch-up is over
// and returns how long that took, and how long until the bottles were
// synced to disk (render.Batch); written is how many bottles it must have
// written.
func timeCatchUp(b *testing.B, claude, data string, written int) (time.Duration, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := New(Config{ClaudeDir: claude, DataDir: data, Workers: 1, Rescan: time.Hour})
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var took time.Duration
	for {
		if st := d.rec.snapshot(); st.CatchUp.Over && st.CatchUp.Total == catchUpSessions {
			took = time.Since(start)
			if st.Renders.Written != written || st.Renders.Failed != 0 {
				b.Errorf("catch-up wrote %d bottles (%d failed), want %d", st.Renders.Written, st.Renders.Failed, written)
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	for {
		if _, err := os.Stat(filepath.Join(render.BottlesDir(data), ".unsynced")); os.IsNotExist(err) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	synced := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return took, synced
}
