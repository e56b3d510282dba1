package inject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/render"

	"github.com/bottled-dev/bottled/internal/synth"
)

// env is a Claude config dir and a data dir with one session's transcript.
type env struct {
	claude, data, transcript, id string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{claude: filepath.Join(root, "claude"), data: filepath.Join(root, "mem"), id: "4c1f7b2e-9d3a-4e5f-8a6b-1c2d3e4f5a6b"}
	e.transcript = filepath.Join(e.claude, "projects", "-home-dev-app", e.id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(e.transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	e.append(t, user("u1", "", "HOOK-P1 make the importer idempotent")+assistant("a1", "u1", "m1", "HOOK-A1 The importer now skips rows it has seen."))
	return e
}

func (e *env) cfg() Config {
	return Config{ClaudeDir: e.claude, DataDir: e.data, Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }}
}

func (e *env) payload(source string) *Payload {
	return &Payload{SessionID: e.id, TranscriptPath: e.transcript, CWD: "/home/dev/app", HookEventName: "SessionStart", Source: source}
}

func (e *env) bottle() string { return bottles.BottlePath(bottles.BottlesDir(e.data), e.id) }

func (e *env) append(t *testing.T, s string) {
	t.Helper()
	synth.Append(t, e.transcript, s)
}

// user and assistant build one record (newline included).
func user(uuid, parent, text string) string {
	return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: recordTime, CWD: "/home/dev/app"}.User(text)
}

func assistant(uuid, parent, msg, text string) string {
	return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: recordTime.Add(5 * time.Second)}.Assistant(msg, text)
}

var recordTime = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// decode checks the output is exactly the JSON Claude Code reads from a
// SessionStart hook and returns the context.
func decode(t *testing.T, out []byte) string {
	t.Helper()
	var v map[string]map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	h, ok := v["hookSpecificOutput"]
	if len(v) != 1 || !ok || len(h) != 2 || h["hookEventName"] != "SessionStart" {
		t.Fatalf("output shape = %s", out)
	}
	ctx, ok := h["additionalContext"].(string)
	if !ok || ctx == "" {
		t.Fatalf("additionalContext = %#v", h["additionalContext"])
	}
	if n := len([]rune(ctx)); n > 10000 {
		t.Fatalf("context is %d characters; Claude Code caps hook context at 10,000", n)
	}
	return ctx
}

func TestSessionStartSources(t *testing.T) {
	for _, source := range []string{"startup", "clear", "fork", "", "something-new", "compact", "resume"} {
		t.Run("source="+source, func(t *testing.T) {
			e := newEnv(t)
			out, err := SessionStart(context.Background(), e.cfg(), e.payload(source))
			if err != nil {
				t.Fatal(err)
			}
			// This session was never compacted: a resume loads all of it.
			wants := source == "compact"
			if wants != (out != nil) {
				t.Fatalf("output = %s; want output: %v", out, wants)
			}
			if !wants {
				if _, err := os.Stat(e.bottle()); !os.IsNotExist(err) {
					t.Errorf("source %q wrote a bottle", source)
				}
				return
			}
			ctx := decode(t, out)
			for _, want := range []string{"# bottled — session continuation", e.bottle(), "Current task: HOOK-P1 make the importer idempotent", "do not repeat it"} {
				if !strings.Contains(ctx, want) {
					t.Errorf("pointer lacks %q:\n%s", want, ctx)
				}
			}
		})
	}
}

// TestSessionStartFreshness checks when the hook renders: a missing bottle
// is rendered, a fresh one is not touched, appended records that carry no
// content leave it fresh, and a new message makes it stale.
func TestSessionStartFreshness(t *testing.T) {
	e := newEnv(t)
	start := func() string {
		t.Helper()
		out, err := SessionStart(context.Background(), e.cfg(), e.payload("compact"))
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, out)
	}
	mtime := func() time.Time {
		info, err := os.Stat(e.bottle())
		if err != nil {
			t.Fatal(err)
		}
		return info.ModTime()
	}
	first := start() // missing: rendered
	m1 := mtime()
	past := m1.Add(-time.Hour)
	os.Chtimes(e.bottle(), past, past)

	if again := start(); again != first {
		t.Errorf("firing twice gave different pointers")
	}
	if !mtime().Equal(past) {
		t.Errorf("a fresh bottle was rewritten")
	}

	// What a compaction appends: boundary, summary, hook progress, tool traffic.
	e.append(t, `{"type":"system","subtype":"compact_boundary","parentUuid":null,"logicalParentUuid":"a1","uuid":"b1","compactMetadata":{"trigger":"auto"},"timestamp":"2026-11-30T11:00:00.000Z"}`+"\n"+
		`{"type":"user","parentUuid":"b1","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"uuid":"c1","message":{"role":"user","content":"This session is being continued from a previous conversation."}}`+"\n"+
		`{"type":"progress","parentUuid":"c1","uuid":"p1","data":{"type":"hook_progress","hookEvent":"SessionStart","hookName":"SessionStart:compact"}}`+"\n"+
		`{"type":"attachment","parentUuid":"p1","uuid":"h1","attachment":{"type":"hook_success","hookName":"SessionStart:compact","stdout":"{}"}}`+"\n"+
		`{"type":"user","parentUuid":"h1","uuid":"t1","toolUseResult":{"stdout":"ok"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"ok"}]}}`+"\n")
	start()
	if !mtime().Equal(past) {
		t.Errorf("records without content made the bottle stale")
	}

	e.append(t, user("u2", "t1", "HOOK-P2 and log what was skipped"))
	ctx := start()
	if mtime().Equal(past) {
		t.Fatalf("a new message did not make the bottle stale")
	}
	data, _ := os.ReadFile(e.bottle())
	if !strings.Contains(string(data), "HOOK-P2 and log what was skipped") || !strings.Contains(ctx, "Current task: HOOK-P2") {
		t.Errorf("re-rendered bottle or pointer lacks the new message")
	}
}

func TestSessionStartUntrustedInput(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(t.TempDir(), e.id+".jsonl")
	if err := os.WriteFile(outside, []byte(user("x1", "", "OUTSIDE-SECRET must not be read")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		outside,
		filepath.Join(e.claude, "projects", "..", "..", filepath.Base(outside)),
		filepath.Join(e.claude, "projects", "-other", "not-this-session.jsonl"),
		"relative/" + e.id + ".jsonl",
	} {
		p := e.payload("compact")
		p.TranscriptPath = path
		out, err := SessionStart(context.Background(), e.cfg(), p)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ctx := decode(t, out)
		data, _ := os.ReadFile(e.bottle())
		if strings.Contains(string(data), "OUTSIDE-SECRET") || !strings.Contains(ctx, e.bottle()) {
			t.Errorf("transcript_path %s was trusted", path)
		}
	}
	entries, _ := os.ReadDir(e.data)
	for _, en := range entries {
		if en.Name() != "bottles" {
			t.Errorf("wrote %s outside the bottles dir", en.Name())
		}
	}
}

func TestSessionStartFailuresPrintNothing(t *testing.T) {
	t.Run("nothing to render", func(t *testing.T) {
		e := newEnv(t)
		os.Remove(e.transcript)
		out, err := SessionStart(context.Background(), e.cfg(), e.payload("compact"))
		if out != nil || err == nil {
			t.Errorf("out %s, err %v; want nothing and an error for the log", out, err)
		}
	})
	t.Run("deadline exceeded", func(t *testing.T) {
		e := newEnv(t)
		cfg := e.cfg()
		cfg.Timeout = time.Nanosecond
		out, err := SessionStart(context.Background(), cfg, e.payload("compact"))
		if out != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("out %s, err %v; want nothing and a deadline error", out, err)
		}
	})
	t.Run("unwritable bottles dir", func(t *testing.T) {
		e := newEnv(t)
		os.MkdirAll(e.data, 0o700)
		os.WriteFile(bottles.BottlesDir(e.data), []byte("a file where the dir should be"), 0o600)
		out, err := SessionStart(context.Background(), e.cfg(), e.payload("compact"))
		if out != nil || err == nil {
			t.Errorf("out %s, err %v; want nothing and an error", out, err)
		}
	})
}

func TestSessionEnd(t *testing.T) {
	for _, reason := range []string{"clear", "logout", "prompt_input_exit", "other", "", "bypass_permissions_disabled"} {
		t.Run("reason="+reason, func(t *testing.T) {
			e := newEnv(t)
			if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil {
				t.Fatal(err)
			}
			p := e.payload("")
			p.HookEventName, p.Reason = "SessionEnd", reason
			if err := SessionEnd(context.Background(), e.cfg(), p); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(e.bottle())
			archived := bottles.Open(e.data, nil, nil).ArchivedPath(e.id)
			if reason == "clear" {
				want := filepath.Join(bottles.ArchiveDir(bottles.BottlesDir(e.data)), "20261130T120000Z-"+e.id+".1.md")
				if !os.IsNotExist(err) || archived != want {
					t.Fatalf("after clear: bottle stat err %v, archived %q; want moved to %s", err, archived, want)
				}
				return
			}
			if err != nil || archived != "" {
				t.Errorf("reason %q moved the bottle (stat err %v, archived %q)", reason, err, archived)
			}
		})
	}
	t.Run("no bottle", func(t *testing.T) {
		e := newEnv(t)
		if err := SessionEnd(context.Background(), e.cfg(), &Payload{SessionID: e.id, Reason: "clear"}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestArchivedStaysArchived: after /clear archives a bottle, renders of the
// unchanged session do not bring it back, noise appended to the transcript
// does not either, and a resumed conversation does.
func TestArchivedStaysArchived(t *testing.T) {
	e := newEnv(t)
	if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil {
		t.Fatal(err)
	}
	if err := SessionEnd(context.Background(), e.cfg(), &Payload{SessionID: e.id, Reason: "clear"}); err != nil {
		t.Fatal(err)
	}
	renderWrite := func() bottles.Outcome {
		t.Helper()
		l, err := bottles.Load(context.Background(), bottles.Request{SessionID: e.id, ClaudeDir: e.claude})
		if err != nil {
			t.Fatal(err)
		}
		in := l.Input(e.id)
		in.Now = time.Now()
		b, err := render.Render(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := bottles.Open(e.data, nil, nil).Write(b)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := renderWrite(); got != bottles.Archived {
		t.Errorf("render of the unchanged session: %v, want Archived", got)
	}
	e.append(t, `{"type":"attachment","parentUuid":"a1","uuid":"h9","attachment":{"type":"hook_success","hookName":"SessionEnd"}}`+"\n")
	if got := renderWrite(); got != bottles.Archived {
		t.Errorf("render after appended noise: %v, want Archived", got)
	}
	e.append(t, user("u7", "h9", "HOOK-RESUMED pick it up again"))
	if got := renderWrite(); got != bottles.Written {
		t.Errorf("render after the session resumed: %v, want Written", got)
	}
}

func TestReadPayload(t *testing.T) {
	const good = `{"session_id":"abc-123_X","transcript_path":"/x/abc.jsonl","cwd":"/x","hook_event_name":"SessionStart","source":"compact","model":"m","extra":{"a":1}}`
	tests := []struct {
		name  string
		input io.Reader
		ok    bool
	}{
		{"valid", strings.NewReader(good), true},
		{"valid with trailing newline and more", strings.NewReader(good + "\n{}garbage"), true},
		{"stdin left open after the payload", openAfter(good), true},
		{"empty", strings.NewReader(""), false},
		{"garbage", strings.NewReader("not json at all"), false},
		{"array", strings.NewReader(`[1,2]`), false},
		{"oversized", io.MultiReader(strings.NewReader(`{"session_id":"a","pad":"`), strings.NewReader(strings.Repeat("x", maxPayload))), false},
		{"never completes", openAfter(`{"session_id":"abc"`), false},
		{"hostile id: path", strings.NewReader(`{"session_id":"../../etc/passwd"}`), false},
		{"hostile id: slash", strings.NewReader(`{"session_id":"a/b"}`), false},
		{"hostile id: empty", strings.NewReader(`{"session_id":""}`), false},
		{"hostile id: long", strings.NewReader(`{"session_id":"` + strings.Repeat("a", 200) + `"}`), false},
		{"hostile id: unicode", strings.NewReader(`{"session_id":"ab\u00e9"}`), false},
		{"hostile id: newline", strings.NewReader(`{"session_id":"ab\ncd"}`), false},
	}
	defer func(old time.Duration) { readTimeout = old }(readTimeout)
	readTimeout = 200 * time.Millisecond
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReadPayload(tc.input)
			if (err == nil) != tc.ok {
				t.Fatalf("ReadPayload: %+v, %v; want ok=%v", p, err, tc.ok)
			}
			if tc.ok && (p.SessionID != "abc-123_X" || p.Source != "compact") {
				t.Errorf("payload = %+v", p)
			}
		})
	}
}

// openAfter yields s and then blocks, like a stdin that is never closed.
func openAfter(s string) io.Reader {
	r, w := io.Pipe()
	go w.Write([]byte(s)) // never closed
	return r
}

// TestSessionStartWithClaudeMem checks freshness against a database
// written by the real claude-mem: a bottle is fresh while claude-mem has
// nothing new for the session, stale once it stores an observation, and
// the re-rendered bottle shows it.
func TestSessionStartWithClaudeMem(t *testing.T) {
	w := memwriter.Require(t)
	e := newEnv(t)
	db := filepath.Join(e.data, "claude-mem.db")
	w.Write(t, db,
		memwriter.Op{"op": "session", "content": e.id, "project": "app", "prompt": "HOOK-P1 make the importer idempotent"},
		memwriter.Op{"op": "register", "content": e.id, "memory": "mem-" + e.id},
		memwriter.Op{"op": "prompt", "content": e.id, "number": 1, "text": "HOOK-P1 make the importer idempotent"},
		memwriter.Op{"op": "kill"})
	start := func() {
		t.Helper()
		out, err := SessionStart(context.Background(), e.cfg(), e.payload("compact"))
		if err != nil {
			t.Fatal(err)
		}
		decode(t, out)
	}
	start()
	past := time.Now().Add(-time.Hour)
	os.Chtimes(e.bottle(), past, past)
	start()
	if info, _ := os.Stat(e.bottle()); !info.ModTime().Equal(past) {
		t.Fatalf("bottle re-rendered although claude-mem had nothing new")
	}
	w.Write(t, db,
		memwriter.Op{"op": "observation", "content": e.id, "prompt_number": 1, "type": "change", "title": "Made imports idempotent",
			"narrative": "HOOK-OBS rows are keyed by their source id. Details follow."},
		memwriter.Op{"op": "kill"})
	start()
	data, _ := os.ReadFile(e.bottle())
	if !strings.Contains(string(data), "] Made imports idempotent — HOOK-OBS rows are keyed by their source id") {
		t.Errorf("the new observation did not make the bottle stale:\n%s", data)
	}
}

// TestSessionStartLeavesObserverSessionsAlone runs the hook for a session
// of claude-mem's own observer (its cwd in <data-dir>/observer-sessions),
// as it compacts: no bottle is made and nothing is printed.
func TestSessionStartLeavesObserverSessionsAlone(t *testing.T) {
	for _, source := range []string{"compact", "resume"} {
		t.Run(source, func(t *testing.T) {
			e := newEnv(t)
			// A compacted session, which would get a pointer on resume too
			// if it were the user's.
			e.append(t, boundaryRec("b1", "a1")+summaryRec("c1", "b1"))
			p := e.payload(source)
			if out, err := SessionStart(context.Background(), e.cfg(), p); err != nil || out == nil {
				t.Fatalf("the user's own session: output %s, err %v; want a pointer", out, err)
			}
			os.Remove(e.bottle())
			p.CWD = filepath.Join(e.data, "observer-sessions", "x")
			out, err := SessionStart(context.Background(), e.cfg(), p)
			if err != nil || out != nil {
				t.Errorf("cwd %s: output %s, err %v; want nothing", p.CWD, out, err)
			}
			if _, err := os.Stat(e.bottle()); !os.IsNotExist(err) {
				t.Errorf("cwd %s: a bottle was written", p.CWD)
			}
		})
	}
}

// TestSessionEndArchivesTheLastTurn clears a session whose bottle on disk
// is a turn behind (the daemon renders a debounce after each write, later
// on a busy machine): the archive holds the last turn, and a render of the
// sources as they are, as the daemon's next one, leaves the session
// archived rather than bringing it back as live. A session cleared before
// any bottle was written is archived too.
func TestSessionEndArchivesTheLastTurn(t *testing.T) {
	for _, bottled := range []bool{true, false} {
		t.Run(fmt.Sprintf("bottle on disk %v", bottled), func(t *testing.T) {
			e := newEnv(t)
			if bottled {
				if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil {
					t.Fatal(err)
				}
			}
			e.append(t, user("u2", "a1", "HOOK-P2 and the exporter")+assistant("a2", "u2", "m2", "HOOK-A2 The exporter too."))
			p := e.payload("")
			p.HookEventName, p.Reason = "SessionEnd", "clear"
			if err := SessionEnd(context.Background(), e.cfg(), p); err != nil {
				t.Fatal(err)
			}
			archived := bottles.Open(e.data, nil, nil).ArchivedPath(e.id)
			b, _ := os.ReadFile(archived)
			if !strings.Contains(string(b), "HOOK-A2 The exporter too.") {
				t.Fatalf("the archive (%q) lacks the last turn:\n%s", archived, b)
			}
			_, out, err := bottles.Open(e.data, nil, nil).WriteFromDisk(context.Background(),
				bottles.Request{SessionID: e.id, Transcript: e.transcript, ClaudeDir: e.claude})
			if err != nil || out != bottles.Archived {
				t.Errorf("a render of the cleared session: %v, %v; want it left archived", out, err)
			}
			if _, err := os.Stat(e.bottle()); !os.IsNotExist(err) {
				t.Errorf("the cleared session has a live bottle again (stat err %v)", err)
			}
		})
	}
}
