package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/oddfile"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
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

// TestRenderTranscriptOfTheSession: with --transcript, the id must be the
// whole id of the session the file holds; a start of an id, or another
// session's id, would write a bottle under an id that is not its session's.
func TestRenderTranscriptOfTheSession(t *testing.T) {
	const otherID = "0d6f5a3e-8c1b-4e2f-9a7d-3b5c1e0f2a44"
	e := newEnv(t, true)
	proj := filepath.Join(e.claude, "projects", "-home-dev-app")
	own := filepath.Join(proj, sessionID+".jsonl")
	other := filepath.Join(proj, otherID+".jsonl")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(transcript, sessionID, otherID)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	anonymous := strings.ReplaceAll(transcript, `,"sessionId":"`+sessionID+`"`, "")
	namedForOther := write(otherID+".jsonl", anonymous)
	elsewhere := write("elsewhere.jsonl", anonymous)
	copied := write("copy.jsonl", transcript) // its records say whose it is
	misnamed := filepath.Join(t.TempDir(), otherID+".jsonl")
	if err := os.WriteFile(misnamed, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	// A resumed session's file as Claude Code 1.0.x wrote it: a copy of
	// its predecessor's records, under the predecessor's id, first.
	predecessor := strings.NewReplacer(sessionID, otherID, `"u1"`, `"p1"`, `"a1"`, `"p2"`).Replace(transcript)
	resumed := write("resumed.jsonl", predecessor+transcript)
	// Its last record longer than a first look at the file's end reads.
	// A path a shell splits: the command suggested quotes it.
	spaced := filepath.Join(dir, "项目 ü", "会话 ü's.jsonl")
	os.Mkdir(filepath.Dir(spaced), 0o700)
	if err := os.WriteFile(spaced, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	suggested := "bottled --claude-dir " + e.claude + " --data-dir " + e.data + " render " + sessionID + " --transcript "
	long := write("long.jsonl", transcript+`{"type":"user","uuid":"u9","parentUuid":"a1","sessionId":"`+otherID+`","message":{"role":"user","content":"`+strings.Repeat("long ", 30<<10)+`"}}`+"\n")
	if code, _, errOut := e.run(t, "render", sessionID); code != 0 {
		t.Fatal(errOut)
	}
	before, err := os.ReadFile(filepath.Join(e.data, "bottles", sessionID+".md"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, file string
		code           int
		stderr         string
	}{
		{"the start of an id", sessionID[:8], own, exitUsage, "bottled: with --transcript give the whole session id: " + suggested + own + " --stdout\n"},
		{"the start of an id, a path with spaces", sessionID[:8], spaced, exitUsage, "bottled: with --transcript give the whole session id: " + suggested + "'" + strings.ReplaceAll(spaced, "'", `'\''`) + "' --stdout\n"},
		{"another session's id", otherID, own, exitUsage, own + " is the transcript of session " + sessionID + ", not of " + otherID},
		{"another session's transcript", sessionID, other, exitUsage, other + " is the transcript of session " + otherID + ", not of " + sessionID},
		{"a new id, another session's transcript", "44444444-3333-4444-8555-666666666666", other, exitUsage, "is the transcript of session " + otherID},
		{"a file named for another session", sessionID, namedForOther, exitUsage, namedForOther + " is named for session " + otherID + ", not " + sessionID},
		{"no session named, not an id", "333333", elsewhere, exitUsage, `"333333" is not a whole session id`},
		{"an upper-case id", strings.ToUpper(sessionID), own, exitUsage, "is the transcript of session " + sessionID},
		{"no session named, a whole id", sessionID, elsewhere, 0, ""},
		{"the session's own", sessionID, own, 0, ""},
		{"a copy named otherwise", sessionID, copied, 0, ""},
		{"a copy named for another session", sessionID, misnamed, exitUsage, misnamed + " is named for session " + otherID + ", not " + sessionID},
		{"a resumed session's file", sessionID, resumed, 0, ""},
		{"a long last record", sessionID, long, exitUsage, long + " is the transcript of session " + otherID},
		{"a resumed session's file, its predecessor's id", otherID, resumed, exitUsage, resumed + " is the transcript of session " + sessionID + ", not of " + otherID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := e.run(t, "render", tc.id, "--transcript", tc.file, "--stdout")
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("code %d, stderr %q; want code %d and %q", code, errOut, tc.code, tc.stderr)
			}
			if tc.code != 0 && (out != "" || strings.Count(errOut, "\n") != 1) {
				t.Errorf("stdout %q, stderr %q; want one line on stderr only", out, errOut)
			}
			code, _, errOut = e.run(t, "render", tc.id, "--transcript", tc.file)
			if code != tc.code {
				t.Errorf("without --stdout: code %d (%s); want %d", code, errOut, tc.code)
			}
		})
	}
	entries, err := os.ReadDir(filepath.Join(e.data, "bottles"))
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Name() != sessionID+".md" && !strings.HasPrefix(en.Name(), ".") && en.Name() != "archive" {
			t.Errorf("a bottle for no session of its own: %s", en.Name())
		}
	}
	after, err := os.ReadFile(filepath.Join(e.data, "bottles", sessionID+".md"))
	if err != nil || !bytes.Equal(render.LinesOf(after).Span(5, render.LinesOf(after).Count()), render.LinesOf(before).Span(5, render.LinesOf(before).Count())) {
		t.Errorf("the session's bottle changed (%v):\n%s", err, after)
	}
}

// TestRenderNamesWhatIsThere: a transcript that is not a regular file is
// named for what it is, as the daemon's log does, not as a missing one.
func TestRenderNamesWhatIsThere(t *testing.T) {
	e := newEnv(t, false)
	path := filepath.Join(e.claude, "projects", "-home-dev-app", sessionID+".jsonl")
	oddfile.FIFO(t, path)
	const rendering, showing = "bottled: nothing to render for session " + sessionID + ": ", "bottled: no bottle for session " + sessionID + ", and nothing to render"
	for _, tc := range []struct {
		args  []string
		start string
	}{
		{[]string{"render", sessionID}, rendering},
		{[]string{"render", "--stdout", sessionID}, rendering},
		{[]string{"render", sessionID, "--transcript", path}, rendering},
		{[]string{"show", sessionID}, showing},
	} {
		code, out, errOut := e.run(t, tc.args...)
		want := path + " is a named pipe, not a regular file"
		if code != exitFailed || out != "" || !strings.HasPrefix(errOut, tc.start) || !strings.Contains(errOut, want) || strings.Contains(errOut, "no transcript") {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want exit 1, %q and %q", tc.args, code, out, errOut, tc.start, want)
		}
	}
}

// TestRenderWithTheDatabaseBroken: a bottle that shows claude-mem's
// records is kept when the database breaks, and render says so, in words
// that agree with one another; --stdout says that what it prints lacks them.
func TestRenderWithTheDatabaseBroken(t *testing.T) {
	w := memwriter.Require(t)
	e := newEnv(t, true)
	if err := os.MkdirAll(e.data, 0o700); err != nil {
		t.Fatal(err)
	}
	db := sources.ClaudeMemFile(e.data)
	w.Write(t, db,
		memwriter.Op{"op": "session", "content": sessionID, "project": "app", "prompt": "RENDER-P1 add a flag"},
		memwriter.Op{"op": "register", "content": sessionID, "memory": "mem-" + sessionID},
		memwriter.Op{"op": "prompt", "content": sessionID, "number": 1, "text": "RENDER-P1 add a flag"},
		memwriter.Op{"op": "observation", "content": sessionID, "prompt_number": 1, "type": "change", "title": "RENDER-OBS1 added the flag"},
		memwriter.Op{"op": "observation", "content": sessionID, "prompt_number": 1, "type": "discovery", "title": "RENDER-OBS2 found the parser"})
	bottle := filepath.Join(e.data, "bottles", sessionID+".md")
	if code, _, errOut := e.run(t, "render", sessionID); code != 0 {
		t.Fatal(errOut)
	}
	if data, _ := os.ReadFile(bottle); !bytes.Contains(data, []byte("RENDER-OBS2")) {
		t.Fatalf("no observation in the bottle:\n%s", data)
	}
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(f)
	}
	if err := os.WriteFile(db, []byte("this is not sqlite"), 0o600); err != nil {
		t.Fatal(err)
	}
	const kept = "kept: it shows claude-mem records the database cannot give now"
	code, out, errOut := e.run(t, "render", sessionID)
	if code != 0 || out != bottle+"\tfull\t("+kept+")\n" {
		t.Errorf("render: code %d, stdout %q; want %q", code, out, bottle+"\tfull\t("+kept+")")
	}
	if !strings.Contains(errOut, "warning") || strings.Contains(errOut, "rendered from the transcript alone") || strings.Contains(out, "unchanged") {
		t.Errorf("render: stdout %q, stderr %q; want a warning that does not say the bottle was rendered anew", out, errOut)
	}
	if data, _ := os.ReadFile(bottle); !bytes.Contains(data, []byte("RENDER-OBS2")) {
		t.Errorf("the bottle lost its observations:\n%s", data)
	}
	code, out, errOut = e.run(t, "render", sessionID, "--stdout")
	want := "printed from the transcript alone, without the claude-mem records the bottle on disk shows (bottled --claude-dir " + e.claude + " --data-dir " + e.data + " show " + sessionID + " prints it)"
	if code != 0 || strings.Contains(out, "RENDER-OBS") || !strings.Contains(errOut, want) {
		t.Errorf("--stdout: code %d, stderr %q; want %q", code, errOut, want)
	}
}
