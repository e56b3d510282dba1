package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// Catch-up benchmark sizes: the shape of a machine that was off for a day,
// 400 sessions of about 0.58 MB each.
const (
	catchUpSessions = 400
	catchUpSize     = 580 << 10
)

// BenchmarkCatchUp measures what the start-up catch-up costs per session
// beyond rendering and indexing, as a user meets it: the daemon (in
// process, one worker, so that times add up) is started on
// catchUpSessions transcripts without bottles and timed until the last
// bottle is on disk and in the search index ("catch-up"); in the same run
// the same sessions are parsed and rendered without writing anything
// ("render"), and their bottles indexed into an index of their own
// ("index", the bottles written to disk beforehand). Each of these starts
// after a garbage collection and a sync of the disks, so that none pays
// for another's garbage or another's writes (see settle).
// overhead-ms/session is (catch-up − render − index) / sessions, in wall
// time, and overhead-cpu-ms/session the same in the process's CPU time,
// which a busy machine does not inflate: finding
// the transcripts, the freshness check, the claude-mem lookup, the bottle
// write, the index's transactions and what durability costs on the way
// (synced-s is when the last bottle was synced to disk, in the
// background). files-ms/session is what writing the bottles before the
// index took (a temporary file each, renamed, no sync): the file system's
// share of the overhead, which no daemon avoids (on an ext4 without a
// journal, a new file's inode is looked for past every inode freed in the
// last minute, five while its inode table is not written back: a
// millisecond of CPU on a machine that deletes many files).
// "fresh" starts the daemon again on the bottles it wrote,
// all current, and reports its catch-up per session. "changed" appends one
// turn to every transcript and starts the daemon again: each bottle is
// stale. The read-x metrics are the bytes the daemon read (rchar in
// /proc/self/io) over the bytes of the transcripts: a freshness check that
// reads a transcript in full costs one, and so does a render that parses
// it; catchup-read-x, where every session is rendered and none checked, is
// the baseline for changed-read-x.
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
		renderSpent, rendered := timeRenders(b, ids, paths)
		filesSpent, indexSpent := timeIndex(b, filepath.Join(root, fmt.Sprintf("alone%d", n)), ids, rendered)
		data := filepath.Join(root, fmt.Sprintf("data%d", n))
		full := timeCatchUp(b, claude, data, catchUpSessions)
		sameBottles(b, data, ids, rendered)
		fresh := timeCatchUp(b, claude, data, 0)
		grown := writeCatchUpTranscripts(b, ids, paths, sizes) // one turn more each
		changed := timeCatchUp(b, claude, data, catchUpSessions)
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / catchUpSessions }
		cpuRender, cpuIndex := renderSpent.cpu, indexSpent.cpu
		renderOnly, indexOnly := renderSpent.wall, indexSpent.wall
		b.ReportMetric(per(renderOnly), "render-ms/session")
		b.ReportMetric(per(full.took), "catchup-ms/session")
		b.ReportMetric(per(indexOnly), "index-ms/session")
		b.ReportMetric(per(full.took-renderOnly-indexOnly), "overhead-ms/session")
		b.ReportMetric(per(full.cpu-cpuRender-cpuIndex), "overhead-cpu-ms/session")
		b.ReportMetric(per(filesSpent.wall), "files-ms/session")
		b.ReportMetric(per(filesSpent.cpu), "files-cpu-ms/session")
		b.ReportMetric(per(fresh.took), "fresh-ms/session")
		b.ReportMetric(per(changed.took), "changed-ms/session")
		b.ReportMetric(full.synced.Seconds(), "synced-s")
		b.ReportMetric(float64(full.read)/float64(total(sizes)), "catchup-read-x")
		b.ReportMetric(float64(fresh.read)/float64(total(sizes)), "fresh-read-x")
		b.ReportMetric(float64(changed.read)/float64(total(grown)), "changed-read-x")
		b.Logf("%d sessions of %d KB: render only %v, index only %v, catch-up %v (read %d MB of %d MB of transcripts; every bottle on disk, synced, after %v), "+
			"catch-up over fresh bottles %v (read %d MB), over bottles each a turn behind %v (read %d MB of %d MB)",
			catchUpSessions, catchUpSize>>10, renderOnly.Round(time.Millisecond), indexOnly.Round(time.Millisecond), full.took.Round(time.Millisecond), full.read>>20, total(sizes)>>20,
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
		st, err := synth.File(paths[i], id, size, uint64(i)+1)
		if err != nil {
			b.Fatal(err)
		}
		sizes[i] = st.Bytes
	}
	return sizes
}

// sameBottles checks that the daemon wrote the bottles the render alone
// made, so that the baseline did the same work: the same lines, but for
// the header's render time and the state line (its render time, and the
// transcript's modification time, which is recorded once settled).
func sameBottles(b *testing.B, data string, ids []string, rendered [][]byte) {
	b.Helper()
	store := bottles.Open(data, nil, nil)
	for i, id := range ids {
		got, err := os.ReadFile(store.Path(id))
		if err != nil {
			b.Fatal(err)
		}
		if a, d := bottleBody(rendered[i]), bottleBody(got); a != d {
			b.Fatalf("the daemon's bottle of %s is not the one the render alone made (%d bytes against %d)", id, len(d), len(a))
		}
	}
}

// bottleBody is a bottle without its render-time lines: the header's
// second line and the state line, the fourth.
func bottleBody(bottle []byte) string {
	lines := strings.SplitAfterN(string(bottle), "\n", 5)
	if len(lines) < 5 {
		return string(bottle)
	}
	return lines[0] + lines[2] + lines[4]
}

func total(sizes []int64) (n int64) {
	for _, s := range sizes {
		n += s
	}
	return n
}

// spent is the wall time and the CPU time (of the whole process) some
// work took.
type spent struct{ wall, cpu time.Duration }

// since is what was spent since start, at CPU time cpu0 (cpuTime): unlike
// wall time, CPU time does not grow with the other work of a busy
// machine.
func since(b *testing.B, start time.Time, cpu0 time.Duration) spent {
	return spent{time.Since(start), testbin.CPUTime(b) - cpu0}
}

// timeRenders parses and renders every session as the daemon does,
// writing nothing, and returns the bottles.
func timeRenders(b *testing.B, ids, paths []string) (spent, [][]byte) {
	b.Helper()
	rendered := make([][]byte, len(ids))
	settle()
	start, cpu0 := time.Now(), testbin.CPUTime(b)
	for i, id := range ids {
		t, err := sources.ReadTranscript(id, paths[i])
		if err != nil {
			b.Fatal(err)
		}
		in := render.Input{SessionID: id, Spine: sources.BuildSpine(id, []*sources.Transcript{t}), Now: time.Now(), Location: time.Local}
		bt, err := render.Render(in)
		if err != nil {
			b.Fatal(err)
		}
		rendered[i] = bt.Bytes
	}
	return since(b, start, cpu0), rendered
}

// timeIndex indexes the bottles into a new search index in data, one Put
// each as the daemon does: the index is opened (built, empty) first, then
// the bottles are written, timed apart ("files": a temporary file each,
// renamed, as bottles.Store writes them, without a sync), then indexed.
func timeIndex(b *testing.B, data string, ids []string, rendered [][]byte) (files, indexed spent) {
	b.Helper()
	ctx := context.Background()
	ix, err := index.Open(ctx, data, index.Options{Location: time.Local})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	store := bottles.Open(data, nil, nil)
	if err := os.MkdirAll(store.Dir, 0o700); err != nil {
		b.Fatal(err)
	}
	settle()
	start, cpu0 := time.Now(), testbin.CPUTime(b)
	for i, id := range ids {
		tmp, _, err := safefile.WriteTemp(store.Dir, safefile.TempPrefix+id+"-*.md", rendered[i], false)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, store.Path(id)); err != nil {
			b.Fatal(err)
		}
	}
	files = since(b, start, cpu0)
	settle()
	start, cpu0 = time.Now(), testbin.CPUTime(b)
	for i, id := range ids {
		if err := ix.Put(ctx, id+".md", rendered[i]); err != nil {
			b.Fatal(err)
		}
	}
	return files, since(b, start, cpu0)
}

// catchUpRun is what one catch-up took.
type catchUpRun struct {
	took   time.Duration // until the catch-up was over, every bottle indexed
	cpu    time.Duration // the CPU time the process used meanwhile
	synced time.Duration // until its bottles were synced to disk (bottles.Batch)
	read   int64         // bytes read meanwhile (rchar)
}

// timeCatchUp runs the daemon with one worker until its catch-up is over
// and its bottles synced; written is how many bottles it must have
// written. It logs at Info, as bottled run does, and learns from the log
// when the catch-up is over and the index ready, rather than by asking for
// the daemon's status again and again: a status copies what the daemon
// knows of every session, and a millisecond's polling cost as much CPU as
// a tenth of the overhead measured.
func timeCatchUp(b *testing.B, claude, data string, written int) catchUpRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	over := &catchUpOver{caughtUp: make(chan struct{}), ready: make(chan struct{})}
	// Its bottles are synced as soon as the catch-up is over (syncNow
	// below): the sync's work is the catch-up's, counted in synced-s,
	// without the wait of DefaultSyncQuiet, which a user does not see.
	d := New(Config{ClaudeDir: claude, DataDir: data, Workers: 1, Rescan: time.Hour, SyncQuiet: time.Hour, Logger: slog.New(over)})
	settle()
	read0 := bytesRead(b)
	start, cpu0 := time.Now(), testbin.CPUTime(b)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var run catchUpRun
	for _, ch := range []chan struct{}{over.caughtUp, over.ready} {
		select {
		case <-ch:
		case err := <-done:
			b.Fatalf("the daemon stopped before its catch-up was over: %v", err)
		case <-time.After(catchUpTimeout):
			b.Fatalf("no catch-up over and index ready after %v", catchUpTimeout)
		}
	}
	run.took, run.cpu, run.read = time.Since(start), testbin.CPUTime(b)-cpu0, bytesRead(b)-read0
	// The log line comes just before the status says so.
	for st := d.rec.snapshot(); !st.CatchUp.Over || st.Search.State != SearchReady; st = d.rec.snapshot() {
		time.Sleep(time.Millisecond)
	}
	if st := d.rec.snapshot(); st.Renders.Written != written || st.Renders.Failed != 0 || st.CatchUp.Total != catchUpSessions {
		b.Errorf("catch-up of %d sessions wrote %d bottles (%d failed), want %d of %d", st.CatchUp.Total, st.Renders.Written, st.Renders.Failed, written, catchUpSessions)
	}
	signal(d.syncNow)
	for d.batch.Pending() > 0 {
		time.Sleep(time.Millisecond)
	}
	run.synced = time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return run
}

// settle readies the process and the disk for a timed part of the
// benchmark: what ran before leaves no garbage to collect and no data
// to write back, which the daemon's syncs (a syncfs of the whole file
// system, see bottles.Batch) would otherwise write for the benchmark,
// in its CPU time.
func settle() {
	runtime.GC()
	syscall.Sync()
}

// catchUpTimeout bounds one catch-up of the benchmark: minutes beyond the
// seconds it takes on a busy machine.
const catchUpTimeout = 10 * time.Minute

// catchUpOver is a log handler, at Info like bottled run's, that writes
// nothing and closes caughtUp when the daemon logs that its catch-up is
// over, ready when it logs that the search index is ready.
type catchUpOver struct {
	caughtUp, ready chan struct{}
	once            [2]sync.Once
}

func (h *catchUpOver) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *catchUpOver) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "caught up":
		h.once[0].Do(func() { close(h.caughtUp) })
	case "search index ready":
		h.once[1].Do(func() { close(h.ready) })
	}
	return nil
}

func (h *catchUpOver) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *catchUpOver) WithGroup(string) slog.Handler      { return h }

// bytesRead is how many bytes this process has read so far (rchar in
// /proc/self/io: read calls, whether or not they reached the disk).
func bytesRead(b *testing.B) int64 { return procIO(b, "rchar") }

// procIO returns a counter of this process's I/O from /proc/self/io
// (skipping the benchmark where there is none).
func procIO(b *testing.B, field string) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skipf("no /proc/self/io here: %v", err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatalf("/proc/self/io: %q", line)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/io", field)
	return 0
}
