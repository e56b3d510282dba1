//go:build !linux

package index

import "time"

// threadCPU reports no CPU time where a thread's own is not measured.
func threadCPU() (time.Duration, bool) { return 0, false }
