package waitfor

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// failed is a testing.TB whose Fatalf records the failure and returns, so
// that a test can see a wait run out.
type failed struct {
	testing.TB
	msg string
}

func (f *failed) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

// TestWithin: a condition that comes to hold ends the wait, checked again
// until it does; one that never holds fails the test at the deadline,
// saying what was waited for.
func TestWithin(t *testing.T) {
	checks := 0
	Within(t, time.Minute, "the third check", func() bool {
		checks++
		return checks == 3
	})
	if checks != 3 {
		t.Errorf("%d checks, want 3", checks)
	}

	f := &failed{TB: t}
	Within(f, 50*time.Millisecond, "the sky falls", func() bool { return false })
	if !strings.Contains(f.msg, "waiting until the sky falls") {
		t.Errorf("a wait that ran out said %q, want what it waited for", f.msg)
	}
}
