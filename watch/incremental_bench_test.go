package watch

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// benchSize is the transcript the incremental benchmark appends to: a
// long session's worth.
const benchSize = 100 << 20

// benchSession writes a generated transcript of benchSize into a fresh
// Claude directory and returns a daemon (not running) that knows it.
func benchSession(b *testing.B) (*Daemon, string, string) {
	b.Helper()
	root := b.TempDir()
	d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data")})
	const id = "bench"
	path := filepath.Join(root, "claude", "projects", "p", id+".jsonl")
	if _, err := synth.File(path, id, benchSize, 1); err != nil {
		b.Fatal(err)
	}
	d.paths[id] = path
	return d, id, path
}

// appendTurn is one ~2 KB append: a prompt and its answer.
func appendTurn(b *testing.B, path, id string, n int) {
	b.Helper()
	text := fmt.Sprintf("appended prompt %d %0900d", n, n)
	line := fmt.Sprintf(`{"parentUuid":null,"type":"user","message":{"role":"user","content":%q},"uuid":"bench-u-%d","timestamp":"2026-03-02T10:00:00.000Z","sessionId":%q}`+"\n", text, n, id) +
		fmt.Sprintf(`{"parentUuid":"bench-u-%d","type":"assistant","message":{"id":"bench-m-%d","role":"assistant","content":[{"type":"text","text":%q}]},"uuid":"bench-a-%d","timestamp":"2026-03-02T10:00:01.000Z","sessionId":%q}`+"\n", n, n, text, n, id)
	growfile.Append(b, path, line)
}

// BenchmarkRender100MB compares, in one run, a render of a 100 MB
// transcript without parse state (the first render of a session, or a
// one-shot render) with the daemon's common case: one ~2 KB append to the
// same transcript, rendered from the kept parse state. "append" includes
// writing the bottle as the daemon does (write, rename; the syncs come a
// moment later, for all the bottles written meanwhile, see bottles.Batch);
// "append-cpu" stops at the rendered bytes, to separate the two costs;
// "append-indexed" times the search index's update beside the append.
func BenchmarkRender100MB(b *testing.B) {
	d, id, path := benchSession(b)
	n := 0
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			if res := d.renderSession(context.Background(), &session{id: id}, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
		}
	})
	s := &session{id: id}
	if res := d.renderSession(context.Background(), s, false); res.err != nil {
		b.Fatal(res.err)
	}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			if res := d.renderSession(context.Background(), s, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
		}
	})
	// The search index's update after each append, timed apart from the
	// append itself in the same iteration, so that both see the same
	// bottle: index-ms against append-ms.
	b.Run("append-indexed", func(b *testing.B) {
		ix, err := index.Open(context.Background(), d.cfg.DataDir, index.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		var appendNs, indexNs time.Duration
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			start := time.Now()
			if res := d.renderSession(context.Background(), s, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
			mid := time.Now()
			data, err := os.ReadFile(bottles.BottlePath(d.store.Dir, id))
			if err != nil {
				b.Fatal(err)
			}
			mid2 := time.Now()
			if err := ix.Put(context.Background(), id+".md", data); err != nil {
				b.Fatal(err)
			}
			appendNs += mid.Sub(start)
			indexNs += time.Since(mid2)
		}
		b.ReportMetric(float64(appendNs.Microseconds())/1e3/float64(b.N), "append-ms")
		b.ReportMetric(float64(indexNs.Microseconds())/1e3/float64(b.N), "index-ms")
		b.ReportMetric(float64(indexNs)/float64(appendNs), "index/append")
		if info, err := os.Stat(bottles.BottlePath(d.store.Dir, id)); err == nil {
			b.ReportMetric(float64(info.Size())/1e6, "bottle-MB")
		}
	})
	b.Run("append-whole", func(b *testing.B) { appendWhole(b, d, id, path, &n) })
	b.Run("append-phases", func(b *testing.B) { appendPhases(b, d, s, id, path, &n) })
	b.Run("append-cpu", func(b *testing.B) {
		t := s.chain[len(s.chain)-1]
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			if _, err := t.Update(); err != nil {
				b.Fatal(err)
			}
			in := render.Input{SessionID: id, Spine: s.spine.Build(id, s.chain), Now: time.Now(), Cache: &s.cache}
			if _, err := render.Render(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// appendWhole times the whole work of one append as the daemon does it
// (the new bytes parsed, the bottle rendered, written and indexed:
// renderSession with the index open; then, once the appends stop, the
// batch's sync, counted in the appends' time) against a full render of
// the same session in the same run (parse state dropped, the bottle
// rendered and written; fullRenders of them before the appends and as
// many after, the median), in wall time and in the process's CPU time,
// which a busy machine does not inflate. Target: append/full ≤ 5 %.
// The batch is synced after every spellAppends appends, as a spell of a
// live session's renders is; disk-MB/append is what reached the disk, or
// will (toDisk), the search index's writes included. alone-ms is an append the batch syncs before the next (one after a
// quiet spell, followed by another: a live session's bottle is synced
// once per spell, see DefaultSyncQuiet), the median of aloneAppends.
func appendWhole(b *testing.B, d *Daemon, id, path string, n *int) {
	ctx := context.Background()
	ix, err := index.Open(ctx, d.cfg.DataDir, index.Options{Location: time.Local})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	const fullRenders = 3
	var fulls, fullCPUs []time.Duration
	full := func() {
		for range fullRenders {
			appendTurn(b, path, id, *n)
			*n++
			start, cpu0 := time.Now(), testbin.CPUTime(b)
			if res := d.renderSession(ctx, &session{id: id}, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
			fulls, fullCPUs = append(fulls, time.Since(start)), append(fullCPUs, testbin.CPUTime(b)-cpu0)
		}
	}
	full()
	s := &session{id: id}
	if res := d.renderSession(ctx, s, false); res.err != nil {
		b.Fatal(res.err)
	}
	d.index.Store(ix)
	defer d.index.Store(nil)
	if err := ix.Put(ctx, id+".md", nil); err != nil {
		b.Fatal(err)
	}
	appendOnce := func(sync bool) (wall, cpu time.Duration) {
		appendTurn(b, path, id, *n)
		*n++
		start, cpu0 := time.Now(), testbin.CPUTime(b)
		if res := d.renderSession(ctx, s, false); res.err != nil || res.outcome != outcomeWritten {
			b.Fatal(res.err, res.outcome)
		}
		if sync {
			syncBatch(b, d)
		}
		return time.Since(start), testbin.CPUTime(b) - cpu0
	}
	const aloneAppends = 9
	var alones []time.Duration
	for range aloneAppends {
		wall, _ := appendOnce(true)
		alones = append(alones, wall)
	}
	var wall, cpu time.Duration
	appends, disk0 := 0, toDisk(b)
	for b.Loop() {
		appends++
		w, c := appendOnce(appends%*spellAppends == 0)
		wall, cpu = wall+w, cpu+c
	}
	if appends%*spellAppends != 0 {
		start, cpu0 := time.Now(), testbin.CPUTime(b)
		syncBatch(b, d)
		wall, cpu = wall+time.Since(start), cpu+testbin.CPUTime(b)-cpu0
	}
	disk := toDisk(b)
	d.index.Store(nil)
	full()
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	replaces, replaceCPUs := replaceAlone(b, d.store.Dir, id)
	perOp := func(d time.Duration) time.Duration { return d / time.Duration(b.N) }
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(ms(perOp(wall)), "append-ms")
	b.ReportMetric(ms(median(fulls)), "full-ms")
	b.ReportMetric(100*float64(perOp(wall))/float64(median(fulls)), "append/full-%")
	b.ReportMetric(ms(perOp(cpu)), "append-cpu-ms")
	b.ReportMetric(ms(median(fullCPUs)), "full-cpu-ms")
	b.ReportMetric(100*float64(perOp(cpu))/float64(median(fullCPUs)), "append/full-cpu-%")
	if disk0 >= 0 && disk >= 0 {
		b.ReportMetric(float64(disk-disk0)/1e6/float64(appends), "disk-MB/append")
	}
	b.ReportMetric(ms(median(alones)), "alone-ms")
	b.ReportMetric(100*float64(median(alones))/float64(median(fulls)), "alone/full-%")
	b.ReportMetric(ms(median(replaces)), "replace-ms")
	b.ReportMetric(ms(median(replaceCPUs)), "replace-cpu-ms")
}

// syncBatch syncs the batch's bottles and removes its marker, as the
// daemon's syncer does once a spell of writes is over.
func syncBatch(b *testing.B, d *Daemon) {
	b.Helper()
	if !d.syncBatch() {
		b.Fatal("the batch's sync or the marker's removal failed (see the log)")
	}
}

// toDisk is how many bytes this process has sent, or will send, to the
// disk: those it wrote to the page cache less those it removed before
// they were written back (a file deleted or replaced while dirty); -1
// where the system does not count them (no /proc/self/io).
func toDisk(b *testing.B) int64 {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		return -1
	}
	return procIO(b, "write_bytes") - procIO(b, "cancelled_write_bytes")
}

// spellAppends is how many renders of a session a sync of its bottle
// comes after, on average, with DefaultSyncQuiet: in the transcripts of
// 49 real sessions 89 % of the renders came within 30 s of the one
// before, so a spell of renders with no 30 s gap is 1/0.11 ≈ 9 long.
// 1 syncs after every append.
var spellAppends = flag.Int("append.spell", 9, "how many appends BenchmarkRender100MB/append-whole syncs the bottle after")

// replaceAlone times what the file system alone costs an append synced on
// its own: a file the size of the session's bottle written, put in place
// of a synced one of that size in the bottles directory
// (safefile.Replace), then synced with the directory, as Batch.Put and
// Batch.Sync do, but with nothing rendered, read or indexed. It returns
// the wall and CPU times of 21 such replacements, for the median: writing
// the bottle to the disk, and freeing the blocks of the one it replaces
// (at once, on a file system mounted with discard), grows with the bottle,
// not with the append.
func replaceAlone(b *testing.B, dir, id string) (walls, cpus []time.Duration) {
	b.Helper()
	info, err := os.Stat(bottles.BottlePath(dir, id))
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, info.Size())
	dst := filepath.Join(dir, ".replace-alone")
	defer os.Remove(dst)
	if err := safefile.Write(dst, data); err != nil {
		b.Fatal(err)
	}
	for range 21 {
		start, cpu0 := time.Now(), testbin.CPUTime(b)
		tmp, _, err := safefile.WriteTemp(dir, safefile.TempPrefix+"replace-alone-*", data, false)
		if err == nil {
			err = safefile.Replace(tmp, dst)
		}
		if err == nil {
			err = safefile.SyncFile(dst)
		}
		if err == nil {
			err = safefile.SyncDir(dir)
		}
		if err != nil {
			b.Fatal(err)
		}
		walls, cpus = append(walls, time.Since(start)), append(cpus, testbin.CPUTime(b)-cpu0)
	}
	return walls, cpus
}

// appendPhases splits the work of one append into its phases, each
// timed apart, as renderSession and the daemon's syncer do them: reading
// the appended bytes ("parse-ms"), building the conversation, from the
// appended records when they only extend it ("spine-ms"), rendering the bottle, its unchanged turns copied
// from the session's render cache ("render-ms"), writing it
// ("write-ms"), syncing it and removing the crash marker once per
// spellAppends, as the syncer does ("sync-ms", its share of each
// append) and indexing it ("index-ms"), in wall time and in the
// process's CPU time ("parse-cpu-ms", …).
func appendPhases(b *testing.B, d *Daemon, s *session, id, path string, n *int) {
	ctx := context.Background()
	ix, err := index.Open(ctx, d.cfg.DataDir, index.Options{Location: time.Local})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Put(ctx, id+".md", nil); err != nil {
		b.Fatal(err)
	}
	phases := []string{"parse-ms", "spine-ms", "render-ms", "write-ms", "sync-ms", "index-ms"}
	spent, cpus := make([]time.Duration, len(phases)), make([]time.Duration, len(phases))
	appends := 0
	for b.Loop() {
		appendTurn(b, path, id, *n)
		*n++
		var at [7]time.Time
		var cpu [7]time.Duration
		mark := func(i int) { at[i], cpu[i] = time.Now(), testbin.CPUTime(b) }
		mark(0)
		for _, t := range s.chain {
			if _, err := t.Update(); err != nil {
				b.Fatal(err)
			}
		}
		mark(1)
		in := render.Input{SessionID: id, Spine: s.spine.Build(id, s.chain), Now: time.Now(), Location: time.Local, Rules: d.rulesNow(), Cache: &s.cache}
		mark(2)
		bt, err := render.Render(in)
		if err != nil {
			b.Fatal(err)
		}
		mark(3)
		if res, err := d.batch.Put(bt, false); err != nil || res.Outcome != bottles.Written {
			b.Fatal(res.Outcome, err)
		}
		mark(4)
		if appends++; appends%*spellAppends == 0 {
			syncBatch(b, d)
		}
		mark(5)
		if err := ix.Put(ctx, id+".md", bt.Bytes); err != nil {
			b.Fatal(err)
		}
		bt.Release() // as renderSession does
		mark(6)
		for i := range phases {
			spent[i] += at[i+1].Sub(at[i])
			cpus[i] += cpu[i+1] - cpu[i]
		}
	}
	for i, p := range phases {
		b.ReportMetric(float64(spent[i].Microseconds())/1e3/float64(b.N), p)
		b.ReportMetric(float64(cpus[i].Microseconds())/1e3/float64(b.N), strings.Replace(p, "-ms", "-cpu-ms", 1))
	}
}
