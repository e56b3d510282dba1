package index

import (
	"time"

	sys "golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling thread has used, for a caller that
// locked its goroutine to its thread: what a query cost, however many
// other processes the machine was sharing its cores with meanwhile.
func threadCPU() (time.Duration, bool) {
	var ru sys.Rusage
	if err := sys.Getrusage(sys.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
