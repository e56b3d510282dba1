package watch_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/watch"
)

var idleDuration = flag.Duration("idle.duration", 60*time.Second,
	"how long BenchmarkIdle watches the daemon do nothing")

const (
	idleSessions = 1000
	idleProjects = 50
	clockTicks   = 100 // USER_HZ: getconf CLK_TCK
)

// BenchmarkIdle measures what the daemon costs when nothing happens: 1,000
// small transcripts (a few KB each, in 50 project directories) with
// current bottles, the daemon started on them with its default timings and
// its start-up catch-up over (its bottles synced), then nothing changes for -idle.duration
// (60 s by default). It reports the daemon's CPU time over that window as
// a percentage of one core, from the run time of each of its threads in
// /proc/<pid>/task/*/schedstat (ns; cpu-pct) and from utime+stime in
// /proc/<pid>/stat (10 ms ticks; cpu-stat-pct), how often its threads were
// scheduled (wakeups/s), and its resident memory at the end (rss-MB,
// VmRSS) and at its peak, the catch-up included (rss-peak-MB, VmHWM), in
// MiB. Targets: CPU ≤ 0.5 % of a core, RSS ≤ 60 MB. Nothing is asserted
// about them; no claude-mem database is present. Run it with
//
//	go test -run '^$' -bench Idle -benchtime 1x ./watch [-idle.duration 60s]
func BenchmarkIdle(b *testing.B) {
	root := b.TempDir()
	claude, data := filepath.Join(root, "claude"), filepath.Join(root, "mem")
	var total int64
	for i := range idleSessions {
		id := fmt.Sprintf("1d1e0000-0000-4000-8000-%012d", i)
		path := transcriptIn(b, claude, fmt.Sprintf("-home-dev-proj%02d", i%idleProjects), id)
		c := newConvo(id, uint64(i)+1)
		var sb strings.Builder
		for range 1 + c.rng.IntN(3) {
			for _, l := range c.turn(smallTurn, nil) {
				sb.WriteString(l.text)
			}
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
			b.Fatal(err)
		}
		total += int64(sb.Len())
	}
	b.Logf("%d transcripts in %d project directories, %.1f KB each on average", idleSessions, idleProjects, float64(total)/idleSessions/1024)

	d := startDaemon(b, claude, data, "--debounce", "250ms", "--max-wait", "2s", "--rescan", "30s")
	began := time.Now()
	waitfor.Within(b, 5*time.Minute, "catch-up is over", func() bool {
		st, err := d.status()
		return err == nil && st.CatchUp.Over
	})
	before, err := d.status()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("catch-up of %d transcripts took %v (%d written, %d failed)", before.CatchUp.Total, time.Since(began).Round(time.Millisecond),
		before.Renders.Written, before.Renders.Failed)
	if bottles, _ := filepath.Glob(filepath.Join(bottles.BottlesDir(data), "*.md")); len(bottles) != idleSessions {
		b.Errorf("%d bottles after catch-up, want %d", len(bottles), idleSessions)
	}
	// The catch-up's bottles are synced to disk, and the batch's marker
	// removed, once it has been quiet for DefaultSyncQuiet
	// (bottles.Batch): that is catch-up work, not idle cost.
	eventually(b, "the catch-up's bottles are synced and their marker gone", func() bool {
		_, err := os.Stat(bottles.Open(data, nil, nil).UnsyncedMarker())
		return os.IsNotExist(err)
	})

	pid := d.cmd.Process.Pid
	b.ResetTimer()
	t0 := time.Now()
	run0, slices0 := threadSched(b, pid)
	ticks0 := cpuTicks(b, pid)
	time.Sleep(*idleDuration)
	run1, slices1 := threadSched(b, pid)
	ticks1 := cpuTicks(b, pid)
	window := time.Since(t0)
	rss, hwm := memoryKB(b, pid, "VmRSS"), memoryKB(b, pid, "VmHWM")
	b.StopTimer()

	after, err := d.status()
	if err != nil {
		b.Fatal(err)
	}
	if n := renders(after) - renders(before); n != 0 {
		b.Errorf("%d renders while nothing changed", n)
	}
	for _, e := range after.Errors {
		b.Errorf("daemon error: %s %s: %s", e.Time.Format(time.RFC3339Nano), e.Session, e.Error)
	}
	if code := d.stop(); code != 0 {
		b.Errorf("daemon exit code %d after SIGTERM, want 0", code)
	}

	cpu := time.Duration(run1 - run0)
	ticks := ticks1 - ticks0
	b.Logf("idle for %v: CPU %v by schedstat, %d ticks (%v) by stat; %d times scheduled; RSS %d kB, peak %d kB",
		window.Round(time.Millisecond), cpu.Round(time.Microsecond), ticks, time.Duration(ticks)*time.Second/clockTicks,
		slices1-slices0, rss, hwm)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(100*cpu.Seconds()/window.Seconds(), "cpu-pct")
	b.ReportMetric(100*float64(ticks)/clockTicks/window.Seconds(), "cpu-stat-pct")
	b.ReportMetric(float64(slices1-slices0)/window.Seconds(), "wakeups/s")
	b.ReportMetric(float64(rss)/1024, "rss-MB")
	b.ReportMetric(float64(hwm)/1024, "rss-peak-MB")
}

// renders counts the renders a daemon finished.
func renders(st *watch.Status) int {
	return st.Renders.Written + st.Renders.Unchanged + st.Renders.Failed
}

// threadSched sums, over the threads of pid, the time they ran (ns) and
// how many times they were scheduled, from /proc/<pid>/task/*/schedstat
// (/proc/<pid>/schedstat has the main thread's only). A thread that exits
// takes its share with it; the Go runtime rarely ends threads.
func threadSched(b *testing.B, pid int) (runNs, slices int64) {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // exited meanwhile
		}
		f := strings.Fields(string(raw))
		if len(f) != 3 {
			b.Fatalf("schedstat of thread %s: %q", t.Name(), raw)
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			b.Fatalf("schedstat of thread %s: %q", t.Name(), raw)
		}
		runNs += run
		slices += n
	}
	return runNs, slices
}

// cpuTicks returns utime+stime of pid (all its threads, exited ones
// included), in clock ticks.
func cpuTicks(b testing.TB, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses and may
	// hold anything: state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return utime + stime
}

// memoryKB returns a "kB" field of /proc/<pid>/status.
func memoryKB(b testing.TB, pid int, field string) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
