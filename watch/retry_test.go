package watch

import (
	"testing"
	"time"
)

func TestIndexRetryWait(t *testing.T) {
	cases := []struct {
		failures int
		took     time.Duration
		want     time.Duration
	}{
		{1, 0, time.Second},                          // a fault found at once: the renders' backoff
		{2, time.Millisecond, 2 * time.Second},       // doubling
		{12, time.Millisecond, 5 * time.Minute},      // up to its ceiling
		{1, 3 * time.Second, time.Minute},            // a build that failed after 3 s: 20× that
		{1, 45 * time.Second, 15 * time.Minute},      // a whole GB built in vain: beyond the ceiling
		{30, 45 * time.Second, 15 * time.Minute},     // however many times
		{3, 100 * time.Millisecond, 4 * time.Second}, // the backoff when longer
	}
	for _, c := range cases {
		cfg := Config{}
		cfg.setDefaults()
		if got := cfg.indexRetryWait(c.failures, c.took); got != c.want {
			t.Errorf("indexRetryWait(%d, %v) = %v, want %v", c.failures, c.took, got, c.want)
		}
	}
}
