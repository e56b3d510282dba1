// Package waitfor is test support: waiting, with a deadline, for a
// condition a test can observe (a bottle on disk, a line in a daemon's
// log, a counter in status), instead of sleeping for a time that stands in
// for it.
package waitfor

import (
	"testing"
	"time"
)

// Deadline is how long Cond waits: far beyond what any condition takes
// when it holds, for shared CI machines and the race detector, which slow
// a daemon several times over. Nothing waited for is timed.
const Deadline = 2 * time.Minute

// interval is how often a condition is checked: often enough that a wait
// ends soon after it holds, seldom enough that checking (a status query,
// reading a bottle) costs the daemon under test nothing worth measuring.
const interval = 20 * time.Millisecond

// Cond checks cond until it holds, failing tb (Fatal) with what it waited
// for once Deadline has passed.
func Cond(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Within(tb, Deadline, what, cond)
}

// Within is Cond with a deadline of its own.
func Within(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Holds(timeout, cond) {
		tb.Fatalf("timed out after %v waiting until %s", timeout, what)
	}
}

// Holds checks cond until it holds or timeout has passed, and reports
// whether it held: for a goroutine other than the test's, which may not
// call Fatal.
func Holds(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}
