package watch

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// catchUpRounds is how many times BenchmarkCatchUp times each of its
// phases, interleaved, so that its figures are medians of one run.
var catchUpRounds = flag.Int("catchup.rounds", 5,
	"rounds of BenchmarkCatchUp's render only, index only and catch-up, interleaved; it reports their medians")

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
// background).
//
// The overhead is a small difference of large figures, and one phase
// timed once moves by more than the target between runs, so each run
// times catchUpRounds rounds of the three phases, one after the other
// (render, index, catch-up, then again), and reports the median of each
// phase and the median of the rounds' overheads, each round's catch-up
// less that round's render and index; overhead-min and overhead-max are
// the extreme rounds, the spread a figure is read against. On 2 cores
// loaded four or five times over, one round's CPU overhead ranged over a
// millisecond per session, the median of back-to-back runs moved by up to
// 0.45 ms and that of runs over twenty minutes by 0.8 (9 rounds did no
// better than 5): other work slows even the CPU time of the same render by
// a third, and not for every phase alike. Every round
// writes its bottles and its index to directories of its own and none is
// removed until the end: a file system that has just freed many inodes
// makes the next files dearer to create (below), which would put one
// round's clean-up in the next round's overhead.
//
// files-ms/session is what writing the bottles before the
// index took (a temporary file each, renamed, no sync): the file system's
// share of the overhead, which no daemon avoids (on an ext4 without a
// journal, a new file's inode is looked for past every inode freed in the
// last minute, five while its inode table is not written back: a
// millisecond of CPU on a machine that deletes many files).
// overhead-less-files-ms/session (and -cpu-) is the median of the rounds'
// overheads less their files: the daemon's own share, less moved by what
// other processes deleted from the file system a minute before than
// files-cpu is (0.14 to 0.51 ms/session between runs on a shared machine).
// "fresh" starts the daemon again on the bottles a round's catch-up
// wrote, all current, and reports its catch-up per session (the median of
// the rounds, in wall and CPU time). "changed", once after the rounds,
// appends one turn to every transcript and starts the daemon again on the
// last round's bottles: each bottle is stale. The read-x metrics are the
// bytes the daemon read (rchar in /proc/self/io) over the bytes of the
// transcripts: a freshness check that reads a transcript in full costs
// one, and so does a render that parses it; catchup-read-x, where every
// session is rendered and none checked, is the baseline for
// changed-read-x.
// Target: overhead under 1 ms per session; on a machine that other work
// shares, the CPU figures are the ones to read. Run it with
//
//	go test -run '^$' -bench CatchUp -benchtime 1x ./watch
//
// (under a minute with 5 rounds; -catchup.rounds sets their number).
func BenchmarkCatchUp(b *testing.B) {
	if *catchUpRounds < 1 {
		b.Fatalf("-catchup.rounds %d: at least one round is needed", *catchUpRounds)
	}
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
		rounds := make([]catchUpRound, *catchUpRounds)
		var data string
		for r := range rounds {
			data = filepath.Join(root, fmt.Sprintf("data%d-%d", n, r))
			rounds[r] = timeCatchUpRound(b, claude, data, filepath.Join(root, fmt.Sprintf("alone%d-%d", n, r)), ids, paths)
			b.Logf("round %d: %v", r+1, rounds[r])
		}
		grown := writeCatchUpTranscripts(b, ids, paths, sizes) // one turn more each
		changed := timeCatchUp(b, claude, data, catchUpSessions)
		reportCatchUp(b, rounds, changed, total(sizes), total(grown))
	}
	b.ReportMetric(0, "ns/op")
}

// catchUpRound is what one round of BenchmarkCatchUp's phases took.
type catchUpRound struct {
	render, files, index spent
	full, fresh          catchUpRun
}

// timeCatchUpRound times the render alone, the index alone (in alone) and
// the daemon's catch-up (in data, then again over the bottles it wrote),
// and checks that the daemon wrote the bottles the render alone made.
func timeCatchUpRound(b *testing.B, claude, data, alone string, ids, paths []string) catchUpRound {
	b.Helper()
	var r catchUpRound
	var rendered [][]byte
	r.render, rendered = timeRenders(b, ids, paths)
	r.files, r.index = timeIndex(b, alone, ids, rendered)
	r.full = timeCatchUp(b, claude, data, catchUpSessions)
	sameBottles(b, data, ids, rendered)
	r.fresh = timeCatchUp(b, claude, data, 0)
	return r
}

// overhead is what the round's catch-up took beyond its render and its
// index.
func (r catchUpRound) overhead() spent {
	return spent{r.full.took - r.render.wall - r.index.wall, r.full.cpu - r.render.cpu - r.index.cpu}
}

func (r catchUpRound) String() string {
	ms := func(s spent) string {
		return fmt.Sprintf("%v (cpu %v)", s.wall.Round(time.Millisecond), s.cpu.Round(time.Millisecond))
	}
	return fmt.Sprintf("render only %s, index only %s, catch-up %s: overhead %s; files %s, catch-up over fresh bottles %v",
		ms(r.render), ms(r.index), ms(spent{r.full.took, r.full.cpu}), ms(r.overhead()), ms(r.files), r.fresh.took.Round(time.Millisecond))
}

// reportCatchUp reports the rounds' medians (and the overhead's extremes)
// per session, and the changed catch-up; transcripts and grown are the
// bytes of the transcripts before and after they grew a turn.
func reportCatchUp(b *testing.B, rounds []catchUpRound, changed catchUpRun, transcripts, grown int64) {
	b.Helper()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / catchUpSessions }
	report := func(name string, f func(catchUpRound) time.Duration) {
		b.ReportMetric(per(spreadOf(rounds, f).median), name+"-ms/session")
	}
	report("render", func(r catchUpRound) time.Duration { return r.render.wall })
	report("render-cpu", func(r catchUpRound) time.Duration { return r.render.cpu })
	report("index", func(r catchUpRound) time.Duration { return r.index.wall })
	report("index-cpu", func(r catchUpRound) time.Duration { return r.index.cpu })
	report("catchup", func(r catchUpRound) time.Duration { return r.full.took })
	report("catchup-cpu", func(r catchUpRound) time.Duration { return r.full.cpu })
	report("files", func(r catchUpRound) time.Duration { return r.files.wall })
	report("files-cpu", func(r catchUpRound) time.Duration { return r.files.cpu })
	report("fresh", func(r catchUpRound) time.Duration { return r.fresh.took })
	report("fresh-cpu", func(r catchUpRound) time.Duration { return r.fresh.cpu })
	wall := spreadOf(rounds, func(r catchUpRound) time.Duration { return r.overhead().wall })
	cpu := spreadOf(rounds, func(r catchUpRound) time.Duration { return r.overhead().cpu })
	lessFiles := spreadOf(rounds, func(r catchUpRound) time.Duration { return r.overhead().cpu - r.files.cpu })
	report("overhead-less-files", func(r catchUpRound) time.Duration { return r.overhead().wall - r.files.wall })
	for _, m := range []struct {
		name string
		d    time.Duration
	}{
		{"overhead", wall.median}, {"overhead-min", wall.min}, {"overhead-max", wall.max},
		{"overhead-cpu", cpu.median}, {"overhead-cpu-min", cpu.min}, {"overhead-cpu-max", cpu.max},
		{"overhead-less-files-cpu", lessFiles.median}, {"changed", changed.took}, {"changed-cpu", changed.cpu},
	} {
		b.ReportMetric(per(m.d), m.name+"-ms/session")
	}
	b.ReportMetric(spreadOf(rounds, func(r catchUpRound) time.Duration { return r.full.synced }).median.Seconds(), "synced-s")
	readX := func(f func(catchUpRound) int64) float64 {
		return float64(spreadOf(rounds, f).median) / float64(transcripts)
	}
	b.ReportMetric(readX(func(r catchUpRound) int64 { return r.full.read }), "catchup-read-x")
	b.ReportMetric(readX(func(r catchUpRound) int64 { return r.fresh.read }), "fresh-read-x")
	b.ReportMetric(float64(changed.read)/float64(grown), "changed-read-x")
	b.Logf("%d sessions of %d KB, %d rounds: overhead %.3f ms/session (%.3f to %.3f), in CPU time %.3f (%.3f to %.3f), %.3f of it beyond the files; "+
		"catch-up over bottles each a turn behind %v (read %d MB of %d MB)",
		catchUpSessions, catchUpSize>>10, len(rounds), per(wall.median), per(wall.min), per(wall.max), per(cpu.median), per(cpu.min), per(cpu.max),
		per(lessFiles.median), changed.took.Round(time.Millisecond), changed.read>>20, grown>>20)
}

// spread is the median and the extremes of a figure over the rounds.
type spread[T time.Duration | int64] struct{ median, min, max T }

// spreadOf is the spread of the figure f of each of rounds (at least one);
// the median of an even number of rounds is the mean of the middle two.
func spreadOf[T time.Duration | int64](rounds []catchUpRound, f func(catchUpRound) T) spread[T] {
	xs := make([]T, len(rounds))
	for i, r := range rounds {
		xs[i] = f(r)
	}
	slices.Sort(xs)
	n := len(xs)
	return spread[T]{median: (xs[(n-1)/2] + xs[n/2]) / 2, min: xs[0], max: xs[n-1]}
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

// TestSpreadOf checks the medians BenchmarkCatchUp reports: the middle
// round of an odd number, the mean of the middle two of an even number,
// whatever order the rounds came in.
func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		walls []time.Duration
		want  spread[time.Duration]
	}{
		{"one round", []time.Duration{7}, spread[time.Duration]{7, 7, 7}},
		{"odd, unsorted", []time.Duration{5, -3, 9, 1, 4}, spread[time.Duration]{4, -3, 9}},
		{"even", []time.Duration{8, 2, 6, 4}, spread[time.Duration]{5, 2, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rounds := make([]catchUpRound, len(tc.walls))
			for i, w := range tc.walls {
				rounds[i].render.wall = w
			}
			if got := spreadOf(rounds, func(r catchUpRound) time.Duration { return r.render.wall }); got != tc.want {
				t.Errorf("spreadOf(%v) = %+v, want %+v", tc.walls, got, tc.want)
			}
		})
	}
}
