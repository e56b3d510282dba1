package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/handmade"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// talk is a hand-made session, rendered into a bottle by Bottle.
type talk = handmade.Session

var day = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

var talks = []talk{
	{ID: "s-app-1", CWD: "/home/u/app", Start: day, Turns: [][2]string{
		{"make the retry loop back off", "Added exponential backoff to the retry loop."},
		{"what about jitter", "Jitter added: full jitter, capped at 30 s."},
	}},
	{ID: "s-app-2", CWD: "/home/u/app/cmd/tool", Start: day.AddDate(0, 0, 2), Turns: [][2]string{
		{"the retry loop in the tool too", "The tool now shares the retry loop."},
	}},
	{ID: "s-other", CWD: "/home/u/application", Start: day.AddDate(0, 0, 5), Turns: [][2]string{
		{"retry loop for the other application", "Done, with a retry budget."},
	}},
	{ID: "s-old", CWD: "/home/u/app", Start: day.AddDate(0, -2, 0), Turns: [][2]string{
		{"first try at a retry loop", "A plain retry loop, no backoff yet."},
	}},
}

func talkIndex(t *testing.T) *Index {
	t.Helper()
	data := t.TempDir()
	for _, s := range talks {
		writeBottles(t, data, s.Bottle(t, testNow))
	}
	return openIndex(t, data)
}

func TestSearchScope(t *testing.T) {
	ix := talkIndex(t)
	cases := []struct {
		query string
		scope Scope
		want  []string
	}{
		{"retry loop", Scope{}, []string{"s-app-1", "s-app-2", "s-old", "s-other"}},
		// The project is the directory and the ones under it, not every
		// path that starts with the same letters.
		{"retry loop", Scope{Project: "/home/u/app"}, []string{"s-app-1", "s-app-2", "s-old"}},
		{"retry loop", Scope{Project: "/home/u/app/"}, []string{"s-app-1", "s-app-2", "s-old"}},
		{"retry loop", Scope{Project: "/home/u/app/cmd/tool"}, []string{"s-app-2"}},
		{"retry loop", Scope{Since: day}, []string{"s-app-1", "s-app-2", "s-other"}},
		{"retry loop", Scope{Since: day, Until: day.AddDate(0, 0, 1)}, []string{"s-app-1"}},
		{"jitter", Scope{Since: day.Add(30 * time.Minute)}, []string{"s-app-1"}},
		{"backoff", Scope{Since: day.Add(2 * time.Hour)}, nil},
		{`"loop back off"`, Scope{}, []string{"s-app-1"}},
		{`"back off loop"`, Scope{}, nil},
		{"retry budget", Scope{}, []string{"s-other"}},
		{"retry nonexistentword", Scope{}, nil},
		{"RETRY Loop", Scope{Project: "/home/u/application"}, []string{"s-other"}},
	}
	for _, c := range cases {
		hits := search(t, ix, c.query, c.scope)
		if got := sessionsOf(hits); !slices.Equal(got, c.want) {
			t.Errorf("search %q %+v: %v, want %v", c.query, c.scope, got, c.want)
		}
	}
	if _, err := ix.Search(context.Background(), `*** "" ( )`, Scope{}); err != ErrNoWords {
		t.Errorf("a query without words: %v, want ErrNoWords", err)
	}
}

// TestSearchHits checks what a hit says: who spoke, when, the bottle line
// of the word, ranking and the limit.
func TestSearchHits(t *testing.T) {
	ix := talkIndex(t)
	hits := search(t, ix, "jitter", Scope{})
	if len(hits) != 2 {
		t.Fatalf("%d hits, want 2: %+v", len(hits), hits)
	}
	kinds := []render.BlockKind{hits[0].Kind, hits[1].Kind}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []render.BlockKind{render.BlockUser, render.BlockAssistant}) {
		t.Errorf("kinds %v", kinds)
	}
	for _, h := range hits {
		want := day.Add(time.Hour)
		if h.Kind == render.BlockAssistant {
			want = want.Add(time.Minute)
		}
		if !h.Time.Equal(want) {
			t.Errorf("%s hit at %v, want %v", h.Kind, h.Time, want)
		}
		if line := lineOf(t, h.Bottle, h.Line); !slices.Contains(tokens(line), "jitter") {
			t.Errorf("line %d is %q", h.Line, line)
		}
	}
	// The block that says "retry" three times ranks above the ones that
	// say it once (bm25: term frequency against length).
	data := t.TempDir()
	writeBottles(t, data, talk{ID: "s-rank", CWD: "/p", Start: day, Turns: [][2]string{
		{"retry", "ok"}, {"retry, retry, retry!", "ok"}, {"and retry", "ok"},
	}}.Bottle(t, testNow))
	hits = search(t, openIndex(t, data), "retry", Scope{})
	if len(hits) != 3 || hits[0].Snippet != "retry, retry, retry!" {
		t.Errorf("best hit %+v", hits)
	}
	// The limit.
	var many [][2]string
	for i := range 30 {
		many = append(many, [2]string{fmt.Sprintf("widget %d", i), "ok"})
	}
	data = t.TempDir()
	writeBottles(t, data, talk{ID: "s-many", CWD: "/p", Start: day, Turns: many}.Bottle(t, testNow))
	for _, c := range []struct{ limit, want int }{{0, DefaultLimit}, {5, 5}, {1000, 30}} {
		if got := len(search(t, openIndex(t, data), "widget", Scope{Limit: c.limit})); got != c.want {
			t.Errorf("limit %d: %d hits, want %d", c.limit, got, c.want)
		}
	}
}

func TestSessions(t *testing.T) {
	ix := talkIndex(t)
	list, err := ix.Sessions(context.Background(), Scope{Project: "/home/u/app"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if want := []string{"s-app-2", "s-app-1", "s-old"}; !slices.Equal(ids, want) {
		t.Fatalf("sessions %v, want %v (newest first)", ids, want)
	}
	s := list[1]
	if s.Turns != 2 || s.Compactions != 0 || s.Mode != render.ModeFull || s.FirstPrompt != "make the retry loop back off" ||
		!s.Started.Equal(day) || !s.LastActive.Equal(day.Add(time.Hour+time.Minute)) || s.Project != "/home/u/app" ||
		s.Bottle != bottles.BottlePath(ix.store.Dir, "s-app-1") {
		t.Errorf("session %+v", s)
	}
	list, _ = ix.Sessions(context.Background(), Scope{Limit: 2})
	if len(list) != 2 || list[0].ID != "s-other" {
		t.Errorf("all projects, limit 2: %+v", list)
	}
	for _, c := range []struct {
		scope Scope
		want  int
	}{
		{Scope{Project: "/home/u/app", Limit: 1}, 3},
		{Scope{Limit: 1}, 4},
		{Scope{Project: "/home/u/app", Since: day}, 2},
		{Scope{Project: "/nowhere"}, 0},
	} {
		if n, err := ix.CountSessions(context.Background(), c.scope); err != nil || n != c.want {
			t.Errorf("CountSessions(%+v) = %d, %v; want %d", c.scope, n, err, c.want)
		}
	}
}

// TestInUse: what the index in use holds is read without building one;
// with none, it says so.
func TestInUse(t *testing.T) {
	data := t.TempDir()
	writeBottles(t, data, talks[0].Bottle(t, testNow), talks[1].Bottle(t, testNow))
	if _, err := InUse(data); !errors.Is(err, ErrUnusable) {
		t.Errorf("no index: %v, want ErrUnusable", err)
	}
	if _, err := os.Stat(Dir(data)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("InUse made the index directory: %v", err)
	}
	openIndex(t, data).Close()
	st, err := InUse(data)
	if err != nil || st.Bottles != 2 || st.Sessions != 2 || st.Blocks == 0 || st.Bytes == 0 {
		t.Errorf("InUse = %+v, %v", st, err)
	}
}

// TestWatchFollowsChanges: an index that watches the bottles directory
// sees bottles written, archived and deleted by others before each query.
func TestWatchFollowsChanges(t *testing.T) {
	data := t.TempDir()
	writeBottles(t, data, talks[0].Bottle(t, testNow))
	ix := openIndex(t, data)
	if err := ix.Watch(); err != nil {
		t.Fatal(err)
	}
	dir := bottles.BottlesDir(data)
	steps := []struct {
		what  string
		do    func()
		query string
		scope Scope
		want  []string
	}{
		{"start", func() {}, "retry", Scope{}, []string{"s-app-1"}},
		{"a new bottle", func() { writeBottles(t, data, talks[2].Bottle(t, testNow)) }, "retry", Scope{}, []string{"s-app-1", "s-other"}},
		{"archived", func() {
			if _, err := bottles.Open(filepath.Dir(dir), func() time.Time { return testNow }, nil).Archive("s-other"); err != nil {
				t.Fatal(err)
			}
		}, "retry", Scope{}, []string{"s-app-1"}},
		{"archived, asked for", func() {}, "retry", Scope{Archived: true}, []string{"s-app-1", "s-other"}},
		{"deleted", func() {
			if err := os.Remove(bottles.BottlePath(dir, "s-app-1")); err != nil {
				t.Fatal(err)
			}
		}, "retry", Scope{Archived: true}, []string{"s-other"}},
	}
	for _, s := range steps {
		s.do()
		// Events arrive asynchronously: wait for the watcher to have seen
		// them (a query never waits; here the test needs them in).
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := sessionsOf(search(t, ix, s.query, s.scope))
			if slices.Equal(got, s.want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v, want %v", s.what, got, s.want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestConcurrentWriters: one process indexing a growing bottle while
// another searches and syncs the same index never fails either.
func TestConcurrentWriters(t *testing.T) {
	data := t.TempDir()
	writeBottles(t, data, talks[0].Bottle(t, testNow))
	writer, reader := openIndex(t, data), openIndex(t, data)
	done := make(chan error, 1)
	go func() {
		s := talks[1]
		for i := range 40 {
			s.Turns = append(s.Turns, [2]string{fmt.Sprintf("question %d about the retry loop", i), "answer"})
			// (bottles.Store.Write would keep the first: these bottles record
			// no sources to compare.)
			b := s.Bottle(t, testNow)
			if err := replaceFile(bottles.BottlePath(bottles.BottlesDir(data), s.ID), b.Bytes); err != nil {
				done <- err
				return
			}
			if err := writer.Put(context.Background(), s.ID+".md", b.Bytes); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if n := len(search(t, reader, "question", Scope{Limit: MaxLimit})); n != 40 {
				t.Errorf("%d hits after the writes, want 40", n)
			}
			return
		default:
			if _, err := reader.Search(context.Background(), "retry loop", Scope{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// replaceFile replaces path by data the way bottles are written: a new
// file renamed over the old one.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TestProjectSpellings: however a project directory is written (a trailing
// slash, "." or ".." parts, doubled slashes, the root), a search and a
// session list keep the same sessions, those of that directory and the
// ones under it; the root keeps every project, like no project at all.
// A reconstructed bottle records the project by name (the base name of its
// directory, as claude-mem does) and is kept by the directory's name.
func TestProjectSpellings(t *testing.T) {
	data := t.TempDir()
	for _, s := range talks {
		writeBottles(t, data, s.Bottle(t, testNow))
	}
	recon, err := render.Render(render.Input{SessionID: "s-recon", Now: testNow, Location: time.UTC,
		ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s-recon", Project: "app", Started: day,
			Prompts: []sources.Prompt{{ID: 1, Number: 1, Text: "a retry loop from memory", Created: day}}}})
	if err != nil {
		t.Fatal(err)
	}
	if recon.State.Mode != render.ModeReconstructed {
		t.Fatalf("mode %s, want reconstructed", recon.State.Mode)
	}
	writeBottles(t, data, recon)
	ix := openIndex(t, data)
	all := []string{"s-app-1", "s-app-2", "s-old", "s-other", "s-recon"}
	app := []string{"s-app-1", "s-app-2", "s-old", "s-recon"}
	cases := []struct {
		project string
		want    []string
	}{
		{"", all},
		{"/", all},
		{"//", all},
		{"/home/u/app", app},
		{"/home/u/app/", app},
		{"/home/u/./app", app},
		{"/home//u/app", app},
		{"/home/u/cmd/../app", app},
		{"/home/u/app/cmd/tool", []string{"s-app-2"}},
		{"/home/u/application/", []string{"s-other"}},
	}
	for _, c := range cases {
		scope := Scope{Project: c.project, Limit: MaxLimit}
		checkCovers(t, ix, scope, c.want, fmt.Sprintf("in %q", c.project))
	}
}

// checkCovers checks that both a search for words every talk holds and
// the session list, in scope (said as where), find the sessions want.
func checkCovers(t *testing.T, ix *Index, scope Scope, want []string, where string) {
	t.Helper()
	if got := sessionsOf(search(t, ix, "retry loop", scope)); !slices.Equal(got, want) {
		t.Errorf("search %s: %v, want %v", where, got, want)
	}
	if got := listed(t, ix, scope); !slices.Equal(got, want) {
		t.Errorf("sessions %s: %v, want %v", where, got, want)
	}
}

// TestProjectOfSubdirectory: a search or a list from a directory inside a
// project, in which no session was started, covers that project: the
// nearest directory above it that sessions were started in. A directory
// that is itself a session's project, or that is in none (nor above one),
// covers itself and the directories under it.
func TestProjectOfSubdirectory(t *testing.T) {
	ix := talkIndex(t)
	app := []string{"s-app-1", "s-app-2", "s-old"}
	cases := []struct {
		dir     string
		project string // what Extent says was searched
		in      bool
		want    []string
	}{
		{"/home/u/app/cmd", "/home/u/app", true, app},
		{"/home/u/app/internal/deep/er", "/home/u/app", true, app},
		{"/home/u/app", "/home/u/app", true, app},
		{"/home/u/app/cmd/tool/sub", "/home/u/app/cmd/tool", true, []string{"s-app-2"}},
		{"/home/u", "/home/u", false, []string{"s-app-1", "s-app-2", "s-old", "s-other"}},
		{"/elsewhere/x", "/elsewhere/x", false, nil},
	}
	for _, c := range cases {
		scope := Scope{Project: c.dir, Limit: MaxLimit}
		checkCovers(t, ix, scope, c.want, "from "+c.dir)
		ext, err := ix.Extent(context.Background(), scope)
		if err != nil {
			t.Fatal(err)
		}
		if ext.Project != c.project || ext.InProject != c.in || ext.Sessions != len(c.want) || ext.All != len(talks) || ext.Build != nil {
			t.Errorf("extent from %s: %+v, want project %s (in %v), %d sessions of %d", c.dir, ext, c.project, c.in, len(c.want), len(talks))
		}
	}
}

// TestExtentCleared: what a scope leaves out of its sessions, cleared ones,
// is counted, so that the answer can say how to widen the search.
func TestExtentCleared(t *testing.T) {
	data := t.TempDir()
	for _, s := range talks {
		writeBottles(t, data, s.Bottle(t, testNow))
	}
	ix := openIndex(t, data)
	if _, err := bottles.Open(data, func() time.Time { return testNow }, nil).Archive("s-old"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		scope                  Scope
		sessions, cleared, all int
	}{
		{Scope{Project: "/home/u/app/cmd"}, 2, 1, 3},
		{Scope{Project: "/home/u/app/cmd", Archived: true}, 3, 0, 4},
		{Scope{}, 3, 1, 3},
		{Scope{Archived: true}, 4, 0, 4},
	}
	for _, c := range cases {
		ext, err := ix.Extent(context.Background(), c.scope)
		if err != nil {
			t.Fatal(err)
		}
		if ext.Sessions != c.sessions || ext.Cleared != c.cleared || ext.All != c.all {
			t.Errorf("extent of %+v: %+v, want %d sessions, %d cleared left out, %d in all", c.scope, ext, c.sessions, c.cleared, c.all)
		}
	}
}

// TestSessionsEvery: Every lists every session, beyond MaxLimit, where a
// search in the same scope stays within MaxLimit hits.
func TestSessionsEvery(t *testing.T) {
	data := t.TempDir()
	var bs []*render.Bottle
	const n = MaxLimit + 20
	for i := range n {
		bs = append(bs, talk{ID: fmt.Sprintf("s-every-%03d", i), CWD: "/p", Start: day.Add(time.Duration(i) * time.Minute),
			Turns: [][2]string{{"gadget", "ok"}}}.Bottle(t, testNow))
	}
	writeBottles(t, data, bs...)
	ix := openIndex(t, data)
	list, err := ix.Sessions(context.Background(), Scope{Limit: Every})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n || list[0].ID != fmt.Sprintf("s-every-%03d", n-1) {
		t.Errorf("Every listed %d sessions (first %v), want %d, newest first", len(list), list[0].ID, n)
	}
	if got := len(search(t, ix, "gadget", Scope{Limit: Every})); got != MaxLimit {
		t.Errorf("a search with Every gave %d hits, want %d", got, MaxLimit)
	}
}

// TestSearchFindsAsides indexes a bottle with a /btw side question, its
// answer and a message that was never delivered: search finds each, as
// the user's or the assistant's words, at its own line.
func TestSearchFindsAsides(t *testing.T) {
	sp := &sources.Spine{SessionID: "s-aside", CWD: "/home/u/app", Started: day, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: day, Text: "upgrade the lockfile"},
		{Kind: sources.EntryAssistant, Time: day.Add(time.Minute), Text: "Upgrading it."},
		{Kind: sources.EntryUser, Time: day.Add(2 * time.Minute), Text: "what does frozen mean", Aside: true},
		{Kind: sources.EntryAssistant, Time: day.Add(2 * time.Minute), Text: "It refuses lockfile rewrites.", Aside: true},
		{Kind: sources.EntryUser, Time: day.Add(3 * time.Minute), Text: "keep the migrations", Steering: true, Undelivered: true},
		{Kind: sources.EntryAssistant, Time: day.Add(4 * time.Minute), Text: "Upgraded."},
	}}
	b, err := render.Render(render.Input{SessionID: sp.SessionID, Spine: sp, Now: testNow, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	writeBottles(t, data, b)
	ix := openIndex(t, data)
	for _, c := range []struct {
		word, heading string
		kind          render.BlockKind
	}{
		{"frozen", "**User, aside (/btw)**", render.BlockUser},
		{"rewrites", "**Assistant, aside (/btw)**", render.BlockAssistant},
		{"migrations", "**User, while Claude was working (not delivered)**", render.BlockUser},
	} {
		hits := search(t, ix, c.word, Scope{})
		if len(hits) != 1 || hits[0].Kind != c.kind {
			t.Errorf("%q: hits %+v, want one %s hit", c.word, hits, c.kind)
			continue
		}
		if line := lineOf(t, hits[0].Bottle, hits[0].Line-1); !strings.HasPrefix(line, c.heading) {
			t.Errorf("%q: the hit's line follows %q, want %q", c.word, line, c.heading)
		}
	}
}
