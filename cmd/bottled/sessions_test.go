package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/textcut"
)

// listEnv is a Claude config dir and a data dir holding the bottles of
// sessions in two projects, app and lib (real directories, so that a test
// can work in them), written by the render command from synthetic
// transcripts.
type listEnv struct {
	env
	app, lib string
}

// listSession is a session of a listEnv: one prompt and its answer at at,
// then more turns.
type listSession struct {
	id, project, prompt string
	at                  time.Time
	turns               int
}

// The sessions of newListEnv, oldest first. appOld is cleared (/clear).
const (
	appOld   = "a0a0a0a0-1111-4000-8000-000000000001"
	appNew   = "a0a0a0a0-2222-4000-8000-000000000002"
	libOnly  = "b1b1b1b1-3333-4000-8000-000000000003"
	appClear = "a0a0a0a0-4444-4000-8000-000000000004"
)

var listBase = time.Date(2026, 5, 1, 10, 0, 0, 0, time.Local)

func newListEnv(t *testing.T) *listEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &listEnv{env: env{claude: filepath.Join(root, "claude"), data: filepath.Join(root, "mem")},
		app: filepath.Join(root, "src", "app"), lib: filepath.Join(root, "src", "lib")}
	for _, dir := range []string{e.app, e.lib} {
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []listSession{
		{appOld, e.app, "LIST-OLD fix the parser", listBase, 1},
		{appNew, e.app, "LIST-NEW add a retry budget " + strings.Repeat("and more words ", 10), listBase.Add(2 * time.Hour), 3},
		{libOnly, e.lib, "LIST-LIB the library's own session", listBase.Add(3 * time.Hour), 1},
		{appClear, e.app, "LIST-CLEARED this was cleared", listBase.Add(4 * time.Hour), 2},
	} {
		e.write(t, s)
		if code, _, errOut := e.run(t, "render", s.id); code != 0 {
			t.Fatalf("render %s: %s", s.id, errOut)
		}
	}
	if code, _, errOut := e.runIn(t, `{"session_id":"`+appClear+`","reason":"clear"}`, "hook", "session-end"); code != 0 || !strings.Contains(errOut, "archived") {
		t.Fatalf("session-end: %s", errOut)
	}
	return e
}

// withIndex builds the search index first, so that a command need not
// say it builds it.
func (e *listEnv) withIndex(t *testing.T) *listEnv {
	t.Helper()
	if code, _, errOut := e.run(t, "index"); code != 0 {
		t.Fatalf("index: %s", errOut)
	}
	return e
}

// write writes a session's transcript: its prompt and an answer, then a
// prompt and an answer a minute apart for each further turn.
func (e *listEnv) write(t *testing.T, s listSession) {
	t.Helper()
	var b strings.Builder
	parent := ""
	for i := range s.turns {
		at := s.at.Add(time.Duration(2*i) * time.Minute)
		prompt := s.prompt
		if i > 0 {
			prompt = "LIST-TURN " + string(rune('A'+i))
		}
		u, a := "u"+string(rune('a'+i)), "a"+string(rune('a'+i))
		b.WriteString(synth.Rec{Session: s.id, UUID: u, Parent: parent, At: at, CWD: s.project}.User(prompt))
		b.WriteString(synth.Rec{Session: s.id, UUID: a, Parent: u, At: at.Add(time.Minute), CWD: s.project}.Assistant("m"+u, "LIST-ANSWER "+prompt))
		parent = a
	}
	path := e.transcriptPath(s.id, s.project)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *listEnv) transcriptPath(id, project string) string {
	return filepath.Join(sources.ProjectsDir(e.claude), sources.ProjectKey(project), id+".jsonl")
}

func (e *listEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return e.runIn(t, "", args...)
}

func (e *listEnv) runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return e.runCtx(t, context.Background(), stdin, args...)
}

func (e *listEnv) runCtx(t *testing.T, ctx context.Context, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(ctx, append(append([]string{"bottled"}, e.flags()...), args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// table reads the sessions command's table: its header and the SESSION
// cell of each row.
func table(t *testing.T, out string) (head string, ids []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "SESSION") {
		t.Fatalf("no table header: %q", out)
	}
	for _, l := range lines[1:] {
		ids = append(ids, strings.Fields(l)[0])
	}
	return lines[0], ids
}

// TestSessionsCommand lists sessions as a person does, from a project's
// directory: newest first, this project only unless --all, cleared ones
// only with --archived.
func TestSessionsCommand(t *testing.T) {
	e := newListEnv(t).withIndex(t)
	t.Chdir(e.app)

	code, out, errOut := e.run(t, "sessions")
	head, ids := table(t, out)
	if code != 0 || errOut != "" || strings.Join(ids, " ") != appNew+" "+appOld {
		t.Fatalf("sessions: code %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	for _, col := range []string{"SESSION", "STARTED", "LAST ACTIVE", "TURNS", "COMPACTIONS", "MODE", "FIRST PROMPT"} {
		if !strings.Contains(head, col) {
			t.Errorf("header %q lacks %s", head, col)
		}
	}
	if strings.Contains(head, "PROJECT") {
		t.Errorf("a list of one project shows its project: %q", head)
	}
	rows := strings.Split(out, "\n")
	newRow := rows[1]
	for _, want := range []string{
		listBase.Add(2 * time.Hour).Format("2006-01-02 15:04"),               // started
		listBase.Add(2*time.Hour + 5*time.Minute).Format("2006-01-02 15:04"), // last active: the third answer
		"  3  ", "  0  ", "full", "LIST-NEW add a retry budget",
	} {
		if !strings.Contains(newRow, want) {
			t.Errorf("row %q lacks %q", newRow, want)
		}
	}
	// Aligned: every cell starts where its header does.
	for _, col := range []string{"STARTED", "TURNS", "MODE", "FIRST PROMPT"} {
		at := strings.Index(head, col)
		for _, row := range rows[1:3] {
			if len(row) < at || row[at-1] != ' ' || row[at] == ' ' {
				t.Errorf("column %s not aligned:\n%s", col, out)
			}
		}
	}

	code, out, _ = e.run(t, "sessions", "--archived")
	_, ids = table(t, out)
	if code != 0 || strings.Join(ids, " ") != appClear+" "+appNew+" "+appOld || !strings.Contains(out, appClear+" (cleared)") {
		t.Errorf("--archived: code %d\n%s", code, out)
	}

	code, out, _ = e.run(t, "sessions", "--all")
	head, ids = table(t, out)
	if code != 0 || strings.Join(ids, " ") != libOnly+" "+appNew+" "+appOld || !strings.Contains(head, "PROJECT") ||
		!strings.Contains(out, e.lib) || !strings.Contains(out, e.app) {
		t.Errorf("--all: code %d\n%s", code, out)
	}

	code, out, _ = e.run(t, "sessions", "--all", "--archived", "--limit", "2")
	_, ids = table(t, out)
	if code != 0 || strings.Join(ids, " ") != appClear+" "+libOnly {
		t.Errorf("--all --archived --limit 2: code %d\n%s", code, out)
	}
	// Flags after the words too, and the global ones.
	code, out, _ = bottled(t, nil, "sessions", "--limit=1", "--data-dir", e.data, "--claude-dir", e.claude)
	if _, ids = table(t, out); code != 0 || strings.Join(ids, " ") != appNew {
		t.Errorf("--limit=1 with the directories after it: code %d\n%s", code, out)
	}
}

func TestSessionsJSON(t *testing.T) {
	e := newListEnv(t)
	t.Chdir(e.app)
	code, out, _ := e.run(t, "sessions", "--json", "--archived")
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got) != 3 {
		t.Fatalf("code %d, %v:\n%s", code, err, out)
	}
	for _, field := range []string{"session", "bottle", "project", "mode", "started", "lastActive", "turns", "compactions", "archived", "firstPrompt"} {
		if _, ok := got[0][field]; !ok {
			t.Errorf("no field %q in %v", field, got[0])
		}
	}
	var list []sessionJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	want := sessionJSON{Session: appNew, Bottle: filepath.Join(e.data, "bottles", appNew+".md"), Project: e.app, Mode: "full",
		Started: listBase.Add(2 * time.Hour).Format(time.RFC3339), LastActive: listBase.Add(2*time.Hour + 5*time.Minute).Format(time.RFC3339),
		Turns: 3, FirstPrompt: "LIST-NEW add a retry budget and more words and more words and more words and more words and more wo…"}
	if list[1] != want {
		t.Errorf("session\n%#v, want\n%#v", list[1], want)
	}
	if c := list[0]; c.Session != appClear || !c.Archived || filepath.Dir(c.Bottle) != filepath.Join(e.data, "bottles", "archive") || c.Turns != 2 {
		t.Errorf("cleared session %+v", c)
	}

	code, out, errOut := e.run(t, "sessions", "--json", "--limit", "1", "--all", "--since", "x")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "since") {
		t.Errorf("an unknown flag: code %d, %q %q", code, out, errOut)
	}
}

// TestSessionsNone: an empty list exits 1 saying what was listed and how
// to widen it.
func TestSessionsNone(t *testing.T) {
	e := newListEnv(t)
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	code, out, errOut := e.run(t, "sessions")
	if code != exitFailed || out != "" || !strings.Contains(errOut, "no sessions") || !strings.Contains(errOut, elsewhere) ||
		!strings.Contains(errOut, "--all (3 sessions in every project)") {
		t.Errorf("from a directory without sessions: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = e.run(t, "sessions", "--json")
	if code != exitFailed || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json without sessions: code %d, %q", code, out)
	}

	// lib has its one session; it was not cleared. Only app's clear can
	// widen app's list.
	t.Chdir(e.lib)
	if code, out, _ := e.run(t, "sessions"); code != 0 || !strings.Contains(out, libOnly) {
		t.Errorf("lib: code %d\n%s", code, out)
	}

	// A data dir without bottles: nothing anywhere, and nothing to widen.
	other := newEnv(t, false)
	code, _, errOut = bottled(t, nil, "--claude-dir", other.claude, "--data-dir", other.data, "sessions", "--all", "--archived")
	if code != exitFailed || !strings.Contains(errOut, "no sessions") || strings.Contains(errOut, "widen") {
		t.Errorf("no bottles at all: code %d, stderr %q", code, errOut)
	}

	for _, bad := range [][]string{{"sessions", "extra"}, {"sessions", "--limit", "0"}, {"sessions", "--limit", "101"}} {
		if code, _, errOut := e.run(t, bad...); code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: code %d, stderr %q", bad, code, errOut)
		}
	}
}

// Characters of several code points, which a cut by code point splits.
const (
	family    = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466" // two columns
	keycap    = "1\uFE0F\u20E3"                                              // one column, as uniseg counts it
	hangulNFD = "\u1112\u1161\u11AB"                                         // 한 as jamo: two columns
)

// TestCutLeftKeepsCharacters: the project column is cut from its start
// between characters.
func TestCutLeftKeepsCharacters(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  string
	}{
		{"ab" + family + "cd", 5, "…" + family + "cd"},
		{"/home/me/" + hangulNFD + hangulNFD + hangulNFD, 5, "…" + hangulNFD + hangulNFD},
		{"/home/me/proj", 20, "/home/me/proj"},
	} {
		if got := cutLeft(c.text, c.width); got != c.want {
			t.Errorf("cutLeft(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}

// TestSessionsCutToTheLine: on a terminal, a row fits its line, the
// first prompt cut to what is left; elsewhere the prompt is whole.
func TestSessionsCutToTheLine(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"one word too many", 12, "one word to…"},
		{"稳定性测试", 6, "稳定…"},         // two columns a character
		{"anything", 0, "anything"}, // not a terminal
		{"abc", 1, "…"},
		// Cut between characters, each as wide as a terminal shows it.
		{"ab" + family + "cd", 5, "ab" + family + "…"},
		{"ab" + keycap + "cd", 4, "ab" + keycap + "…"},
		{hangulNFD + hangulNFD + hangulNFD, 5, hangulNFD + hangulNFD + "…"},
		{"caf" + "e\u0301" + " au lait", 5, "caf" + "e\u0301" + "…"},
	} {
		if got := cutToWidth(c.text, c.width); got != c.want {
			t.Errorf("cutToWidth(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}

// TestSessionsFitTheTerminal: on a terminal every row of the list fits
// its line (a wide character takes two columns), with or without --all,
// however long a project's path: the path is cut from the left, keeping
// its last directories, and a narrower terminal gives up the columns
// least missed; each row keeps the start of its session's id (enough for
// bottled show), its first prompt's first words and, with --all, its
// project's last directory. Not on a terminal, the rows are whole.
func TestSessionsFitTheTerminal(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.Local)
	long := "/home/me/work/clients/some-very-long-client-name/projects/deeply/nested/repository-name"
	list := []index.Session{
		{ID: "3f9c2a71-5d0e-4b8a-9c61-2e7f0a4d8b15", Project: long, Mode: render.ModeFull, Started: at, LastActive: at.Add(time.Hour),
			Turns: 14, Compactions: 2, FirstPrompt: "Refactor the payment retry loop so it backs off and says why it gave up"},
		{ID: "0d6f5a3e-8c1b-4e2f-9a7d-3b5c1e0f2a44", Project: "/home/me/src/app", Mode: render.ModeReconstructed, Started: at, LastActive: at,
			Turns: 1234, Compactions: 10, Archived: true, FirstPrompt: "写一个函数计算斐波那契数列并解释它的复杂度以及如何优化它的内存使用"},
		{ID: "7a1b2c3d-0000-4000-8000-000000000000", Project: "/home/me/项目/稳定性测试/服务", Mode: render.ModeFull, LastActive: at,
			FirstPrompt: ""},
		{ID: "3f9c2a71-9999-4000-8000-000000000000", Project: "/home/me/src/app", Mode: render.ModeFull, LastActive: at,
			FirstPrompt: "an id that starts as another's"},
		{ID: "7a1b2c3d-0000-4000-8000-000000000000", Project: "/home/me/项目/稳定性测试/服务", Mode: render.ModeFull, LastActive: at,
			Archived: true, FirstPrompt: "its cleared bottle, listed with --archived"},
	}
	for _, all := range []bool{false, true} {
		for _, width := range []int{80, 100, 120, 160, 200} {
			var b strings.Builder
			writeSessions(&b, list, all, width)
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != len(list)+1 {
				t.Fatalf("all %v, width %d: %d lines, want %d:\n%s", all, width, len(lines), len(list)+1, b.String())
			}
			for i, line := range lines {
				if w := textcut.Width(line); w > width {
					t.Errorf("all %v, width %d: line %d is %d columns wide:\n%s", all, width, i, w, line)
				}
				if i == 0 {
					continue
				}
				s := list[i-1]
				prompt := s.FirstPrompt
				if prompt == "" {
					prompt = "—"
				}
				wants := []string{s.ID[:len("3f9c2a71-5")], cutToWidth(prompt, 12)[:len(cutToWidth(prompt, 12))-len("…")]}
				if all {
					wants = append(wants, filepath.Base(s.Project))
				}
				for _, want := range wants {
					if !strings.Contains(line, strings.TrimSuffix(want, "…")) {
						t.Errorf("all %v, width %d: row %d lacks %q:\n%s", all, width, i, want, line)
					}
				}
			}
			if width >= 160 && !all && !strings.Contains(b.String(), list[0].ID) {
				t.Errorf("width %d: the ids are cut, though the rows fit with them whole:\n%s", width, b.String())
			}
			if width >= 200 && !strings.Contains(b.String(), "STARTED") {
				t.Errorf("width %d: a column was left out, though the rows fit with it:\n%s", width, b.String())
			}
		}
		var b strings.Builder
		writeSessions(&b, list, all, 0)
		for _, s := range list {
			for _, whole := range []string{s.ID, s.FirstPrompt, "COMPACTIONS", "STARTED", "LAST ACTIVE", "MODE"} {
				if !strings.Contains(b.String(), whole) {
					t.Errorf("all %v, not on a terminal: the list lacks %q:\n%s", all, whole, b.String())
				}
			}
			if all && !strings.Contains(b.String(), s.Project) {
				t.Errorf("not on a terminal: the list lacks %q:\n%s", s.Project, b.String())
			}
		}
	}
}
