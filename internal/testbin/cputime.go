package testbin

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time this process has used so far, user and system:
// what a benchmark on a busy machine compares, which the load inflates
// far less than wall time.
func CPUTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
