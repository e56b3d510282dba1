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
		eventuallyWithin(b, 5*time.Minute, "catch-up is over", func() bool {
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
		d.stop(30 * time.Second)
		cpuS, wallS := median()
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(cpuD.Microseconds())/1000, "daemon-cpu-ms")
		b.ReportMetric(float64(wallD.Microseconds())/1000, "daemon-ms")
		b.ReportMetric(float64(cpuS.Microseconds())/1000, "disk-cpu-ms")
		b.ReportMetric(float64(wallS.Microseconds())/1000, "disk-ms")
		b.ReportMetric(burst.Seconds(), "100-at-once-s")
	}
}
