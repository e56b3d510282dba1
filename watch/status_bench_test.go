package watch_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/watch"
)

// BenchmarkStatus measures `bottled status --json` on a machine with 5,000
// transcripts (small ones, in 100 project directories): the CPU time of the
// status process and the time it takes, median of 20 runs, with a daemon
// running (it answers what it knows) and without (the disk survey reads
// every transcript's end and every bottle's state), and how long 100
// status calls started at once take with the daemon. Run it with
//
//	go test -run '^$' -bench Status -benchtime 1x ./watch
func BenchmarkStatus(b *testing.B) {
	const sessions, projects = 5000, 100
	root := b.TempDir()
	claude, data := filepath.Join(root, "claude"), filepath.Join(root, "mem")
	for i := range sessions {
		id := fmt.Sprintf("57a7b000-0000-4000-8000-%012d", i)
		path := transcriptIn(b, claude, fmt.Sprintf("-home-dev-p%03d", i%projects), id)
		if err := os.WriteFile(path, []byte(userRec(id, "u1", "", "STATUS-BENCH a prompt")+assistantRec(id, "a1", "u1", "m1", "An answer.")), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	status := func() (cpu, wall time.Duration) {
		cmd := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "status", "--json")
		start := time.Now()
		out, err := cmd.Output()
		wall = time.Since(start)
		if err != nil || !strings.Contains(string(out), `"transcripts": 5000`) {
			b.Fatalf("status: %v\n%.300s", err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall
	}
	median := func() (cpu, wall time.Duration) {
		var cpus, walls []time.Duration
		for range 20 {
			c, w := status()
			cpus, walls = append(cpus, c), append(walls, w)
		}
		slices.Sort(cpus)
		slices.Sort(walls)
		return cpus[len(cpus)/2], walls[len(walls)/2]
	}
	for b.Loop() {
		d := startDaemon(b, claude, data, "--rescan", "30s")
		waitfor.Within(b, 5*time.Minute, "catch-up is over", func() bool {
			st, err := d.status()
			return err == nil && st.CatchUp.Over
		})
		cpuD, wallD := median()
		start := time.Now()
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() { status() })
		}
		wg.Wait()
		burst := time.Since(start)
		d.stop()
		cpuS, wallS := median()
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(cpuD.Microseconds())/1000, "daemon-cpu-ms")
		b.ReportMetric(float64(wallD.Microseconds())/1000, "daemon-ms")
		b.ReportMetric(float64(cpuS.Microseconds())/1000, "disk-cpu-ms")
		b.ReportMetric(float64(wallS.Microseconds())/1000, "disk-ms")
		b.ReportMetric(burst.Seconds(), "100-at-once-s")
	}
}

// BenchmarkStatusFlood measures what a flood of status clients costs a
// daemon following 20,000 sessions (catch-up over): the time from a
// change to its bottle, median and longest of 5 changes, without clients
// and with a thousand (idle, slow and eager, as in TestFaultStatusFlood);
// how long `bottled status` takes without and during the flood (median of
// 5); how many
// answers per second the eager clients got, and how many refusals; and
// how much the daemon's peak memory grew. Run it with
//
//	go test -run '^$' -bench StatusFlood -benchtime 1x -timeout 30m ./watch
func BenchmarkStatusFlood(b *testing.B) {
	const sessions, changes, clients = 20000, 5, 1000
	claude, data := dirs(b)
	manySessions(b, claude, sessions)
	path := func(i int) (string, string) {
		id := fmt.Sprintf("f1000000-0000-4000-8000-%012d", i)
		return id, filepath.Join(claude, "projects", fmt.Sprintf("-home-dev-f%02d", i%30), id+".jsonl")
	}
	// latency changes sessions from..from+changes one after the other and
	// returns the median and the longest time to the bottle.
	latency := func(d *daemon, from int) (median, longest time.Duration) {
		var took []time.Duration
		for i := from; i < from+changes; i++ {
			id, p := path(i)
			marker := fmt.Sprintf("FLOOD-BENCH-%d", i)
			start := time.Now()
			synth.Append(b, p, userRec(id, "u2", "a1", marker))
			waitfor.Within(b, 5*time.Minute, id+" shows "+marker, func() bool { return strings.Contains(d.bottle(id), marker) })
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[len(took)/2], took[len(took)-1]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	// statusWall is the median time `bottled status` takes, of 5.
	statusWall := func() time.Duration {
		var walls []time.Duration
		for range 5 {
			start := time.Now()
			out, _ := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "status", "--json").Output()
			walls = append(walls, time.Since(start))
			if !strings.Contains(string(out), `"source": "daemon"`) {
				b.Logf("status did not get the daemon's answer:\n%.400s", out)
			}
		}
		slices.Sort(walls)
		return walls[len(walls)/2]
	}
	for b.Loop() {
		d := startDaemon(b, claude, data, "--rescan", "30m")
		waitfor.Within(b, 10*time.Minute, "catch-up is over", func() bool {
			st, err := d.status()
			return err == nil && st.CatchUp.Over
		})
		quiet, quietMax := latency(d, 0)
		quietStatus := statusWall()
		pid := d.cmd.Process.Pid
		before := memoryKB(b, pid, "VmHWM")

		f := startFlood(filepath.Join(data, watch.SocketFile), clients)
		eventually(b, "every client has connected", func() bool { return f.connected.Load() > clients })
		began := time.Now()
		flooded, floodedMax := latency(d, changes)
		floodStatus := statusWall()
		elapsed := time.Since(began)
		f.stop()
		grew := memoryKB(b, pid, "VmHWM") - before
		d.stop()

		b.ReportMetric(0, "ns/op")
		b.ReportMetric(ms(quiet), "change-ms")
		b.ReportMetric(ms(quietMax), "change-max-ms")
		b.ReportMetric(ms(flooded), "flood-change-ms")
		b.ReportMetric(ms(floodedMax), "flood-change-max-ms")
		b.ReportMetric(ms(quietStatus), "status-ms")
		b.ReportMetric(ms(floodStatus), "flood-status-ms")
		b.ReportMetric(float64(f.answered.Load())/elapsed.Seconds(), "answers/s")
		b.ReportMetric(float64(f.refused.Load()), "refusals")
		b.ReportMetric(float64(f.unanswered.Load()), "unanswered")
		b.ReportMetric(float64(grew)/1024, "peak-growth-MB")
	}
}
