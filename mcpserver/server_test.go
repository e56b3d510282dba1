package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// env is a Claude config dir and a data dir with a connected client.
type env struct {
	claude, data string
	srv          *Server
	cs           *sdk.ClientSession
}

func newEnv(t *testing.T, launched, project string) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{claude: filepath.Join(root, "claude"), data: filepath.Join(root, "data")}
	e.srv = New(Config{Reader: bottles.Reader{ClaudeDir: e.claude, DataDir: e.data, Location: time.UTC, Now: func() time.Time { return testNow }},
		Launched: launched, Project: project, Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := e.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		e.srv.Close()
	})
	return e
}

// call calls a tool and returns its text and whether it is an error.
func (e *env) call(t *testing.T, tool string, args any) (string, bool) {
	t.Helper()
	res, err := e.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.(*sdk.TextContent).Text)
	}
	return b.String(), res.IsError
}

func (e *env) ok(t *testing.T, tool string, args any) string {
	t.Helper()
	text, isErr := e.call(t, tool, args)
	if isErr {
		t.Fatalf("%s %v: error %s", tool, args, text)
	}
	return text
}

// realBottles writes the bottles of the real fixtures (both corpora) and
// returns their ids.
func (e *env) realBottles(t *testing.T) []string {
	t.Helper()
	dir := fixtures.Real(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(dir, "..", "real2", "*", "*.jsonl"))
	var ids []string
	for i, f := range append(files, more...) {
		if strings.HasPrefix(filepath.Base(f), "agent-") {
			continue
		}
		id := fmt.Sprintf("real%02d-%s", i, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
		id = strings.ReplaceAll(id, ".", "_")
		tr, err := sources.ReadTranscript(id, f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := render.Render(render.Input{SessionID: id, Spine: sources.BuildSpine(id, []*sources.Transcript{tr}), Now: testNow, Location: time.UTC})
		if err != nil {
			continue
		}
		if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

var footer = regexp.MustCompile(`\n— lines (\d+)–(\d+)(?: of (\d+))?; (?:end of the bottle|more: read \{.*"from":(\d+)\}|continue: read \{.*"from":(\d+)(?:,"to":\d+)?\}) —\n$`)

// chunkOf splits a read result into its bottle lines and footer numbers:
// first and last line shown, and the line to continue from (0 at the end).
func chunkOf(t *testing.T, text string) (body string, first, last, next int) {
	t.Helper()
	head, rest, ok := strings.Cut(text, "\n\n")
	if !ok || !strings.HasPrefix(head, "Bottle of session ") {
		t.Fatalf("no heading: %.200q", text)
	}
	m := footer.FindStringSubmatchIndex(rest)
	if m == nil {
		t.Fatalf("no footer: %q", rest[max(len(rest)-300, 0):])
	}
	num := func(i int) int {
		if m[2*i] < 0 {
			return 0
		}
		n, _ := strconv.Atoi(rest[m[2*i]:m[2*i+1]])
		return n
	}
	next = max(num(4), num(5))
	return rest[:m[0]], num(1), num(2), next
}

// TestReadRealBottles reads every real bottle through the tool: the
// outline, the latest leg, a range, and the whole bottle by following the
// continuations, which must give back the file exactly, in results that
// each fit the budget.
func TestReadRealBottles(t *testing.T) {
	e := newEnv(t, "", "/p")
	ids := e.realBottles(t)
	multiLeg := 0
	for _, id := range ids {
		path := bottles.BottlePath(bottles.BottlesDir(e.data), id)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := bottles.ReadState(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		lines = lines[:len(lines)-1] // after the last newline
		if len(st.Legs) > 1 {
			multiLeg++
		}

		outline := e.ok(t, "read", map[string]any{"session": id})
		if !strings.Contains(outline, lines[0]) || !strings.Contains(outline, "## Outline") || strings.Contains(outline, "bottled-state") {
			t.Errorf("%s: outline %.300q", id, outline)
		}
		for n := st.Outline[0]; n <= st.Outline[1]; n++ {
			if !strings.Contains(outline, lines[n-1]) {
				t.Errorf("%s: outline lacks line %d", id, n)
			}
		}
		if want := fmt.Sprintf(`the latest starts at line %d. Next: read {"session":%q,"leg":"latest"}`, st.Legs[len(st.Legs)-1], id); !strings.Contains(outline, want) {
			t.Errorf("%s: outline does not end with %q: %q", id, want, outline[max(len(outline)-200, 0):])
		}

		latest := e.ok(t, "read", map[string]any{"session": id, "leg": "latest"})
		body, first, _, _ := chunkOf(t, latest)
		if from := st.Legs[len(st.Legs)-1]; first != from || !strings.HasPrefix(strings.Join(lines[from-1:], ""), body) {
			t.Errorf("%s: latest leg starts at %d, want %d", id, first, from)
		}

		if len(lines) >= 8 {
			r := e.ok(t, "read", map[string]any{"session": id, "from": 3, "to": 7})
			body, first, last, _ := chunkOf(t, r)
			if want := strings.Join(lines[2:7], ""); body != want || first != 3 || last != 7 {
				t.Errorf("%s: lines 3–7 = %d–%d %q, want %q", id, first, last, body, want)
			}
		}

		var whole strings.Builder
		for next, parts := 1, 0; next != 0; parts++ {
			if parts > len(lines) {
				t.Fatalf("%s: the continuations do not end", id)
			}
			r := e.ok(t, "read", map[string]any{"session": id, "from": next})
			body, first, last, more := chunkOf(t, r)
			if first != next || last < first {
				t.Fatalf("%s: asked from %d, got %d–%d", id, next, first, last)
			}
			if len(body) > readBytes || strings.Count(body, "\n") > readLines {
				t.Errorf("%s: a result of %d bytes, %d lines", id, len(body), strings.Count(body, "\n"))
			}
			whole.WriteString(body)
			next = more
		}
		if whole.String() != string(data) {
			t.Errorf("%s: the continuations give back %d bytes, the bottle has %d", id, whole.Len(), len(data))
		}
	}
	if multiLeg == 0 {
		t.Errorf("no real bottle with more than one leg was read")
	}
}

// TestReadLimits: a line longer than a result is cut with a note and the
// read goes on after it; a long stretch of short lines stops at the line
// budget.
func TestReadLimits(t *testing.T) {
	e := newEnv(t, "", "/p")
	long := strings.Repeat("é", readBytes) // two bytes each: twice the budget
	var turns []sources.Entry
	turns = append(turns, sources.Entry{Kind: sources.EntryUser, Text: "short", Time: testNow},
		sources.Entry{Kind: sources.EntryAssistant, Text: long, Time: testNow})
	many := strings.TrimSpace(strings.Repeat("x\n", 2*readLines))
	turns = append(turns, sources.Entry{Kind: sources.EntryUser, Text: many, Time: testNow})
	b, err := render.Render(render.Input{SessionID: "limits", Spine: &sources.Spine{Entries: turns}, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b.Bytes), "\n")
	longAt := slices.IndexFunc(lines, func(l string) bool { return len(l) > readBytes }) + 1
	r := e.ok(t, "read", map[string]any{"session": "limits", "from": longAt})
	body, first, last, next := chunkOf(t, r)
	if first != longAt || last != longAt || next != longAt+1 || !strings.Contains(body, fmt.Sprintf("[line %d goes on for", longAt)) || !strings.Contains(body, "the whole line is in ") {
		t.Errorf("long line: %d–%d next %d, %q", first, last, next, body[max(len(body)-200, 0):])
	}
	if n := len(body); n > readBytes+300 || !strings.HasPrefix(long, strings.SplitN(body, "\n", 2)[0]) {
		t.Errorf("long line cut to %d bytes, or not on a character boundary", n)
	}
	// A line cut where a character of several code points straddles the
	// budget is cut before that character.
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"
	emoji := strings.Repeat(family, readBytes/len(family)+2)
	b, err = render.Render(render.Input{SessionID: "emoji", Spine: &sources.Spine{Entries: []sources.Entry{
		{Kind: sources.EntryUser, Text: "short", Time: testNow}, {Kind: sources.EntryAssistant, Text: emoji, Time: testNow}}}, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
		t.Fatal(err)
	}
	lines = strings.SplitAfter(string(b.Bytes), "\n")
	emojiAt := slices.IndexFunc(lines, func(l string) bool { return len(l) > readBytes }) + 1
	body, _, _, _ = chunkOf(t, e.ok(t, "read", map[string]any{"session": "emoji", "from": emojiAt}))
	if cut := strings.SplitN(body, "\n", 2)[0]; !strings.HasPrefix(emoji, cut) || len(cut)%len(family) != 0 {
		t.Errorf("a line of family emoji cut to %d bytes, inside one", len(cut))
	}
	r = e.ok(t, "read", map[string]any{"session": "limits", "from": next})
	_, first, last, _ = chunkOf(t, r)
	if last-first+1 != readLines {
		t.Errorf("short lines: read %d–%d, want %d lines", first, last, readLines)
	}
}

func TestReadErrors(t *testing.T) {
	e := newEnv(t, "", "/p")
	e.realBottles(t)
	for _, id := range []string{"shared-start-one", "shared-start-two"} {
		b, err := render.Render(render.Input{SessionID: id, Now: testNow, Spine: &sources.Spine{Entries: []sources.Entry{{Kind: sources.EntryUser, Text: "hi", Time: testNow}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "does not know which session this is"},
		{map[string]any{"session": "shared-start"}, "names 2 sessions (shared-start-one, shared-start-two)"},
		{map[string]any{"session": "share"}, "no bottle for session"},
		{map[string]any{"session": "nosuchsession"}, "no bottle for session"},
		{map[string]any{"session": "../../etc/passwd"}, "invalid session id"},
		{map[string]any{"session": "real00-DRMacIver__claude-reliability__hello-world-script__transcript", "leg": "7"}, "give \"latest\" or a number"},
		{map[string]any{"session": "real00-DRMacIver__claude-reliability__hello-world-script__transcript", "from": 100000}, "outside the bottle"},
		{map[string]any{"session": "real00-DRMacIver__claude-reliability__hello-world-script__transcript", "leg": "1", "from": 3}, "not both"},
	} {
		text, isErr := e.call(t, "read", c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("read %v: error=%v %q, want an error with %q", c.args, isErr, text, c.want)
		}
	}
	// A unique start of an id is enough.
	if text := e.ok(t, "read", map[string]any{"session": "real00-DRMac"}); !strings.Contains(text, "hello-world-script") {
		t.Errorf("prefix: %.200q", text)
	}
}

// TestThisSession: Claude Code starts the server in a session; read
// without a session reads that session's bottle, rendered on the spot when
// there is none yet or it is behind its transcript; after /clear, the new
// session is this session.
func TestThisSession(t *testing.T) {
	const launched = "0d6f5a3e-8c1b-4e2f-9a7d-3b5c1e0f2a44"
	const cleared = "1e7a6b4f-9d2c-4f3a-8b8e-4c6d2f1a3b55"
	e := newEnv(t, launched, "/home/u/app")
	dir := filepath.Join(e.claude, "projects", "-home-u-app")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, launched+".jsonl")
	rec := func(session, uuid, parent string, i int) synth.Rec {
		return synth.Rec{Session: session, UUID: uuid, Parent: parent, At: testNow.Add(time.Duration(i) * time.Minute), CWD: "/home/u/app"}
	}
	write := func(p, s string) { synth.Append(t, p, s) }
	write(path, rec(launched, "u1", "", 0).User("THIS-SESSION-P1 fix the parser")+rec(launched, "a1", "u1", 1).Assistant("m1", "THIS-SESSION-A1 fixed"))
	text := e.ok(t, "read", map[string]any{"from": 1})
	if !strings.Contains(text, "THIS-SESSION-A1 fixed") || !strings.Contains(text, "this session") {
		t.Errorf("first read: %q", text)
	}
	write(path, rec(launched, "u2", "a1", 2).User("THIS-SESSION-P2 and the tests"))
	if text := e.ok(t, "read", map[string]any{"from": 1}); !strings.Contains(text, "THIS-SESSION-P2") {
		t.Errorf("a stale bottle was read as it was: %q", text)
	}
	// /clear: a new transcript whose records name the launching session,
	// written after the launching one (a time of its own: the two writes
	// may fall in one tick of the file system's clock).
	newPath := filepath.Join(dir, cleared+".jsonl")
	write(newPath, strings.Replace(rec(cleared, "v1", "", 3).User("AFTER-CLEAR start again"), `"sessionId"`, `"session_id":"`+launched+`","sessionId"`, 1))
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if later := info.ModTime().Add(time.Second); os.Chtimes(newPath, later, later) != nil {
		t.Fatal("cannot set the new transcript's time")
	}
	if text := e.ok(t, "read", map[string]any{"from": 1}); !strings.Contains(text, "AFTER-CLEAR") || !strings.Contains(text, cleared) {
		t.Errorf("after /clear: %q", text)
	}
	if text := e.ok(t, "sessions", map[string]any{}); !strings.Contains(text, cleared+" · started") || !strings.Contains(text, "this session") {
		t.Errorf("sessions: %q", text)
	}
}

// TestSearchAndSessionsTools checks the tools' text: hits with session,
// date, speaker and line, scoped to the project unless all is asked for.
func TestSearchAndSessionsTools(t *testing.T) {
	e := newEnv(t, "", "/home/u/app")
	for i, s := range []struct{ id, cwd, user, answer string }{
		{"s-app", "/home/u/app", "how do we retry the upload", "RETRY-ANSWER with exponential backoff"},
		{"s-lib", "/home/u/lib", "retry policy for the library", "RETRY-ANSWER-LIB capped at five"},
	} {
		sp := &sources.Spine{SessionID: s.id, CWD: s.cwd, Started: testNow.Add(time.Duration(i) * time.Hour), Entries: []sources.Entry{
			{Kind: sources.EntryUser, Text: s.user, Time: testNow.Add(time.Duration(i) * time.Hour)},
			{Kind: sources.EntryAssistant, Text: s.answer, Time: testNow.Add(time.Duration(i)*time.Hour + time.Minute),
				Deeds: []sources.Deed{{Kind: sources.DeedEdit, Tool: "Edit", Target: s.cwd + "/uploader.go", Lines: true, Added: 2, Removed: 1}}},
		}}
		b, err := render.Render(render.Input{SessionID: s.id, Spine: sp, Now: testNow, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
			t.Fatal(err)
		}
	}
	text := e.ok(t, "search", map[string]any{"query": "retry"})
	if !strings.Contains(text, "2 hit(s) for \"retry\" in this project (/home/u/app)") || strings.Contains(text, "s-lib") ||
		!regexp.MustCompile(`\d\. s-app · 2026-11-30 12:0\d · (user|assistant) · line \d+`).MatchString(text) {
		t.Errorf("search: %q", text)
	}
	// A file the session changed finds it, and the hit says it is a deed.
	text = e.ok(t, "search", map[string]any{"query": "uploader.go"})
	if !regexp.MustCompile(`1 hit\(s\) for "uploader.go" .*\n1\. s-app · 2026-11-30 12:01 · deed · line \d+\n   edited uploader.go \(\+2 −1\)\n`).MatchString(text) {
		t.Errorf("search for a changed file: %q", text)
	}
	text = e.ok(t, "search", map[string]any{"query": "retry", "all": true, "limit": 1})
	if !strings.Contains(text, "1 hit(s)") || !strings.Contains(text, "/home/u/") {
		t.Errorf("search all, limit 1: %q", text)
	}
	text = e.ok(t, "search", map[string]any{"query": "retry", "since": "2026-11-30 12:30", "all": true})
	if strings.Contains(text, "s-app") || !strings.Contains(text, "s-lib") {
		t.Errorf("search since: %q", text)
	}
	text = e.ok(t, "search", map[string]any{"query": "nothing-like-this"})
	if !strings.Contains(text, "No hits") {
		t.Errorf("no hits: %q", text)
	}
	if text, isErr := e.call(t, "search", map[string]any{"query": "***"}); !isErr || !strings.Contains(text, "no words") {
		t.Errorf("no words: %v %q", isErr, text)
	}
	if text, isErr := e.call(t, "search", map[string]any{"query": "x", "since": "yesterday"}); !isErr || !strings.Contains(text, "since") {
		t.Errorf("bad since: %v %q", isErr, text)
	}
	text = e.ok(t, "sessions", map[string]any{"all": true})
	if !strings.Contains(text, "2 session(s) of all projects") || strings.Index(text, "s-lib") > strings.Index(text, "s-app") ||
		!strings.Contains(text, `"how do we retry the upload"`) || !strings.Contains(text, "1 turn(s) · 0 compaction(s) · full") {
		t.Errorf("sessions: %q", text)
	}
}

// TestIndexOpenedAgainAfterAFault: a search while the index cannot be made
// (a file stands where its directory goes) says why; once the fault is
// gone, the next search opens the index, in the same server (Claude Code
// keeps one for the whole session).
func TestIndexOpenedAgainAfterAFault(t *testing.T) {
	e := newEnv(t, "", "/home/u/app")
	sp := &sources.Spine{SessionID: "s-fault", CWD: "/home/u/app", Started: testNow, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Text: "where is the FAULTWORD", Time: testNow},
		{Kind: sources.EntryAssistant, Text: "here", Time: testNow.Add(time.Minute)},
	}}
	b, err := render.Render(render.Input{SessionID: "s-fault", Spine: sp, Now: testNow, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index.Dir(e.data), []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, isErr := e.call(t, "search", map[string]any{"query": "faultword"}); !isErr || !strings.Contains(text, "not a directory") {
		t.Errorf("search while the index cannot be made: %v %q", isErr, text)
	}
	if err := os.Remove(index.Dir(e.data)); err != nil {
		t.Fatal(err)
	}
	if text := e.ok(t, "search", map[string]any{"query": "faultword"}); !strings.Contains(text, "s-fault") {
		t.Errorf("search once the fault is gone: %q", text)
	}
}

// TestToolDefinitionsSmall: the tool definitions go with every request
// once loaded; they stay small. (Measured from a real Claude Code request:
// see README.)
func TestToolDefinitionsSmall(t *testing.T) {
	e := newEnv(t, "", "/p")
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"read", "search", "sessions"}) {
		t.Errorf("tools %v", names)
	}
	data, _ := json.Marshal(res.Tools)
	// About 4 bytes a token for this English and JSON; 600 tokens.
	if len(data) > 2400 {
		t.Errorf("tool definitions are %d bytes", len(data))
	}
}

// writeTalk renders and writes a session's bottle: one user message and
// its answer, at at, its file modified then.
func (e *env) writeTalk(t *testing.T, id, cwd, user string, at time.Time) {
	t.Helper()
	sp := &sources.Spine{SessionID: id, CWD: cwd, Started: at, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Text: user, Time: at},
		{Kind: sources.EntryAssistant, Text: "ok", Time: at.Add(time.Minute)},
	}}
	b, err := render.Render(render.Input{SessionID: id, Spine: sp, Now: testNow, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	dir := bottles.BottlesDir(e.data)
	if _, err := bottles.Open(filepath.Dir(dir), nil, nil).Write(b); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(bottles.BottlePath(dir, id), at, at); err != nil {
		t.Fatal(err)
	}
}

// TestSearchToolSaysWhatItSearched: started in a subdirectory of a
// project, the server searches that project; a search without hits says
// what it searched and how to widen it; a hit's line is the line of the
// word, also one matched after folding.
func TestSearchToolSaysWhatItSearched(t *testing.T) {
	e := newEnv(t, "", "/home/u/app/cmd")
	e.writeTalk(t, "s-app", "/home/u/app", "first line\nsecond line\nthe Café is open", testNow)
	e.writeTalk(t, "s-cleared", "/home/u/app", "an old one", testNow.Add(time.Hour))
	e.writeTalk(t, "s-lib", "/home/u/lib", "the library", testNow.Add(2*time.Hour))
	if _, err := bottles.Open(e.data, func() time.Time { return testNow }, nil).Archive("s-cleared"); err != nil {
		t.Fatal(err)
	}
	text := e.ok(t, "search", map[string]any{"query": "cafe"})
	m := regexp.MustCompile(`1 hit\(s\) for "cafe" in this project \(/home/u/app\), best first:\n1\. s-app · .* · user · line (\d+)\n`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("search from a subdirectory: %q", text)
	}
	data, err := os.ReadFile(bottles.BottlePath(bottles.BottlesDir(e.data), "s-app"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(m[1]); strings.Split(string(data), "\n")[n-1] != "the Café is open" {
		t.Errorf("hit at line %d, not the word's", n)
	}
	text = e.ok(t, "search", map[string]any{"query": "nothing-like-this"})
	const want = `No hits for "nothing-like-this" in this project (/home/u/app): 1 session, 1 cleared session left out. ` +
		`Wider: all:true (every project: 2 sessions), archived:true (the 1 cleared session too).`
	if text != want {
		t.Errorf("no hits:\n%s\nwant\n%s", text, want)
	}
	text = e.ok(t, "search", map[string]any{"query": "nothing-like-this", "all": true, "archived": true, "since": "2026-01-01"})
	if want := `No hits for "nothing-like-this" in all projects, cleared sessions included: 3 sessions, since/until applied. Wider: no since/until.`; text != want {
		t.Errorf("no hits, all:\n%s\nwant\n%s", text, want)
	}
}

// TestSearchToolWhileBuilding: while the index is being built (by another
// process, here), search and sessions answer from what is indexed and say
// how much that is.
func TestSearchToolWhileBuilding(t *testing.T) {
	e := newEnv(t, "", "/home/u/app")
	old := time.Now().Add(-30 * 24 * time.Hour)
	for i := range 3 {
		e.writeTalk(t, fmt.Sprintf("s-old-%d", i), "/home/u/app", "the walrus", old.Add(time.Duration(i)*time.Hour))
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := index.Open(ctx, e.data, index.Options{Progress: func(int64, int64) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(index.Dir(e.data), "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	e.writeTalk(t, "s-new", "/home/u/app", "the pelican", time.Now())
	const note = "Searched the newest 1 of 4 sessions (25%): the search index is still being built; search again later for the rest.\n"
	if text := e.ok(t, "search", map[string]any{"query": "pelican"}); !strings.HasPrefix(text, note) || !strings.Contains(text, "s-new") {
		t.Errorf("search while building: %q", text)
	}
	if text := e.ok(t, "search", map[string]any{"query": "walrus"}); !strings.HasPrefix(text, note+"No hits") {
		t.Errorf("search while building, no hits: %q", text)
	}
	const listed = "Listed the newest 1 of 4 sessions (25%): the search index is still being built; list again later for the rest.\n"
	if text := e.ok(t, "sessions", map[string]any{}); !strings.HasPrefix(text, listed) || !strings.Contains(text, "s-new") {
		t.Errorf("sessions while building: %q", text)
	}
}
