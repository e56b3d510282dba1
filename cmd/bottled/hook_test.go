package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookCommand runs the hooks as Claude Code does: whatever the input,
// exit 0, stdout empty or exactly one JSON object, diagnostics on stderr.
func TestHookCommand(t *testing.T) {
	e := newEnv(t, true)
	transcriptPath := filepath.Join(e.claude, "projects", "-home-dev-app", sessionID+".jsonl")
	payload := func(source string) string {
		b, _ := json.Marshal(map[string]string{"session_id": sessionID, "transcript_path": transcriptPath, "cwd": "/home/dev/app", "hook_event_name": "SessionStart", "source": source})
		return string(b)
	}
	flags := e.flags()
	tests := []struct {
		name     string
		args     []string
		stdin    io.Reader
		wantJSON bool
	}{
		{"compact", append(flags, "hook", "session-start"), strings.NewReader(payload("compact")), true},
		{"compact, stdin left open", append(flags, "hook", "session-start"), openAfter(payload("compact")), true},
		{"resume of a session never compacted", append(flags, "hook", "session-start"), strings.NewReader(payload("resume")), false},
		{"startup", append(flags, "hook", "session-start"), strings.NewReader(payload("startup")), false},
		{"clear", append(flags, "hook", "session-start"), strings.NewReader(payload("clear")), false},
		{"garbage stdin", append(flags, "hook", "session-start"), strings.NewReader("}{ not json"), false},
		{"empty stdin", append(flags, "hook", "session-start"), strings.NewReader(""), false},
		{"hostile id", append(flags, "hook", "session-start"), strings.NewReader(`{"session_id":"../../x","source":"compact"}`), false},
		{"unknown flag", append(flags, "hook", "session-start", "--frobnicate"), strings.NewReader(payload("compact")), false},
		{"session-end clear", append(flags, "hook", "session-end"), strings.NewReader(`{"session_id":"` + sessionID + `","reason":"clear"}`), false},
		{"session-end garbage", append(flags, "hook", "session-end"), strings.NewReader(`nope`), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), append([]string{"bottled"}, tc.args...), tc.stdin, &out, &errOut)
			if code != 0 {
				t.Fatalf("exit code %d (stderr %q); a hook always exits 0", code, errOut.String())
			}
			if !tc.wantJSON {
				if out.Len() != 0 {
					t.Fatalf("stdout %q, want nothing", out.String())
				}
				return
			}
			var v struct {
				HookSpecificOutput struct {
					HookEventName     string `json:"hookEventName"`
					AdditionalContext string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			dec := json.NewDecoder(&out)
			if err := dec.Decode(&v); err != nil || v.HookSpecificOutput.HookEventName != "SessionStart" || v.HookSpecificOutput.AdditionalContext == "" {
				t.Fatalf("stdout is not the hook's JSON: %v", err)
			}
			if dec.More() {
				t.Fatalf("stdout holds more than one JSON value")
			}
		})
	}
	archived, _ := filepath.Glob(filepath.Join(e.data, "bottles", "archive", "*-"+sessionID+".1.md"))
	if len(archived) != 1 {
		t.Errorf("session-end clear archived %d bottles, want 1", len(archived))
	}
	if _, err := os.Stat(filepath.Join(e.data, "bottles", sessionID+".md")); !os.IsNotExist(err) {
		t.Errorf("the cleared session's bottle is still live")
	}
}

func openAfter(s string) io.Reader {
	r, w := io.Pipe()
	go w.Write([]byte(s))
	return r
}

// TestHookCommandLine: a hook name that is not one is a mistake of the
// person who typed it (install registers only the two), told as bad usage;
// a mistake in a hook's own arguments leaves the hook's contract standing
// (exit 0, nothing on stdout) and is said on stderr, which Claude Code
// keeps in its debug log.
func TestHookCommandLine(t *testing.T) {
	e := newEnv(t, true)
	clear := `{"session_id":"` + sessionID + `","reason":"clear"}`
	tests := []struct {
		name, stdin string
		args        []string
		code        int
		stderr      string // a substring
		stdout      bool   // help on stdout
	}{
		{"an unknown hook", "", []string{"hook", "bogus"}, exitUsage, "bottled: unknown command \"bogus\": session-start or session-end (see bottled hook --help)\n", false},
		{"no hook named", "", []string{"hook"}, exitUsage, "session-start", false},
		{"help", "", []string{"hook", "--help"}, 0, "", true},
		{"session-start with an argument", `{"session_id":"` + sessionID + `","source":"compact"}`, []string{"hook", "session-start", "extra"},
			0, "bottled: hook session-start takes no arguments (got \"extra\"); it did nothing\n", false},
		{"session-end with --timeout", clear, []string{"hook", "session-end", "--timeout", "3s"},
			0, "bottled: --timeout is session-start's; session-end always ends within 1s\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), append(append([]string{"bottled"}, e.flags()...), tc.args...), strings.NewReader(tc.stdin), &out, &errOut)
			if code != tc.code || !strings.Contains(errOut.String(), tc.stderr) || (out.Len() > 0) != tc.stdout {
				t.Errorf("code %d, stdout %q, stderr %q; want code %d, stderr with %q, help on stdout %v", code, out.String(), errOut.String(), tc.code, tc.stderr, tc.stdout)
			}
		})
	}
	// session-end did its job all the same.
	if archived, _ := filepath.Glob(filepath.Join(e.data, "bottles", "archive", "*-"+sessionID+".1.md")); len(archived) != 1 {
		t.Errorf("session-end --timeout archived %d bottles, want 1", len(archived))
	}
}
