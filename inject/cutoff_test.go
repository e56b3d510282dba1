package inject

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestCutOff: what the work a hook gave up on logs after the hook has
// answered (cut) never reaches the caller's stderr, through the logger
// or one derived from it; what it logged before does.
func TestCutOff(t *testing.T) {
	var out bytes.Buffer
	log, cut := cutOff(slog.New(slog.NewTextHandler(&out, nil)))
	derived := log.With("session", "s1")
	log.Info("before")
	derived.Info("derived before")
	cut()
	log.Info("after")
	derived.Info("derived after")
	got := out.String()
	for _, want := range []string{"before", "derived before"} {
		if !strings.Contains(got, "msg=\""+want+"\"") && !strings.Contains(got, "msg="+want) {
			t.Errorf("%q was not logged: %q", want, got)
		}
	}
	if strings.Contains(got, "after") {
		t.Errorf("logged after the cut: %q", got)
	}
}
