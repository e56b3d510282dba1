package bottles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// sessionDirs is a bottles directory and a Claude config dir for the
// tests of finding and reading sessions.
type sessionDirs struct{ bottles, claude string }

func newSessionDirs(t *testing.T) sessionDirs {
	t.Helper()
	root := t.TempDir()
	return sessionDirs{bottles: filepath.Join(root, "data", "bottles"), claude: filepath.Join(root, "claude")}
}

// bottle writes the bottle of session id: one turn with prompt, at.
func (d sessionDirs) bottle(t *testing.T, id, prompt string, at time.Time) string {
	t.Helper()
	sp := &sources.Spine{SessionID: id, CWD: "/home/u/app", Started: at, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Text: prompt, Time: at},
		{Kind: sources.EntryAssistant, Text: "done", Time: at.Add(time.Minute)},
	}}
	b, err := render.Render(render.Input{SessionID: id, Spine: sp, Now: testNow, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storeAt(d.bottles).Write(b); err != nil {
		t.Fatal(err)
	}
	return BottlePath(d.bottles, id)
}

// transcript writes session id's transcript: a user message, text.
func (d sessionDirs) transcript(t *testing.T, id, text string) string {
	t.Helper()
	path := filepath.Join(sources.ProjectsDir(d.claude), "-home-u-app", id+".jsonl")
	uuid := "u" + strings.ReplaceAll(text, " ", "-")
	synth.Append(t, path, `{"type":"user","uuid":"`+uuid+`","parentUuid":null,"sessionId":"`+id+`","timestamp":"2026-11-30T11:00:00.000Z","message":{"role":"user","content":"`+text+`"}}`+"\n")
	return path
}

// TestFindSession: a session is named by its whole id or by a start of it
// (MinPrefix characters at least) that only it has, among the live
// bottles, the archived ones and the transcripts; a start several have is
// an AmbiguousError listing them, newest first, with what tells them
// apart.
func TestFindSession(t *testing.T) {
	d := newSessionDirs(t)
	at := testNow.Add(-3 * time.Hour)
	d.bottle(t, "aaaa1111-live", "LIVE prompt", at)
	d.bottle(t, "bbbb2222-cleared", "CLEARED prompt", at)
	if _, err := storeAt(d.bottles).Archive("bbbb2222-cleared"); err != nil {
		t.Fatal(err)
	}
	d.transcript(t, "cccc3333-transcript", "TRANSCRIPT only")
	d.bottle(t, "dddd4444-one", "OLDER twin", at)
	d.bottle(t, "dddd4444-two", "NEWER twin", at.Add(time.Hour))
	// Its last record is at+2h; the file was written later than that (a
	// title record, say), which is no activity of the session.
	twin := filepath.Join(sources.ProjectsDir(d.claude), "-home-u-app", "dddd4444-three.jsonl")
	synth.Append(t, twin, synth.Rec{Session: "dddd4444-three", UUID: "u-twin", At: at.Add(-time.Hour)}.User("TWIN without a bottle")+
		synth.Rec{Session: "dddd4444-three", UUID: "a-twin", Parent: "u-twin", At: at.Add(2 * time.Hour)}.Assistant("m-twin", "answered")+
		`{"type":"ai-title","aiTitle":"twin","sessionId":"dddd4444-three"}`+"\n")
	if err := os.Chtimes(twin, testNow.Add(time.Hour), testNow.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	d.bottle(t, "short", "SHORT id", at)

	for _, c := range []struct {
		arg, want string
	}{
		{"aaaa1111-live", "aaaa1111-live"}, // whole id
		{"aaaa11", "aaaa1111-live"},        // start of a live bottle's id
		{"bbbb2222", "bbbb2222-cleared"},   // of an archived bottle's
		{"cccc33", "cccc3333-transcript"},  // of a transcript's
		{"short", "short"},                 // a whole id shorter than MinPrefix
		{"aaaa1", "aaaa1"},                 // too short a start: taken as an id
		{"zzzzzzzz", "zzzzzzzz"},           // nothing: taken as an id (claude-mem may know it)
		{"dddd4444-one", "dddd4444-one"},   // whole id, though others start so
		{"dddd4444-th", "dddd4444-three"},  // unique again
		{"cccc3333-transcript", "cccc3333-transcript"},
		{"AAAA11", "aaaa1111-live"},                    // ids are lower-case: a start is matched in any case
		{"DDDD4444-TH", "dddd4444-three"},              // of a transcript's
		{"BBBB2222-CLEARED", "bbbb2222-cleared"},       // a whole id in upper case
		{"CCCC3333-TRANSCRIPT", "cccc3333-transcript"}, // of a transcript
	} {
		got, err := storeAt(d.bottles).FindSession(d.claude, c.arg)
		if err != nil || got != c.want {
			t.Errorf("findSession(%q) = %q, %v; want %q", c.arg, got, err, c.want)
		}
	}

	_, err := storeAt(d.bottles).FindSession(d.claude, "dddd4444")
	var amb *AmbiguousError
	if !errors.As(err, &amb) {
		t.Fatalf("an ambiguous start: %v, want an AmbiguousError", err)
	}
	if amb.Count != 3 || len(amb.Candidates) != 3 {
		t.Fatalf("%d candidates of %d, want 3: %+v", len(amb.Candidates), amb.Count, amb.Candidates)
	}
	// Newest first by the time of each one's last message: the twin
	// without a bottle, whose transcript's last record is at at+2h (not
	// its file's time, later); then the newer twin, whose bottle shows its
	// last message at at+1h+1m.
	want := []Candidate{
		{ID: "dddd4444-three", LastActive: at.Add(2 * time.Hour)},
		{ID: "dddd4444-two", Bottle: BottlePath(d.bottles, "dddd4444-two"), LastActive: at.Add(time.Hour + time.Minute), FirstPrompt: "NEWER twin"},
		{ID: "dddd4444-one", Bottle: BottlePath(d.bottles, "dddd4444-one"), LastActive: at.Add(time.Minute), FirstPrompt: "OLDER twin"},
	}
	for i, c := range amb.Candidates {
		w := want[i]
		if c.ID != w.ID || c.Bottle != w.Bottle || c.FirstPrompt != w.FirstPrompt || !c.LastActive.Equal(w.LastActive) {
			t.Errorf("candidate %d = %+v, want %+v", i, c, w)
		}
	}
	if msg := err.Error(); !strings.Contains(msg, `"dddd4444" names 3 sessions (dddd4444-three, dddd4444-two, dddd4444-one): give more of the id`) {
		t.Errorf("message %q", msg)
	}

	// The archived bottle of a cleared session is a candidate too.
	d.bottle(t, "bbbb2222-other", "OTHER prompt", at)
	_, err = storeAt(d.bottles).FindSession(d.claude, "bbbb2222")
	if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Fatalf("archived and live: %v", err)
	}
	for _, c := range amb.Candidates {
		if c.ID == "bbbb2222-cleared" && (!c.Archived || filepath.Dir(c.Bottle) != ArchiveDir(d.bottles) || c.FirstPrompt != "CLEARED prompt") {
			t.Errorf("the cleared session's candidate: %+v", c)
		}
	}

	if _, err := storeAt(d.bottles).FindSession(d.claude, "../../etc/passwd"); err == nil || !strings.Contains(err.Error(), "invalid session id") {
		t.Errorf("a hostile id: %v", err)
	}
}

// TestFindSessionManyCandidates: a start that many sessions have lists
// the newest few (by their files' times, which a render sets), and counts
// them all.
func TestFindSessionManyCandidates(t *testing.T) {
	d := newSessionDirs(t)
	for i := range maxCandidates + 3 {
		at := testNow.Add(time.Duration(i) * time.Minute)
		path := d.bottle(t, "many00-"+string(rune('a'+i)), "prompt", at)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	_, err := storeAt(d.bottles).FindSession(d.claude, "many00")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || amb.Count != maxCandidates+3 || len(amb.Candidates) != maxCandidates {
		t.Fatalf("%v", err)
	}
	if last := string(rune('a' + maxCandidates + 2)); amb.Candidates[0].ID != "many00-"+last {
		t.Errorf("newest candidate %s, want many00-%s", amb.Candidates[0].ID, last)
	}
}

// TestEnsureRead: a bottle to read is brought up to date first; a cleared
// session's archived bottle is read as it is; without a bottle or
// anything to render, the error says why; a render that fails comes with
// the bottle as it is.
func TestEnsureRead(t *testing.T) {
	d := newSessionDirs(t)
	store := storeAt(d.bottles)
	req := ReadRequest{SessionID: "s-read", ClaudeDir: d.claude, Timeout: time.Minute}
	read := func(want string) *Current {
		t.Helper()
		cur, err := store.EnsureRead(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cur.Data), want) {
			t.Errorf("read lacks %q:\n%s", want, cur.Data)
		}
		if disk, _ := os.ReadFile(cur.Path); string(disk) != string(cur.Data) {
			t.Errorf("the bytes are not the file at %s", cur.Path)
		}
		return cur
	}

	_, err := store.EnsureRead(context.Background(), req)
	if !errors.Is(err, render.ErrNothing) || !strings.Contains(err.Error(), "no bottle for session s-read") ||
		!strings.Contains(err.Error(), "no transcript") {
		t.Errorf("nothing at all: %v", err)
	}

	d.transcript(t, "s-read", "READ-P1 first")
	read("READ-P1") // missing: rendered
	d.transcript(t, "s-read", "READ-P2 second")
	read("READ-P2") // stale: rendered
	if _, err := storeAt(d.bottles).Archive("s-read"); err != nil {
		t.Fatal(err)
	}
	if cur := read("READ-P2"); !cur.Archived || filepath.Dir(cur.Path) != ArchiveDir(d.bottles) {
		t.Errorf("a cleared session gave %s (archived %v)", cur.Path, cur.Archived)
	}

	// A bottle whose transcript is gone and whose session claude-mem does
	// not know: nothing to render, the bottle is read as it is.
	d.bottle(t, "s-kept", "KEPT prompt", testNow)
	req.SessionID = "s-kept"
	read("KEPT prompt")

	// A render cut short: the error, with the stale bottle as it is.
	req.SessionID = "s-read"
	d.transcript(t, "s-read", "READ-P3 third")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cur, err := store.EnsureRead(ctx, req)
	if !errors.Is(err, context.Canceled) || cur == nil || !strings.Contains(string(cur.Data), "READ-P2") || strings.Contains(string(cur.Data), "READ-P3") || !cur.Archived {
		t.Errorf("a cancelled render: %v, %v", cur, err)
	}
}

// TestReadLatest: a session's bottle as it is on disk is its live one,
// else its newest archived one, else none.
func TestReadLatest(t *testing.T) {
	d := newSessionDirs(t)
	store := storeAt(d.bottles)
	const id = "s-latest"
	read := func(what string) *Current {
		t.Helper()
		cur, err := store.ReadLatest(id)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return cur
	}
	if cur := read("no bottle"); cur != nil {
		t.Errorf("no bottle gave %s", cur.Path)
	}
	live := d.bottle(t, id, "LATEST-P1 first", testNow)
	if cur := read("live"); cur == nil || cur.Path != live || cur.Archived || !strings.Contains(string(cur.Data), "LATEST-P1") {
		t.Errorf("the live bottle gave %+v", cur)
	}
	archived, err := store.Archive(id)
	if err != nil {
		t.Fatal(err)
	}
	if cur := read("archived"); cur == nil || cur.Path != archived || !cur.Archived || !strings.Contains(string(cur.Data), "LATEST-P1") {
		t.Errorf("the archived bottle gave %+v", cur)
	}
	// Resumed: a live bottle again (written as it is: the store would keep
	// this session cleared, its sources being those of the archive).
	resumed, err := render.Render(render.Input{SessionID: id, Now: testNow, Location: time.UTC, Spine: &sources.Spine{
		SessionID: id, CWD: "/home/u/app", Started: testNow, Entries: []sources.Entry{{Kind: sources.EntryUser, Text: "LATEST-P2 resumed", Time: testNow}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(live, resumed.Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if cur := read("live again"); cur == nil || cur.Path != live || cur.Archived || !strings.Contains(string(cur.Data), "LATEST-P2") {
		t.Errorf("the live bottle beside an archived one gave %+v", cur)
	}
}
