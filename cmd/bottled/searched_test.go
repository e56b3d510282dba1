package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// said is one session's bottle for these tests: its directory and its
// user message (answered "ok").
type said struct {
	id, cwd, text string
	at            time.Time
}

// writeSaid renders and writes the bottles of sessions into dataDir, each
// file modified at its session's time.
func writeSaid(t *testing.T, dataDir string, ss ...said) {
	t.Helper()
	dir := bottles.BottlesDir(dataDir)
	for _, s := range ss {
		sp := &sources.Spine{SessionID: s.id, CWD: s.cwd, Started: s.at, Entries: []sources.Entry{
			{Kind: sources.EntryUser, Time: s.at, Text: s.text},
			{Kind: sources.EntryAssistant, Time: s.at.Add(time.Minute), Text: "ok"},
		}}
		b, err := render.Render(render.Input{SessionID: s.id, Spine: sp, Now: s.at.Add(time.Hour), Location: time.Local})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bottles.Open(filepath.Dir(dir), nil, nil).Write(b); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(bottles.BottlePath(dir, s.id), s.at, s.at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchSaysWhatItSearched: a search that finds nothing says what it
// searched (this project and its sessions, the cleared ones left out, or
// that the directory is in no project) and which flags would search more;
// from a subdirectory of a project, it searches that project.
func TestSearchSaysWhatItSearched(t *testing.T) {
	root := t.TempDir()
	app, other := filepath.Join(root, "app"), filepath.Join(root, "other")
	deep := filepath.Join(app, "sub", "deeper")
	for _, d := range []string{deep, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(root, "data")
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.Local)
	writeSaid(t, data,
		said{"s-app", app, "the retry budget", at},
		said{"s-cleared", app, "an old retry", at.Add(time.Hour)},
		said{"s-lib", filepath.Join(root, "lib"), "unrelated words", at.Add(2 * time.Hour)})
	if _, err := bottles.Open(data, func() time.Time { return at.Add(3 * time.Hour) }, nil).Archive("s-cleared"); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--claude-dir", filepath.Join(root, "claude"), "--data-dir", data}
	cases := []struct {
		dir  string
		args []string
		code int
		says []string // stderr's last lines, each said by bottled: the answer to a search, with exit 1
	}{
		{deep, []string{"budget"}, 0, nil}, // a subdirectory searches its project
		{deep, []string{"nothinglikethis"}, 1, []string{
			"bottled: no hits in this project, " + app + ": 1 session, 1 cleared session left out",
			"bottled: to widen: --all (every project: 2 sessions), --archived (the 1 cleared session too)"}},
		{app, []string{"--since", "2026-06-01", "budget"}, 1, []string{
			"bottled: no hits in this project, " + app + ": 1 session, 1 cleared session left out, within --since/--until",
			"bottled: to widen: --all (every project: 2 sessions), --archived (the 1 cleared session too), no --since/--until"}},
		{app, []string{"--archived", "nothinglikethis"}, 1, []string{
			"bottled: no hits in this project, " + app + ": 2 sessions",
			"bottled: to widen: --all (every project: 3 sessions)"}},
		{other, []string{"budget"}, 1, []string{
			"bottled: no hits here: no session was started in " + other + ", above it or under it",
			"bottled: to widen: --all (every project: 2 sessions)"}},
		{root, []string{"nothinglikethis"}, 1, []string{
			"bottled: no hits in the 2 sessions started under " + root + " (none was started in it or above it), 1 cleared session left out",
			"bottled: to widen: --archived (the 1 cleared session too)"}},
		{other, []string{"--all", "--archived", "nothinglikethis"}, 1, []string{"bottled: no hits in every project: 3 sessions"}},
	}
	for _, c := range cases {
		t.Chdir(c.dir)
		code, out, errOut := bottled(t, nil, append(append(flags, "search"), c.args...)...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != c.code || c.code == 0 && !strings.Contains(out, "s-app") ||
			c.says != nil && !slices.Equal(lines[max(len(lines)-len(c.says), 0):], c.says) {
			t.Errorf("search %q from %s: code %d, stdout %q, stderr:\n%s\nwant code %d and stderr ending\n%s",
				c.args, c.dir, code, out, errOut, c.code, strings.Join(c.says, "\n"))
		}
	}
}

// TestSearchLineOfTheWord: the LINE of a hit, in the table and in --json,
// is the line of the bottle the word is on, not its block's heading, also
// for a word matched only after folding ("cafe" in "Café").
func TestSearchLineOfTheWord(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	writeSaid(t, data, said{"s-lines", root, "first line\nsecond line\nthe Café is open", time.Date(2026, 5, 1, 10, 0, 0, 0, time.Local)})
	bottle := bottles.BottlePath(bottles.BottlesDir(data), "s-lines")
	content, err := os.ReadFile(bottle)
	if err != nil {
		t.Fatal(err)
	}
	// The last one: the bottle's "Original request" repeats the first
	// message near its top, outside the blocks that are searched.
	lines := strings.Split(string(content), "\n")
	want := 0
	for i, l := range lines {
		if l == "the Café is open" {
			want = i + 1
		}
	}
	flags := []string{"--claude-dir", filepath.Join(root, "claude"), "--data-dir", data}
	for _, q := range []string{"cafe", "open", `"is open"`} {
		code, out, errOut := bottled(t, nil, append(flags, "search", "--all", "--json", q)...)
		var hits []hitJSON
		if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 {
			t.Fatalf("--json %s: code %d, %v, %q %q", q, code, err, out, errOut)
		}
		if hits[0].Line != want {
			t.Errorf("--json %s: line %d, want %d (the word's)", q, hits[0].Line, want)
		}
		code, out, _ = bottled(t, nil, append(flags, "search", "--all", q)...)
		rows := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(rows) != 2 || !strings.Contains(rows[1], "  "+itoa(want)+"  ") {
			t.Errorf("search %s: LINE is not %d:\n%s", q, want, out)
		}
	}
}

func itoa(n int) string { return number(n) }

// TestSearchWhileBuilding: while the index is first built (by another
// process, here), a search answers from the sessions indexed so far and
// says how much it searched, on stderr and in each --json hit.
func TestSearchWhileBuilding(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	old := time.Now().Add(-30 * 24 * time.Hour)
	writeSaid(t, data,
		said{"s-old-1", root, "the walrus", old},
		said{"s-old-2", root, "more words", old.Add(time.Hour)},
		said{"s-old-3", root, "and more", old.Add(2 * time.Hour)})
	// A build that stopped before its first step committed: nothing is
	// indexed, the three bottles are its to take in.
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := index.Open(ctx, data, index.Options{Progress: func(int64, int64) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	// Another process is at it.
	lock, err := os.OpenFile(filepath.Join(index.Dir(data), "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	// A session written since is searched at once.
	writeSaid(t, data, said{"s-new", root, "the pelican", time.Now()})
	flags := []string{"--claude-dir", filepath.Join(root, "claude"), "--data-dir", data}
	const note = "bottled: searched the newest 1 of 4 sessions (25%): the search index is still being built by another process (bottled status shows how far)\n"
	code, out, errOut := bottled(t, nil, append(flags, "search", "--all", "pelican")...)
	if code != 0 || !strings.Contains(out, "s-new") || errOut != note {
		t.Errorf("search pelican: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = bottled(t, nil, append(flags, "search", "--all", "--json", "pelican")...)
	var hits []hitJSON
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != 1 || errOut != note ||
		hits[0].Partial == nil || *hits[0].Partial != (partialJSON{Indexed: 1, Total: 4}) {
		t.Errorf("--json pelican: code %d, %v, %q, stderr %q", code, err, out, errOut)
	}
	code, _, errOut = bottled(t, nil, append(flags, "search", "--all", "walrus")...)
	if code != 1 || errOut != note+"bottled: no hits in every project: 1 session\n" {
		t.Errorf("search walrus: code %d, stderr %q", code, errOut)
	}
}

func TestSearchedWords(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-4200, "-4,200"}} {
		if got := number(c.n); got != c.want {
			t.Errorf("number(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	notes := []struct {
		b    *index.BuildState
		want string
	}{
		{nil, ""},
		{&index.BuildState{Indexed: 5000, Total: 5000}, ""},
		{&index.BuildState{Indexed: 1200, Total: 5000, Active: true},
			"searched the newest 1,200 of 5,000 sessions (24%): the search index is still being built by another process (bottled status shows how far)"},
		{&index.BuildState{Indexed: 0, Total: 1},
			`searched the newest 0 of 1 session (0%): the search index is still being built; "bottled index" finishes it, and each search goes on with it for a few seconds`},
	}
	for _, c := range notes {
		if got := buildNote(c.b, "searched"); got != c.want {
			t.Errorf("buildNote(%+v) = %q, want %q", c.b, got, c.want)
		}
	}
}

// TestBuildInterruptedKeeps: a build stopped midway keeps what it
// committed, the newest sessions, and the command says so.
func TestBuildInterruptedKeeps(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	old := time.Now().Add(-30 * 24 * time.Hour)
	writeSaid(t, data, said{"s-1", root, "one", old}, said{"s-2", root, "two", old.Add(time.Hour)})
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := index.Open(ctx, data, index.Options{Progress: func(int64, int64) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	err := buildInterrupted(ctx, dirs{data: data}, true, false)
	if want := "it keeps what it did, the newest 0 of 2 sessions; the next search, or bottled index, goes on"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want it to say %q", err, want)
	}
}

// TestSearchWithNoBottle: with sessions in the working directory but no
// bottle yet (no daemon ran), or the bottles directory a symbolic link,
// which bottled does not follow, a search says so, not that no session
// was started there.
func TestSearchWithNoBottle(t *testing.T) {
	e := newEnv(t, true)
	app, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	synth.Append(t, filepath.Join(e.claude, "projects", "-home-dev-app", "5a5a5a5a-0000-4000-8000-000000000001.jsonl"),
		synth.Rec{Session: "5a5a5a5a-0000-4000-8000-000000000001", UUID: "u1", At: time.Now(), CWD: app}.User("SEARCH-NOBOTTLE hello"))
	t.Chdir(app)
	elsewhere := filepath.Join(t.TempDir(), "bottles")
	if err := os.MkdirAll(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(t.TempDir(), "mem")
	if err := os.MkdirAll(linked, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(linked, "bottles")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, data, says string }{
		{"no data directory", filepath.Join(t.TempDir(), "nonexist"), "there is no bottle in {D}/bottles yet: bottled --claude-dir {C} --data-dir {D} run (the daemon) renders every session's, bottled --claude-dir {C} --data-dir {D} render ID one"},
		{"bottles a symbolic link", linked, "{D}/bottles (to " + elsewhere + ") is a symbolic link, which bottled does not follow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bottled(t, nil, "--claude-dir", e.claude, "--data-dir", tc.data, "search", "hello")
			says := "bottled: no hits: " + strings.NewReplacer("{D}", tc.data, "{C}", e.claude).Replace(tc.says)
			if code != exitFailed || out != "" || !strings.Contains(errOut, says) || strings.Contains(errOut, "no session was started") {
				t.Errorf("code %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, says)
			}
		})
	}
}
