package main

import (
	"os"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/bottles"
)

// TestBadPatternsFile: with a patterns file one of whose lines cannot be
// used, render and show stop with one line that names the file, the line
// and what to do, and write nothing; status shows it on its redact line
// and exits 0; a good file redacts what its patterns match.
func TestBadPatternsFile(t *testing.T) {
	e := newEnv(t, true)
	if err := os.MkdirAll(e.data, 0o700); err != nil {
		t.Fatal(err)
	}
	patterns := bottles.RulesFile(e.data)
	if err := os.WriteFile(patterns, []byte("Render flag: RENDER-A1\nBroken: (unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"render", "show"} {
		code, out, errOut := e.run(t, cmd, sessionID)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 ||
			!strings.Contains(errOut, patterns) || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "fix or remove") {
			t.Errorf("%s: code %d, stdout %q, stderr %q; want 1, nothing, one line naming %s, line 2 and what to do", cmd, code, out, errOut, patterns)
		}
	}
	if _, err := os.Stat(bottles.BottlePath(bottles.BottlesDir(e.data), sessionID)); !os.IsNotExist(err) {
		t.Errorf("a bottle was written: %v", err)
	}
	code, out, _ := e.run(t, "status")
	if code != 0 || !strings.Contains(out, "redact") || !strings.Contains(out, "1 pattern of "+patterns) || !strings.Contains(out, "line 2") {
		t.Errorf("status: code %d\n%s", code, out)
	}

	if err := os.WriteFile(patterns, []byte("# ours\nRender flag: RENDER-A1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "show", sessionID)
	if code != 0 || strings.Contains(out, "RENDER-A1") || !strings.Contains(out, "[redacted: Render flag] Added --flag.") {
		t.Errorf("show with the file fixed: code %d, stderr %q\n%s", code, errOut, out)
	}
}
