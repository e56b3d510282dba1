package watch

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
)

var waitingMB = flag.Int64("waiting.mb", 512, "size in MiB of the transcript BenchmarkWaitingForAWorker renders")

// BenchmarkWaitingForAWorker measures what a session costs while it waits
// for a worker: the daemon (in process, one worker) catches up on a
// -waiting.mb transcript (512 MiB by default) and a small one. In the
// "waiting" run, one line is appended to the small session once the big
// render is reading, so that a live change comes due while the only
// worker is busy; the "alone" run appends nothing. Both are timed from
// that moment until the catch-up is over and the small bottle is
// current. cpu-s is this process's CPU time (user and system) over that
// window, wall-s its length; clock-reads counts the daemon's reads of
// its clock (Config.Now), which the loop makes at every wake-up (and
// renders at their start and end). Target: the waiting run costs what
// the alone run costs, its CPU time within a few percent and its clock
// reads a handful more. Run it with
//
//	go test -run '^$' -bench WaitingForAWorker -benchtime 1x ./watch
func BenchmarkWaitingForAWorker(b *testing.B) {
	root := b.TempDir()
	claude := filepath.Join(root, "claude")
	const big, small = "b16b0000-0000-4000-8000-000000000001", "5a11e000-0000-4000-8000-000000000002"
	bigPath := filepath.Join(claude, "projects", "-big", big+".jsonl")
	smallPath := filepath.Join(claude, "projects", "-small", small+".jsonl")
	if err := os.MkdirAll(filepath.Dir(smallPath), 0o700); err != nil {
		b.Fatal(err)
	}
	if _, err := synth.File(bigPath, big, *waitingMB<<20, 1); err != nil {
		b.Fatal(err)
	}
	for n := 0; b.Loop(); n++ {
		var runs [2]waitRun
		for i, appendLine := range []bool{false, true} {
			rec := synth.Rec{Session: small, UUID: "u1", At: time.Now(), CWD: "/home/dev/small"}
			if err := os.WriteFile(smallPath, []byte(rec.User("WAITING-P1 first")), 0o600); err != nil {
				b.Fatal(err)
			}
			// The big session is the newest: the catch-up renders it first.
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(smallPath, old, old); err != nil {
				b.Fatal(err)
			}
			runs[i] = runWaiting(b, claude, filepath.Join(root, fmt.Sprintf("data%d-%d", n, i)), small, smallPath, appendLine)
		}
		alone, waiting := runs[0], runs[1]
		b.ReportMetric(alone.cpu.Seconds(), "alone-cpu-s")
		b.ReportMetric(waiting.cpu.Seconds(), "waiting-cpu-s")
		b.ReportMetric(alone.wall.Seconds(), "alone-wall-s")
		b.ReportMetric(waiting.wall.Seconds(), "waiting-wall-s")
		b.ReportMetric(float64(alone.reads), "alone-clock-reads")
		b.ReportMetric(float64(waiting.reads), "waiting-clock-reads")
		b.Logf("%d MiB render, one worker: alone %v CPU over %v (%d clock reads); with a session waiting for the worker %v CPU over %v (%d clock reads)",
			*waitingMB, alone.cpu.Round(time.Millisecond), alone.wall.Round(time.Millisecond), alone.reads,
			waiting.cpu.Round(time.Millisecond), waiting.wall.Round(time.Millisecond), waiting.reads)
	}
	b.ReportMetric(0, "ns/op")
}

// waitRun is what one run of BenchmarkWaitingForAWorker measured.
type waitRun struct {
	cpu, wall time.Duration
	reads     int64
}

// runWaiting runs the daemon with one worker on a fresh data directory
// until its catch-up is over and the small session's bottle shows what
// its transcript holds, appending a line to it (if told to) once the
// first render has read 8 MiB. It measures from then.
func runWaiting(b *testing.B, claude, data, small, smallPath string, appendLine bool) waitRun {
	b.Helper()
	var reads atomic.Int64
	now := func() time.Time {
		reads.Add(1)
		return time.Now()
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := New(Config{ClaudeDir: claude, DataDir: data, Workers: 1, Debounce: 10 * time.Millisecond, MaxWait: 50 * time.Millisecond,
		Rescan: time.Hour, Now: now})
	read0 := bytesRead(b)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	for bytesRead(b)-read0 < 8<<20 {
		time.Sleep(time.Millisecond)
	}
	var run waitRun
	cpu0, reads0, start := testbin.CPUTime(b), reads.Load(), time.Now()
	want := "WAITING-P1 first"
	if appendLine {
		want = "WAITING-P2 appended"
		rec := synth.Rec{Session: small, UUID: "u2", Parent: "u1", At: time.Now()}
		f, err := os.OpenFile(smallPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteString(rec.User(want))
		f.Close()
	}
	bottle := bottles.BottlePath(bottles.BottlesDir(data), small)
	for {
		if st := d.rec.snapshot(); st.CatchUp.Over && bottleHolds(bottle, want) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	run.cpu, run.reads, run.wall = testbin.CPUTime(b)-cpu0, reads.Load()-reads0, time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return run
}

func bottleHolds(path, text string) bool {
	data, err := os.ReadFile(path)
	return err == nil && bytes.Contains(data, []byte(text))
}
