package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/textcut"
	"github.com/urfave/cli/v3"
)

// TestSearchCommand renders the test session's bottle with the render
// command, then searches it as a person would: in its project directory,
// from another directory, as JSON, with bad input.
func TestSearchCommand(t *testing.T) {
	e := newEnv(t, true)
	if code, _, errOut := e.run(t, "render", sessionID); code != 0 {
		t.Fatalf("render: %s", errOut)
	}
	// The session's project is /home/dev/app, which is not the test's
	// working directory: only --all finds it.
	code, out, errOut := e.run(t, "search", "flag")
	if code != exitFailed || out != "" || !strings.Contains(errOut, "no hits") || !strings.Contains(errOut, "building the search index") {
		t.Errorf("search from elsewhere: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = e.run(t, "search", "--all", "added", "flag")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "WHEN") || !strings.Contains(lines[0], "PROJECT") ||
		!strings.Contains(lines[1], "assistant") || !strings.Contains(lines[1], sessionID) || !strings.Contains(lines[1], "/home/dev/app") ||
		!strings.Contains(lines[1], "RENDER-A1 Added --flag.") || strings.Contains(errOut, "building") {
		t.Errorf("search --all: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Aligned: every column starts where the header's does.
	if strings.Index(lines[1], sessionID) != strings.Index(lines[0], "SESSION") {
		t.Errorf("columns not aligned:\n%s", out)
	}

	code, out, _ = e.run(t, "search", "--all", "--json", `"add a flag"`)
	var hits []hitJSON
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 {
		t.Fatalf("--json: code %d, %v, %q", code, err, out)
	}
	h := hits[0]
	bottle := filepath.Join(e.data, "bottles", sessionID+".md")
	if h.Session != sessionID || h.Bottle != bottle || h.Speaker != "user" || h.Time == "" || h.Project != "/home/dev/app" || h.Snippet != "RENDER-P1 add a flag" {
		t.Errorf("hit %+v", h)
	}
	if data, _ := os.ReadFile(bottle); strings.Split(string(data), "\n")[h.Line-1] != "RENDER-P1 add a flag" {
		t.Errorf("line %d of the bottle is not the hit", h.Line)
	}
	code, out, _ = e.run(t, "search", "--all", "--json", "nothing-like-this")
	if code != exitFailed || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json without hits: code %d, %q", code, out)
	}
	code, _, _ = e.run(t, "search", "--all", "--since", "2026-05-02", "flag")
	if code != exitFailed {
		t.Errorf("--since after the session: code %d", code)
	}
	for _, bad := range [][]string{{"search"}, {"search", "***"}, {"search", "--limit", "0", "x"}, {"search", "--since", "someday", "x"}} {
		if code, _, errOut := e.run(t, bad...); code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: code %d, stderr %q", bad, code, errOut)
		}
	}
	// A time range with nothing in it, as show's --to before --from.
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--since", "2027-01-01", "--until", "2026-01-01"}, "bottled: --until 2026-01-01 is before --since 2027-01-01: nothing is in that range\n"},
		{[]string{"--since", "2026-01-01", "--until", "2026-01-01"}, "bottled: --until 2026-01-01 is not after --since 2026-01-01: nothing is in that range\n"},
		{[]string{"--since", "1d", "--until", "2d"}, "bottled: --until 2d is before --since 1d: nothing is in that range\n"},
	} {
		code, out, errOut := e.run(t, append([]string{"search", "--all"}, append(bad.args, "flag")...)...)
		if code != exitUsage || out != "" || errOut != bad.says {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want exit 2 and %q", bad.args, code, out, errOut, bad.says)
		}
	}
}

// TestIndexCommand: the index command says what the index holds, and
// --rebuild builds it once, whether or not there was one.
func TestIndexCommand(t *testing.T) {
	e := newEnv(t, true)
	if code, _, errOut := e.run(t, "render", sessionID); code != 0 {
		t.Fatalf("render: %s", errOut)
	}
	gen := func(n string) string { return filepath.Join(index.Dir(e.data), n+".db") }
	const holds = "holds     1 bottle of 1 session, 2 blocks"
	// No index yet: --rebuild builds the first generation, and only it.
	code, out, errOut := e.run(t, "index", "--rebuild")
	if code != 0 || !strings.Contains(out, "rebuilt in") || !strings.Contains(out, holds) || !strings.Contains(out, gen("1")) ||
		strings.Contains(errOut, "building") {
		t.Errorf("index --rebuild without an index: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = e.run(t, "index")
	if code != 0 || strings.Contains(out, "rebuilt") || !strings.Contains(out, holds) || !strings.Contains(out, gen("1")) {
		t.Errorf("index: code %d, %q", code, out)
	}
	code, out, _ = e.run(t, "index", "--rebuild")
	if code != 0 || !strings.Contains(out, "rebuilt in") || !strings.Contains(out, holds) ||
		!strings.Contains(out, "behind    0 bottles") || !strings.Contains(out, gen("2")) {
		t.Errorf("index --rebuild: code %d, %q", code, out)
	}
}

func TestProgressPrinter(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	progress := progressPrinter(&out, func() time.Time { return clock })
	steps := []struct {
		after       time.Duration
		done, total int64
	}{
		{time.Second, 100e6, 1000e6},             // too soon: nothing
		{1500 * time.Millisecond, 300e6, 1000e6}, // 2.5 s in: said
		{time.Second, 400e6, 1000e6},             // 1 s after the last: nothing
		{1500 * time.Millisecond, 600e6, 1000e6}, // said
		{5 * time.Second, 1000e6, 1000e6},        // all in: said, as it spoke before
	}
	for _, s := range steps {
		clock = clock.Add(s.after)
		progress(s.done, s.total)
	}
	want := "bottled: indexed 300 MB of 1.0 GB of bottles…\nbottled: indexed 600 MB of 1.0 GB of bottles…\n" +
		"bottled: indexed all 1.0 GB of bottles; finishing…\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}

	// A quick pass says nothing, even at its end.
	out.Reset()
	progress = progressPrinter(&out, func() time.Time { return clock })
	progress(10e6, 20e6)
	progress(20e6, 20e6)
	if out.Len() != 0 {
		t.Errorf("a quick pass printed %q", out.String())
	}
}

// TestSearchDeedHit: a session is found by a file it changed, and the hit
// says it is a deed, in the table and in --json.
func TestSearchDeedHit(t *testing.T) {
	e := newEnv(t, false)
	rec := func(s string) string {
		return strings.ReplaceAll(s, "SID", sessionID) + "\n"
	}
	records := rec(`{"parentUuid":null,"type":"user","message":{"role":"user","content":"DEED-P1 make the port configurable"},"uuid":"u1","timestamp":"2026-05-01T10:00:00.000Z","sessionId":"SID","cwd":"/home/dev/app"}`) +
		rec(`{"parentUuid":"u1","type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/home/dev/app/server/listen.go","old_string":"8080","new_string":"port"}}]},"uuid":"a1","timestamp":"2026-05-01T10:00:05.000Z","sessionId":"SID","cwd":"/home/dev/app"}`) +
		rec(`{"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},"toolUseResult":{"filePath":"x"},"uuid":"r1","timestamp":"2026-05-01T10:00:06.000Z","sessionId":"SID","cwd":"/home/dev/app"}`) +
		rec(`{"parentUuid":"r1","type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"DEED-A1 The port comes from the flag now."}]},"uuid":"a2","timestamp":"2026-05-01T10:00:09.000Z","sessionId":"SID","cwd":"/home/dev/app"}`)
	if err := os.WriteFile(filepath.Join(e.claude, "projects", "-home-dev-app", sessionID+".jsonl"), []byte(records), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t, "render", sessionID); code != 0 {
		t.Fatalf("render: %s", errOut)
	}
	code, out, errOut := e.run(t, "search", "--all", "server/listen.go")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || strings.Fields(lines[1])[2] != "deed" || !strings.Contains(lines[1], "edited server/listen.go (+1 −1)") {
		t.Errorf("search: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = e.run(t, "search", "--all", "--json", "server/listen.go")
	var hits []hitJSON
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 {
		t.Fatalf("--json: code %d, %v, %q", code, err, out)
	}
	if h := hits[0]; !h.Deed || h.Speaker != "deed" || h.Snippet != "edited server/listen.go (+1 −1)" {
		t.Errorf("hit %+v", h)
	}
	// What was said is not a deed.
	code, out, _ = e.run(t, "search", "--all", "--json", "DEED-A1")
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 || hits[0].Deed || hits[0].Speaker != "assistant" {
		t.Errorf("--json DEED-A1: code %d, %v, %q", code, err, out)
	}
}

// TestWriteHitsShowsTheMatch: the TEXT column is cut around the
// snippet's match, in terminal columns and between characters, with "…"
// on each side cut: in CJK text a cut from the start dropped a match past
// the 45th character.
func TestWriteHitsShowsTheMatch(t *testing.T) {
	prompt := strings.Repeat("我们", 33) + "索引" + strings.Repeat("的", 19) // 索引 at the 67th of 87
	latin := strings.Repeat("word ", 30) + "needle " + strings.Repeat("tail ", 30)
	for _, c := range []struct {
		name, snippet, match, want string
	}{
		{"CJK, past the cut", prompt, "索引", "…们" + strings.Repeat("我们", 11) + "索引" + strings.Repeat("的", 19)},
		{"latin, in the middle", latin, "needle", "…" + strings.Repeat("word ", 8) + "needle" + strings.Repeat(" tail", 8) + " t…"},
		{"at the start", "needle " + latin, "needle", "needle " + strings.Repeat("word ", 16) + "wo…"},
		{"family emoji around", strings.Repeat(family, 30) + " needle " + strings.Repeat(family, 30), "needle", "…" + strings.Repeat(family, 20) + " needle " + strings.Repeat(family, 20) + "…"},
	} {
		at := strings.Index(c.snippet, c.match)
		var out bytes.Buffer
		cmd := &cli.Command{Writer: &out}
		writeHits(cmd, []index.Hit{{Session: sessionID, Kind: render.BlockUser, Line: 7, Snippet: c.snippet, Match: [2]int{at, at + len(c.match)}}}, false)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		col := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], "TEXT")])
		text := string([]rune(lines[1])[col:])
		if text != c.want || textcut.Width(text) > snippetWidth {
			t.Errorf("%s: TEXT %q (%d columns), want %q", c.name, text, textcut.Width(text), c.want)
		}
	}
}

// TestWriteHitsCutsSnippetToWidth: a snippet too wide for its column is
// cut to snippetWidth terminal columns, wide characters counted as the two
// columns they take, as the sessions table cuts its prompts; one that fits
// is shown whole.
func TestWriteHitsCutsSnippetToWidth(t *testing.T) {
	for _, c := range []struct {
		name, snippet string
		cut           bool
	}{
		{"short", "retry budget", false},
		{"latin", strings.Repeat("retry ", 30), true},
		{"cjk that fits in runes but not in columns", strings.Repeat("再试", 30), true},
		{"cjk that fits", strings.Repeat("再试", 20), false},
	} {
		var out bytes.Buffer
		cmd := &cli.Command{Writer: &out}
		writeHits(cmd, []index.Hit{{Session: sessionID, Kind: render.BlockUser, Line: 7, Snippet: c.snippet}}, false)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %q", c.name, out.String())
		}
		// The columns before TEXT are as many runes wide in every row.
		col := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], "TEXT")])
		text := string([]rune(lines[1])[col:])
		if w := textcut.Width(text); w > snippetWidth || c.cut != (text != c.snippet) || c.cut && !strings.HasSuffix(text, "…") {
			t.Errorf("%s: snippet shown as %q (%d columns)", c.name, text, w)
		}
	}
}
