package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunRefusesFlagsOutOfRange: a value the daemon could not use as
// given is refused with the range it must be in, before the daemon starts,
// rather than changed behind the user's back.
func TestRunRefusesFlagsOutOfRange(t *testing.T) {
	e := newEnv(t, false)
	// Cancelled: a daemon that starts after all stops at once, and the
	// test fails rather than waits for it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--max-wait", "1ms"}, "bottled: --max-wait 1ms is shorter than --debounce 250ms: it must be at least that\n"},
		{[]string{"--debounce", "3s"}, "bottled: --max-wait 2s is shorter than --debounce 3s: it must be at least that\n"},
		{[]string{"--debounce", "0s"}, "bottled: --debounce must be positive\n"},
		{[]string{"--log-format", "yaml"}, "bottled: --log-format must be text or json, not \"yaml\"\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, append(append([]string{"bottled", "run"}, e.flags()...), tc.args...), strings.NewReader(""), &stdout, &stderr)
		out, errOut := stdout.String(), stderr.String()
		if code != exitUsage || out != "" || errOut != tc.says {
			t.Errorf("run %s: code %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, out, errOut, tc.says)
		}
	}
}
