package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
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
// session. "changed" appends one turn to every transcript and starts the
// daemon again: each bottle is stale. The read-x metrics are the bytes the
// daemon read (rchar in /proc/self/io) over the bytes of the transcripts:
// a freshness check that reads a transcript in full costs one, and so does
// a render that parses it; catchup-read-x, where every session is rendered
// and none checked, is the baseline for changed-read-x.
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
	}
	for n := 0; b.Loop(); n++ {
		sizes := writeCatchUpTranscripts(b, ids, paths, nil)
		renderOnly := timeRenders(b, ids, paths)
		data := filepath.Join(root, fmt.Sprintf("data%d", n))
		full := timeCatchUp(b, claude, data, catchUpSessions)
		fresh := timeCatchUp(b, claude, data, 0)
		grown := writeCatchUpTranscripts(b, ids, paths, sizes) // one turn more each
		changed := timeCatchUp(b, claude, data, catchUpSessions)
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / catchUpSessions }
		b.ReportMetric(per(renderOnly), "render-ms/session")
		b.ReportMetric(per(full.took), "catchup-ms/session")
		b.ReportMetric(per(full.took-renderOnly), "overhead-ms/session")
		b.ReportMetric(per(fresh.took), "fresh-ms/session")
		b.ReportMetric(per(changed.took), "changed-ms/session")
		b.ReportMetric(full.synced.Seconds(), "synced-s")
		b.ReportMetric(float64(full.read)/float64(total(sizes)), "catchup-read-x")
		b.ReportMetric(float64(fresh.read)/float64(total(sizes)), "fresh-read-x")
		b.ReportMetric(float64(changed.read)/float64(total(grown)), "changed-read-x")
		b.Logf("%d sessions of %d KB: render only %v, catch-up %v (read %d MB of %d MB of transcripts; every bottle on disk, synced, after %v), "+
			"catch-up over fresh bottles %v (read %d MB), over bottles each a turn behind %v (read %d MB of %d MB)",
			catchUpSessions, catchUpSize>>10, renderOnly.Round(time.Millisecond), full.took.Round(time.Millisecond), full.read>>20, total(sizes)>>20,
			full.synced.Round(time.Millisecond), fresh.took.Round(time.Millisecond), fresh.read>>20,
			changed.took.Round(time.Millisecond), changed.read>>20, total(grown)>>20)
	}
	b.ReportMetric(0, "ns/op")
}

// writeCatchUpTranscripts writes every session's synthetic transcript, of
// catchUpSize bytes or, given the sizes they had, of one turn more (the
// same records, then one more turn), and returns their sizes.
func writeCatchUpTranscripts(b *testing.B, ids, paths []string, had []int64) []int64 {
	b.Helper()
	sizes := make([]int64, len(ids))
	for i, id := range ids {
		size := int64(catchUpSize)
		if had != nil {
			size = had[i] + 1
		}
		f, err := os.Create(paths[i])
		if err != nil {
			b.Fatal(err)
		}
		st, err := synth.Transcript(f, id, size, uint64(i)+1)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		sizes[i] = st.Bytes
	}
	return sizes
}

func total(sizes []int64) (n int64) {
	for _, s := range sizes {
		n += s
	}
	return n
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

// catchUpRun is what one catch-up took.
type catchUpRun struct {
	took   time.Duration // until the catch-up was over
	synced time.Duration // until its bottles were synced to disk (bottles.Batch)
	read   int64         // bytes read meanwhile (rchar)
}

// timeCatchUp runs the daemon with one worker until its catch-up is over
// and its bottles synced; written is how many bottles it must have
// written.
func timeCatchUp(b *testing.B, claude, data string, written int) catchUpRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := New(Config{ClaudeDir: claude, DataDir: data, Workers: 1, Rescan: time.Hour})
	read0 := bytesRead(b)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var run catchUpRun
	for {
		if st := d.rec.snapshot(); st.CatchUp.Over && st.CatchUp.Total == catchUpSessions {
			run.took, run.read = time.Since(start), bytesRead(b)-read0
			if st.Renders.Written != written || st.Renders.Failed != 0 {
				b.Errorf("catch-up wrote %d bottles (%d failed), want %d", st.Renders.Written, st.Renders.Failed, written)
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	for {
		if _, err := os.Stat(bottles.Open(data, nil, nil).UnsyncedMarker()); os.IsNotExist(err) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	run.synced = time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return run
}

// bytesRead is how many bytes this process has read so far (rchar in
// /proc/self/io: read calls, whether or not they reached the disk).
func bytesRead(b *testing.B) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skipf("no /proc/self/io here: %v", err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "rchar:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatalf("/proc/self/io: %q", line)
			}
			return n
		}
	}
	b.Fatalf("no rchar in /proc/self/io")
	return 0
}
