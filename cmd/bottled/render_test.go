package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/growfile"
)

const sessionID = "3f9c2a71-5d0e-4b8a-9c61-2e7f0a4d8b15"

// transcript is a two-turn session in Claude Code 2.1.x records.
const transcript = `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"RENDER-P1 add a flag"},"uuid":"u1","timestamp":"2026-05-01T10:00:00.000Z","sessionId":"` + sessionID + `","cwd":"/home/dev/app"}
{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"RENDER-A1 Added --flag."}]},"uuid":"a1","timestamp":"2026-05-01T10:00:05.000Z","sessionId":"` + sessionID + `"}
`

// env is a temporary Claude config dir and claude-mem data dir.
type env struct{ claude, data string }

// dirFlags point bottled at a Claude config dir and a data dir.
func dirFlags(claude, data string) []string {
	return []string{"--claude-dir", claude, "--data-dir", data}
}

// flags point bottled at e's directories.
func (e env) flags() []string { return dirFlags(e.claude, e.data) }

// run runs bottled in-process on e's directories.
func (e env) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return bottled(t, nil, append(e.flags(), args...)...)
}

func newEnv(t *testing.T, withTranscript bool) env {
	t.Helper()
	root := t.TempDir()
	e := env{claude: filepath.Join(root, "claude"), data: filepath.Join(root, "mem")}
	proj := filepath.Join(e.claude, "projects", "-home-dev-app")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if withTranscript {
		if err := os.WriteFile(filepath.Join(proj, sessionID+".jsonl"), []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// bottled runs the command line in-process.
func bottled(t *testing.T, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for k, v := range environ {
		t.Setenv(k, v)
	}
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"bottled"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRenderCommand(t *testing.T) {
	e := newEnv(t, true)
	bottlePath := filepath.Join(e.data, "bottles", sessionID+".md")

	code, out, errOut := e.run(t, "render", sessionID)
	if code != 0 || out != bottlePath+"\tfull\n" || errOut != "" {
		t.Fatalf("render: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err := os.ReadFile(bottlePath)
	if err != nil || !bytes.Contains(data, []byte("RENDER-A1 Added --flag.")) {
		t.Fatalf("bottle: %v %q", err, data)
	}

	code, out, _ = e.run(t, "render", sessionID)
	if code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("second render: code %d, stdout %q; want an unchanged notice", code, out)
	}

	os.Remove(bottlePath)
	code, out, _ = e.run(t, "render", "--stdout", sessionID)
	if code != 0 || !strings.HasPrefix(out, "# Session bottle — "+sessionID) {
		t.Errorf("--stdout: code %d, stdout %.80q", code, out)
	}
	if _, err := os.Stat(bottlePath); !os.IsNotExist(err) {
		t.Errorf("--stdout wrote the bottle (stat err %v)", err)
	}
}

func TestRenderFindsDirsFromEnvironment(t *testing.T) {
	e := newEnv(t, true)
	code, out, errOut := bottled(t, map[string]string{"CLAUDE_CONFIG_DIR": e.claude, "CLAUDE_MEM_DATA_DIR": e.data}, "render", sessionID)
	if code != 0 || !strings.HasPrefix(out, filepath.Join(e.data, "bottles")) {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Flags beat the environment.
	other := newEnv(t, false)
	code, _, errOut = bottled(t, map[string]string{"CLAUDE_CONFIG_DIR": e.claude}, "--claude-dir", other.claude, "--data-dir", other.data, "render", sessionID)
	if code != exitFailed || !strings.Contains(errOut, "nothing to render") {
		t.Errorf("flag did not override env: code %d, stderr %q", code, errOut)
	}
}

func TestRenderExplicitTranscript(t *testing.T) {
	e := newEnv(t, false)
	path := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.WriteFile(path, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "render", "--transcript", path, "--stdout", sessionID)
	if code != 0 || !strings.Contains(out, "RENDER-P1 add a flag") {
		t.Fatalf("code %d, stdout %.80q, stderr %q", code, out, errOut)
	}
}

func TestRenderFailures(t *testing.T) {
	e := newEnv(t, false)
	flags := e.flags()
	notDB := filepath.Join(t.TempDir(), "mem")
	if err := os.MkdirAll(notDB, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notDB, "claude-mem.db"), []byte("this is not sqlite"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring of the one line printed
	}{
		{"no session id", append(flags, "render"), exitUsage, "exactly one SESSION_ID"},
		{"two session ids", append(flags, "render", "a", "b"), exitUsage, "exactly one SESSION_ID"},
		{"hostile session id", append(flags, "render", "../../etc/passwd"), exitUsage, "invalid session id"},
		{"unknown flag", append(flags, "render", "--nope", sessionID), exitUsage, "nope"},
		{"unknown command", append(flags, "frobnicate"), exitUsage, "frobnicate"},
		{"nothing to render", append(flags, "render", sessionID), exitFailed, "nothing to render for session " + sessionID + ": no transcript"},
		{"unreadable database", []string{"--claude-dir", e.claude, "--data-dir", notDB, "render", sessionID}, exitFailed, "unreadable claude-mem database"},
		{"missing --transcript file", append(flags, "render", "--transcript", "/nonexistent.jsonl", sessionID), exitFailed, "nonexistent.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bottled(t, nil, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("code %d, stderr %q; want code %d and %q", code, errOut, tc.code, tc.stderr)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") > 0 && tc.code != exitUsage {
				t.Errorf("stderr is more than one line: %q", errOut)
			}
			if out != "" && tc.code != exitUsage {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func TestRenderWarnsOnUnreadableDatabase(t *testing.T) {
	e := newEnv(t, true)
	if err := os.MkdirAll(e.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.data, "claude-mem.db"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "render", sessionID)
	if code != 0 || !strings.Contains(errOut, "warning") || !strings.Contains(out, "\tfull") {
		t.Errorf("code %d, stdout %q, stderr %q; want a full render with a warning", code, out, errOut)
	}
}

func TestRenderReportsMalformedAndArchived(t *testing.T) {
	e := newEnv(t, true)
	flags := e.flags()
	path := filepath.Join(e.claude, "projects", "-home-dev-app", sessionID+".jsonl")
	growfile.Append(t, path, "{\"type\":\"user\",\n"+`{"type":"quantum-checkpoint","sessionId":"`+sessionID+`"}`+"\n")
	code, _, errOut := e.run(t, "render", sessionID)
	if code != 0 || !strings.Contains(errOut, "1 transcript line could not be read and was left out") {
		t.Errorf("code %d, stderr %q; want a warning about the malformed line", code, errOut)
	}
	if !strings.Contains(errOut, "does not know") || !strings.Contains(errOut, "record types quantum-checkpoint×1") {
		t.Errorf("stderr %q; want a warning naming the unknown record type", errOut)
	}
	var out bytes.Buffer
	payload := `{"session_id":"` + sessionID + `","reason":"clear"}`
	if code := run(context.Background(), append([]string{"bottled"}, append(flags, "hook", "session-end")...), strings.NewReader(payload), &out, &out); code != 0 {
		t.Fatal(out.String())
	}
	code, stdout, _ := e.run(t, "render", sessionID)
	if code != 0 || !strings.Contains(stdout, filepath.Join(e.data, "bottles", "archive")) || !strings.Contains(stdout, "archived") {
		t.Errorf("render of a cleared session: code %d, stdout %q; want the archived bottle named", code, stdout)
	}
}
