package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsInBottledsWords: a flag that is unknown, lacks its value
// or has one of the wrong kind is told in one line, with the flag spelled
// as bottled's help spells it and the help that says more, never in Go's
// flag package's words; exit 2 (the hooks: 0).
func TestUsageErrorsInBottledsWords(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(root, "claude"))
	t.Setenv("CLAUDE_MEM_DATA_DIR", filepath.Join(root, "mem"))
	tests := []struct {
		args []string
		code int
		want string // all of stderr
	}{
		{[]string{"search", "--limit", "abc", "x"}, exitUsage,
			`bottled: --limit takes a whole number, not "abc" (see bottled search --help)`},
		{[]string{"search", "--limit=1.5", "x"}, exitUsage,
			`bottled: --limit takes a whole number, not "1.5" (see bottled search --help)`},
		{[]string{"search", "--bogus", "x"}, exitUsage,
			`bottled: unknown flag --bogus (see bottled search --help)`},
		{[]string{"sessions", "-q"}, exitUsage,
			`bottled: unknown flag -q (see bottled sessions --help)`},
		{[]string{"--bogus", "status"}, exitUsage,
			`bottled: unknown flag --bogus (see bottled --help)`},
		{[]string{"mcp", "--bogus"}, exitUsage,
			`bottled: unknown flag --bogus (see bottled mcp --help)`},
		{[]string{"search", "x", "--limit"}, exitUsage,
			`bottled: --limit needs a whole number (see bottled search --help)`},
		{[]string{"export", "abcdef", "-o"}, exitUsage,
			`bottled: -o needs a value (see bottled export --help)`},
		{[]string{"run", "--debounce", "soon"}, exitUsage,
			`bottled: --debounce takes a duration such as 1.5s, 30s or 5m, not "soon" (see bottled run --help)`},
		{[]string{"status", "--json=maybe"}, exitUsage,
			`bottled: --json takes true or false, not "maybe" (see bottled status --help)`},
		{[]string{"view", "--port", "http"}, exitUsage,
			`bottled: --port takes a whole number, not "http" (see bottled view --help)`},
		{[]string{"status", "--claude-dir"}, exitUsage,
			`bottled: --claude-dir needs a value (see bottled status --help)`},
		{[]string{"hook", "bogus"}, exitUsage,
			`bottled: unknown command "bogus": session-start or session-end (see bottled hook --help)`},
		{[]string{"hook", "session-start", "--frobnicate"}, exitOK,
			`bottled: unknown flag --frobnicate (see bottled hook session-start --help)`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), append([]string{"bottled"}, tt.args...), strings.NewReader(""), &out, &errOut)
			if code != tt.code || errOut.String() != tt.want+"\n" {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, errOut.String(), tt.code, tt.want)
			}
			if tt.code == exitUsage && out.Len() > 0 {
				t.Errorf("stdout: %q, want none", out.String())
			}
		})
	}
}
