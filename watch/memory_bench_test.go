package watch_test

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/waitfor"
)

var memIdle = flag.Duration("mem.idle", 60*time.Second,
	"how long BenchmarkMemoryCeiling leaves the daemon idle before reading its resident memory")

// BenchmarkMemoryCeiling measures the daemon's memory with one huge
// session, with the real binary and its default settings:
//
//   - 1GB: a generated 1 GB transcript (the shape of a real long session:
//     mostly tool results), rendered at catch-up, then one turn appended
//     and rendered from the kept parse state;
//   - 200MB-line: a small session with one 200 MB line (a tool result, as
//     real giant lines are), then a prompt after it.
//
// It reports the daemon's peak resident memory (VmHWM, peak-MB), its
// resident memory once the bottle is written (rss-MB) and after
// -mem.idle of nothing happening (idle-rss-MB, 60 s by default), in MiB.
// The files are generated in a temporary directory (about 1.2 GB of disk)
// and removed at the end. Run it with
//
//	go test -run '^$' -bench MemoryCeiling -benchtime 1x ./watch [-mem.idle 60s]
func BenchmarkMemoryCeiling(b *testing.B) {
	b.Run("1GB", func(b *testing.B) {
		benchMemory(b, func(path, id string) string {
			if _, err := synth.File(path, id, 1<<30, 42); err != nil {
				b.Fatal(err)
			}
			return ""
		})
	})
	b.Run("200MB-line", func(b *testing.B) {
		benchMemory(b, func(path, id string) string {
			writeHugeLine(b, path, id, 200<<20)
			return "MEMBENCH-AFTER the prompt after the huge line"
		})
	})
}

// benchMemory writes a transcript with gen (which returns a text the
// bottle must show, if any), starts the daemon on it and measures.
func benchMemory(b *testing.B, gen func(path, id string) string) {
	root := b.TempDir()
	claude, data := filepath.Join(root, "claude"), filepath.Join(root, "mem")
	const id = "3e3e0000-0000-4000-8000-000000000001"
	path := transcriptIn(b, claude, "-home-dev-big", id)
	want := gen(path, id)
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d := startDaemon(b, claude, data, "--debounce", "250ms", "--max-wait", "2s", "--rescan", "30s")
		began := time.Now()
		waitfor.Within(b, 10*time.Minute, "catch-up is over", func() bool {
			st, err := d.status()
			return err == nil && st.CatchUp.Over
		})
		took := time.Since(began)
		if want != "" {
			d.waitContains(id, want)
		}
		st, err := bottles.ReadState(bottles.BottlePath(bottles.BottlesDir(data), id))
		if err != nil || st.Transcripts[len(st.Transcripts)-1].Offset != info.Size() {
			b.Fatalf("the bottle does not cover the transcript: state %+v, err %v", st, err)
		}
		pid := d.cmd.Process.Pid
		rss := memoryKB(b, pid, "VmRSS")
		appended := time.Now()
		synth.Append(b, path, userRec(id, "membench-u", "", "MEMBENCH-APPENDED one more prompt"))
		d.waitContains(id, "MEMBENCH-APPENDED")
		appendTook := time.Since(appended)
		time.Sleep(*memIdle)
		idle, hwm := memoryKB(b, pid, "VmRSS"), memoryKB(b, pid, "VmHWM")
		if code := d.stop(); code != 0 {
			b.Errorf("daemon exit code %d after SIGTERM, want 0", code)
		}
		b.Logf("%.0f MB transcript: catch-up %v, append rendered in %v; RSS %d kB after catch-up, %d kB after %v idle, peak %d kB",
			float64(info.Size())/(1<<20), took.Round(time.Millisecond), appendTook.Round(time.Millisecond), rss, idle, *memIdle, hwm)
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(hwm)/1024, "peak-MB")
		b.ReportMetric(float64(rss)/1024, "rss-MB")
		b.ReportMetric(float64(idle)/1024, "idle-rss-MB")
	}
}

// writeHugeLine writes a session of a prompt, a tool call, a result of n
// bytes on one line, and a prompt after it.
func writeHugeLine(b *testing.B, path, id string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(userRec(id, "u1", "", "MEMBENCH-BEFORE read the big file"))
	w.WriteString(toolUseRec(id, "a1", "u1", "m1", "toolu_HUGE"))
	// The result, streamed: the prefix of a ToolResult record, n bytes of
	// output, the rest of the record.
	rec := synth.Rec{Session: id, UUID: "r1", Parent: "a1", At: time.Now()}.ToolResult("toolu_HUGE", "@@OUTPUT@@")
	head, tail, _ := strings.Cut(rec, "@@OUTPUT@@")
	tail = strings.Replace(tail, "@@OUTPUT@@", "", 1) // toolUseResult carries it too; keep one copy
	w.WriteString(head)
	line := strings.Repeat("x", 99) + `\n`
	for written := 0; written < n; written += len(line) {
		w.WriteString(line)
	}
	w.WriteString(tail)
	w.WriteString(assistantRec(id, "a2", "r1", "m2", "Read it."))
	w.WriteString(userRec(id, "u2", "a2", "MEMBENCH-AFTER the prompt after the huge line"))
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
