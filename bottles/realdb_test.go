package bottles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// These tests render from databases written by the real claude-mem
// (internal/memwriter), through Load, as the render command and the hook do.

// rdbNow is the render time of the bottles below.
var rdbNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// rdbLoad loads a session through Load with a freshly opened database and
// renders it.
func rdbLoad(t *testing.T, claudeDir, dbPath, sid string) (*Loaded, *render.Bottle) {
	t.Helper()
	db, err := sources.OpenClaudeMemDB(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := Load(t.Context(), Request{SessionID: sid, ClaudeDir: claudeDir, ClaudeMem: db})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if l.ClaudeMemErr != nil || l.ClaudeMem == nil {
		t.Fatalf("Load: no memory: %v", l.ClaudeMemErr)
	}
	in := l.Input(sid)
	in.Now, in.Location = rdbNow, time.UTC
	b, err := render.Render(in)
	if err != nil {
		t.Fatalf("Render: %v (%s)", err, l.Why())
	}
	return l, b
}

// rdbTurn splits a bottle's body into its turns (the text between rules)
// and returns the one whose user message contains marker.
func rdbTurn(t *testing.T, bottle []byte, marker string) string {
	t.Helper()
	var found []string
	for _, part := range strings.Split(string(bottle), "\n---\n") {
		if strings.Contains(part, "**User**") && strings.Contains(part, marker) {
			found = append(found, part)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d turns contain %q, want 1:\n%s", len(found), marker, bottle)
	}
	return found[0]
}

// rdbOrder checks that items occur in the bottle in this order.
func rdbOrder(t *testing.T, bottle []byte, items ...string) {
	t.Helper()
	rest := bottle
	for _, it := range items {
		i := bytes.Index(rest, []byte(it))
		if i < 0 {
			t.Errorf("order: %q not found after %q", it, items[0])
			return
		}
		rest = rest[i+len(it):]
	}
}

// rdbCursor is the memory cursor the bottle's state should record.
func rdbCursor(t *testing.T, dbPath, memory string, prompt, obs, summary, links int64) sources.ClaudeMemCursor {
	t.Helper()
	return sources.ClaudeMemCursor{DB: rdbFileID(t, dbPath), MemorySessionID: memory, Prompt: prompt,
		Observation: obs, Summary: summary, ToolUseLinks: links}
}

// rdbLogOnFailure shows the bottle if the test fails.
func rdbLogOnFailure(t *testing.T, bottle []byte) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bottle:\n%s", bottle)
		}
	})
}

// rdbNoSecret fails if any private marker reached the bottle.
func rdbNoSecret(t *testing.T, bottle []byte) {
	t.Helper()
	if i := bytes.Index(bottle, []byte("SECRET")); i >= 0 {
		lo, hi := max(i-80, 0), min(i+80, len(bottle))
		t.Errorf("private text in the bottle: …%s…", bottle[lo:hi])
	}
}

func TestRealDBReconstructed(t *testing.T) {
	w := memwriter.Require(t)
	const (
		sid     = "5e0c1a7e-0000-4000-8000-00000000000r"
		memID   = "mem-recon"
		p1      = "RECON-ONE fix the flaky retry test"
		p2      = "RECON-TWO keep going <private>SECRET-MIXED</private> and finish"
		p2Shown = "RECON-TWO keep going  and finish"
		p3      = "<private>SECRET-WHOLE-PROMPT</private>"
	)
	long := "RECON-LONG " + strings.Repeat("a long log line\n", 300) // 4811 UTF-16 units
	ops := []memwriter.Op{
		// sdk_sessions.user_prompt keeps a fully private first prompt raw;
		// the bottle must never show it.
		/* 0 */ {"op": "session", "content": sid, "project": "recon-proj", "prompt": "<private>SECRET-SESSION-PROMPT</private>"},
		/* 1 */ {"op": "register", "content": sid, "memory": memID},
		/* 2 */ {"op": "prompt", "content": sid, "number": 1, "text": p1},
		/* 3 */ {"op": "observation", "content": sid, "prompt_number": 1, "type": "discovery",
			"title": "Read retry_test.go", "narrative": "The test sleeps for real time. It should use a fake clock.",
			"created_at_epoch": rdbEpoch(0)},
		/* 4 */ {"op": "summary", "content": sid, "prompt_number": 1, "request": "SUMMARY-REQ fix the flaky test",
			"learned": "it sleeps <private>SECRET-IN-SUMMARY</private>", "created_at_epoch": rdbEpoch(1)},
		/* 5 */ {"op": "prompt", "content": sid, "number": 2, "text": p2},
		// saveUserPrompt stores a fully private prompt raw.
		/* 6 */ {"op": "prompt", "content": sid, "number": 3, "text": p3},
		/* 7 */ {"op": "prompt", "content": sid, "number": 4, "text": long},
		/* 8 */ {"op": "observation", "content": sid, "prompt_number": 4, "type": "change",
			"title": "Swapped in a fake clock <private>SECRET-IN-TITLE</private>", "narrative": "Tests run in 2 ms; no more sleeps.",
			"created_at_epoch": rdbEpoch(2)},
		/* 9 */ {"op": "observation", "content": sid, "prompt_number": 2, "type": "change",
			"title": "Kept going", "narrative": "Finished the rest — all of it.", "created_at_epoch": rdbEpoch(3)},
	}
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "claude-mem.db")
	res := w.Write(t, dbPath, ops...)

	// A config dir with a transcript of some other session only.
	claudeDir := filepath.Join(dir, "claude")
	rdbWriteFile(t, filepath.Join(claudeDir, "projects", "-p", "0ther000-0000-4000-8000-000000000000.jsonl"),
		rdbUser(&rdbChain{sid: "0ther000-0000-4000-8000-000000000000"}, "2026-03-02T09:00:00.000Z", "someone else's session"))

	l, b := rdbLoad(t, claudeDir, dbPath, sid)
	if !errors.Is(l.TranscriptErr, sources.ErrNoTranscript) {
		t.Errorf("TranscriptErr = %v, want ErrNoTranscript", l.TranscriptErr)
	}
	bottle := b.Bytes
	rdbLogOnFailure(t, bottle)

	if b.State.Mode != render.ModeReconstructed {
		t.Errorf("state mode %q, want %q", b.State.Mode, render.ModeReconstructed)
	}
	for _, want := range []string{
		"\nmode: reconstructed — assistant messages not preserved\n",
		"project: recon-proj",
		p1, p2Shown,
		fmt.Sprintf("- [#%d] Read retry_test.go — The test sleeps for real time\n", res[3].ID),
		fmt.Sprintf("- [#%d] Swapped in a fake clock — Tests run in 2 ms\n", res[8].ID),
		fmt.Sprintf("- [#%d] Kept going — Finished the rest\n", res[9].ID),
		"\n" + summaryHeading + "\n",
		"SUMMARY-REQ fix the flaky test",
		"*(private)*",
	} {
		if !bytes.Contains(bottle, []byte(want)) {
			t.Errorf("bottle lacks %q", want)
		}
	}
	// claude-mem stores the prompt's first 3,999 UTF-16 units and "…";
	// sources keeps that less the word the cap split, and the bottle shows
	// it, then the marker.
	if len(l.ClaudeMem.Prompts) != 4 {
		t.Fatalf("loaded %d prompts, want 4", len(l.ClaudeMem.Prompts))
	}
	shown := string(utf16.Decode(utf16.Encode([]rune(long))[:3999]))
	if !strings.HasSuffix(shown, " ") && !strings.HasSuffix(shown, "\n") {
		shown = shown[:strings.LastIndexAny(shown, " \n")]
	}
	shown = strings.TrimRight(shown, " \n") + "…"
	if p := l.ClaudeMem.Prompts[3]; !p.CutByClaudeMem || p.Text != shown {
		t.Fatalf("the capped prompt was read as %d UTF-16 units ending %q, cut by claude-mem %v; want %d ending %q, cut",
			len(utf16.Encode([]rune(p.Text))), p.Text[max(0, len(p.Text)-20):], p.CutByClaudeMem,
			len(utf16.Encode([]rune(shown))), shown[len(shown)-20:])
	}
	if !bytes.Contains(bottle, []byte(shown+"\n\n[truncated at 4000 chars]\n")) {
		t.Errorf("bottle lacks the capped prompt, less the word the cap split, followed by [truncated at 4000 chars]")
	}
	if n := bytes.Count(bottle, []byte("[truncated at")); n != 1 {
		t.Errorf("%d truncation markers, want 1", n)
	}
	if bytes.Contains(bottle, []byte("**Assistant**")) {
		t.Errorf("a reconstructed bottle has an **Assistant** heading")
	}
	rdbNoSecret(t, bottle)
	// Observations and summaries under the prompts they name.
	rdbOrder(t, bottle, "**User**", p1, fmt.Sprintf("[#%d]", res[3].ID), summaryHeading,
		"**User**", p2Shown, fmt.Sprintf("[#%d]", res[9].ID),
		"**User**", "*(private)*",
		"**User**", "RECON-LONG", "[truncated at 4000 chars]", fmt.Sprintf("[#%d]", res[8].ID))

	want := rdbCursor(t, dbPath, memID, res[7].ID, max(res[3].ID, res[8].ID, res[9].ID), res[4].ID, 0)
	if b.State.ClaudeMem == nil || *b.State.ClaudeMem != want {
		t.Errorf("state memory cursor %+v, want %+v", b.State.ClaudeMem, want)
	}
	if *b.State.ClaudeMem != l.ClaudeMem.Cursor {
		t.Errorf("state memory cursor %+v differs from the session's cursor %+v", b.State.ClaudeMem, l.ClaudeMem.Cursor)
	}
	rdbStateInFile(t, b)

	// The session moves on: another writer run adds rows.
	more := w.Write(t, dbPath,
		memwriter.Op{"op": "prompt", "content": sid, "number": 5, "text": "RECON-FIVE ship it"},
		memwriter.Op{"op": "observation", "content": sid, "prompt_number": 5, "type": "change", "title": "Shipped",
			"narrative": "Tagged v1.2.", "created_at_epoch": rdbEpoch(4)},
		memwriter.Op{"op": "summary", "content": sid, "prompt_number": 5, "request": "ship", "created_at_epoch": rdbEpoch(5)},
	)
	_, b2 := rdbLoad(t, claudeDir, dbPath, sid)
	if !bytes.Contains(b2.Bytes, []byte(fmt.Sprintf("- [#%d] Shipped — Tagged v1.2\n", more[1].ID))) {
		t.Errorf("re-rendered bottle lacks the new observation #%d", more[1].ID)
	}
	rdbCheckAdvance(t, filepath.Join(dir, "bottles"), b, b2)
}

func TestRealDBFull(t *testing.T) {
	w := memwriter.Require(t)
	const (
		sid   = "f0110000-0000-4000-8000-0000000000f1"
		memID = "mem-full"
		u1    = "FULL-ONE refactor the retry loop"
		u2    = "FULL-TWO add a test <private>SECRET-FULL-PRIVATE</private> please"
		// What claude-mem stores, and what the bottle shows: the element
		// goes, the spaces around it stay.
		u2Shown = "FULL-TWO add a test  please"
		u3      = "FULL-THREE run the whole suite"
	)
	// The transcript: four user turns (the third entirely private, which
	// claude-mem's session-init route does not store), tool calls in the
	// first two.
	c := &rdbChain{sid: sid}
	var tr strings.Builder
	tr.WriteString(rdbUser(c, "2026-03-02T10:00:00.000Z", u1))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:00:05.000Z", "msg_01", rdbText("ANSWER-ONE reading the loop first.")))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:00:06.000Z", "msg_01", rdbToolUse("toolu_F1", "Read", map[string]any{"file_path": "/w/retry.go"})))
	tr.WriteString(rdbToolResult(c, "2026-03-02T10:00:07.000Z", "toolu_F1", "package retry"))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:00:30.000Z", "msg_02", rdbText("ANSWER-ONE-DONE the loop now backs off.")))
	tr.WriteString(rdbUser(c, "2026-03-02T10:10:00.000Z", u2))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:10:05.000Z", "msg_03", rdbToolUse("toolu_F2", "Bash", map[string]any{"command": "go test ./..."})))
	tr.WriteString(rdbToolResult(c, "2026-03-02T10:10:09.000Z", "toolu_F2", "ok"))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:10:30.000Z", "msg_04", rdbText("ANSWER-TWO the test passes <private>SECRET-IN-ANSWER</private>.")))
	tr.WriteString(rdbUser(c, "2026-03-02T10:15:00.000Z", "<private>SECRET-WHOLE-TURN</private>"))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:15:10.000Z", "msg_05", rdbText("ANSWER-PRIVATE noted.")))
	tr.WriteString(rdbUser(c, "2026-03-02T10:20:00.000Z", u3))
	tr.WriteString(rdbAssistant(c, "2026-03-02T10:20:30.000Z", "msg_06", rdbText("ANSWER-THREE all green.")))

	dir := t.TempDir()
	claudeDir := filepath.Join(dir, "claude")
	rdbWriteFile(t, filepath.Join(claudeDir, "projects", "-p", sid+".jsonl"), tr.String())

	at := func(clock string) int64 {
		ts, err := time.Parse(time.RFC3339, "2026-03-02T"+clock+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return ts.UnixMilli()
	}
	ops := []memwriter.Op{
		/* 0 */ {"op": "session", "content": sid, "project": "full-proj", "prompt": u1},
		/* 1 */ {"op": "register", "content": sid, "memory": memID},
		/* 2 */ {"op": "prompt", "content": sid, "number": 1, "text": u1},
		/* 3 */ {"op": "tool_use", "content": sid, "tool_use_id": "toolu_F1", "tool_name": "Read", "prompt_number": 1},
		/* 4 */ {"op": "prompt", "content": sid, "number": 2, "text": u2},
		/* 5 */ {"op": "tool_use", "content": sid, "tool_use_id": "toolu_F2", "tool_name": "Bash", "prompt_number": 2},
		/* 6 */ {"op": "prompt", "content": sid, "number": 3, "text": u3},
		// Placed by its tool_uses link (turn 2), although its prompt number
		// names turn 1 and its time falls in turn 4.
		/* 7 */ {"op": "observation", "content": sid, "prompt_number": 1, "type": "change",
			"title": "OBS-TOOL ran the tests", "narrative": "All packages pass. Took 3 s.",
			"created_at_epoch": at("10:25:00"), "tool_use_ids": []string{"toolu_F2"}},
		// Placed by prompt number (turn 4), although its time falls in turn 1.
		/* 8 */ {"op": "observation", "content": sid, "prompt_number": 3, "type": "discovery",
			"title": "OBS-PROMPT suite layout", "narrative": "Three packages have tests; one is slow.",
			"created_at_epoch": at("10:05:00")},
		// No prompt number: placed by time, between turn 2 (10:10) and
		// turn 3 (10:15).
		/* 9 */ {"op": "observation", "content": sid, "type": "discovery",
			"title": "OBS-TIME read retry.go", "narrative": "The loop sleeps a fixed second; no jitter.",
			"created_at_epoch": at("10:12:30")},
		/* 10 */ {"op": "summary", "content": sid, "prompt_number": 3, "request": "SUMMARY-FULL-REQ run the suite",
			"completed": "SUMMARY-FULL-DONE", "created_at_epoch": at("10:21:00")},
	}
	dbPath := filepath.Join(dir, "claude-mem.db")
	res := w.Write(t, dbPath, ops...)
	if res[7].Linked != 1 {
		t.Fatalf("precondition: the observation linked %d tool uses, want 1", res[7].Linked)
	}
	obsTool, obsPrompt, obsTime := res[7].ID, res[8].ID, res[9].ID

	l, b := rdbLoad(t, claudeDir, dbPath, sid)
	if l.TranscriptErr != nil || len(l.Chain) != 1 {
		t.Fatalf("transcript not loaded: %v (%d files)", l.TranscriptErr, len(l.Chain))
	}
	bottle := b.Bytes
	rdbLogOnFailure(t, bottle)

	if b.State.Mode != render.ModeFull || !bytes.Contains(bottle, []byte("\nmode: full\n")) {
		t.Errorf("mode %q, want full (and a 'mode: full' header)", b.State.Mode)
	}
	for _, want := range []string{
		"ANSWER-ONE reading the loop first.", "ANSWER-ONE-DONE the loop now backs off.",
		"ANSWER-TWO the test passes", "ANSWER-PRIVATE noted.", "ANSWER-THREE all green.",
		"*(private)*",
	} {
		if !bytes.Contains(bottle, []byte(want)) {
			t.Errorf("bottle lacks %q", want)
		}
	}
	tests := []struct {
		name string
		id   int64
		line string
		turn string // marker of the user turn it belongs under
	}{
		{"by tool_uses link", obsTool, "OBS-TOOL ran the tests — All packages pass", "FULL-TWO"},
		{"by prompt number", obsPrompt, "OBS-PROMPT suite layout — Three packages have tests", "FULL-THREE"},
		{"by time", obsTime, "OBS-TIME read retry.go — The loop sleeps a fixed second", "FULL-TWO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := fmt.Sprintf("- [#%d] %s\n", tt.id, tt.line)
			if n := bytes.Count(bottle, []byte(fmt.Sprintf("[#%d]", tt.id))); n != 1 {
				t.Fatalf("observation #%d appears %d times, want once", tt.id, n)
			}
			if turn := rdbTurn(t, bottle, tt.turn); !strings.Contains(turn, line) {
				t.Errorf("observation line %q is not under the %s turn:\n%s", line, tt.turn, turn)
			}
		})
	}
	// Observations come after the user message and before the answer.
	rdbOrder(t, bottle, u1, "ANSWER-ONE",
		"FULL-TWO", fmt.Sprintf("[#%d]", obsTime), fmt.Sprintf("[#%d]", obsTool), "ANSWER-TWO",
		"*(private)*", "ANSWER-PRIVATE",
		u3, fmt.Sprintf("[#%d]", obsPrompt), "ANSWER-THREE")
	for _, notWant := range []string{"SUMMARY-FULL", "Session summary (generated"} {
		if bytes.Contains(bottle, []byte(notWant)) {
			t.Errorf("full bottle shows the summary (%q)", notWant)
		}
	}
	if turn := rdbTurn(t, bottle, "FULL-TWO"); !strings.Contains(turn, "\n"+u2Shown+"\n") {
		t.Errorf("the second turn does not show %q:\n%s", u2Shown, turn)
	}
	rdbNoSecret(t, bottle)

	wantCursor := rdbCursor(t, dbPath, memID, res[6].ID, max(obsTool, obsPrompt, obsTime), res[10].ID, 1)
	if b.State.ClaudeMem == nil || *b.State.ClaudeMem != wantCursor {
		t.Errorf("state memory cursor %+v, want %+v", b.State.ClaudeMem, wantCursor)
	}
	if len(b.State.Transcripts) != 1 || b.State.Transcripts[0].Offset != int64(tr.Len()) {
		t.Errorf("state transcripts %+v, want one read to offset %d", b.State.Transcripts, tr.Len())
	}
	rdbStateInFile(t, b)

	// Only the database moves on from here (the transcript is unchanged),
	// so any advance of the state is the memory cursor's. First a link
	// alone: the observer reports what it already stored, claude-mem
	// keeps the existing row (same content hash) and links the tool call
	// to it, so only the tool_uses link count grows, and the observation
	// moves to the turn of the tool call.
	link := w.Write(t, dbPath, memwriter.Op{"op": "observation", "content": sid, "type": "discovery",
		"title": "OBS-TIME read retry.go", "narrative": "The loop sleeps a fixed second; no jitter.",
		"created_at_epoch": at("10:12:30"), "tool_use_ids": []string{"toolu_F1"}})
	if link[0].ID != obsTime || link[0].Linked != 1 {
		t.Fatalf("precondition: the repeated observation got id %d and %d links, want the existing #%d and 1", link[0].ID, link[0].Linked, obsTime)
	}
	_, b2 := rdbLoad(t, claudeDir, dbPath, sid)
	if turn := rdbTurn(t, b2.Bytes, "FULL-ONE"); !strings.Contains(turn, fmt.Sprintf("- [#%d] OBS-TIME", obsTime)) {
		t.Errorf("once linked to toolu_F1, observation #%d is not under the first turn:\n%s", obsTime, turn)
	}
	if m := b2.State.ClaudeMem; m == nil || m.ToolUseLinks != 2 || m.Observation != b.State.ClaudeMem.Observation {
		t.Errorf("cursor after a link alone %+v, want 2 links and observation %d", m, b.State.ClaudeMem.Observation)
	}
	rdbCheckAdvance(t, filepath.Join(dir, "bottles-link"), b, b2)

	// Then a new observation.
	more := w.Write(t, dbPath, memwriter.Op{"op": "observation", "content": sid, "prompt_number": 2, "type": "change",
		"title": "OBS-LATE wrote the test", "narrative": "Observed late.", "created_at_epoch": at("10:12:00")})
	_, b3 := rdbLoad(t, claudeDir, dbPath, sid)
	if turn := rdbTurn(t, b3.Bytes, "FULL-TWO"); !strings.Contains(turn, fmt.Sprintf("- [#%d] OBS-LATE wrote the test — Observed late\n", more[0].ID)) {
		t.Errorf("re-rendered bottle lacks the new observation #%d under the second turn:\n%s", more[0].ID, turn)
	}
	if m := b3.State.ClaudeMem; m == nil || m.ToolUseLinks != 2 || m.Observation != more[0].ID {
		t.Errorf("cursor after a new observation %+v, want 2 links and observation %d", m, more[0].ID)
	}
	rdbCheckAdvance(t, filepath.Join(dir, "bottles-more"), b2, b3)
}

// rdbCheckAdvance checks that newer was rendered from later source state
// than older, and that Write keeps the bottle on disk from moving back.
func rdbCheckAdvance(t *testing.T, dir string, older, newer *render.Bottle) {
	t.Helper()
	if !newer.State.Covers(&older.State) {
		t.Errorf("the newer state does not cover the older:\nnewer %+v\nolder %+v", newer.State.ClaudeMem, older.State.ClaudeMem)
	}
	if older.State.Covers(&newer.State) {
		t.Errorf("the older state covers the newer: the state did not advance:\nolder %+v\nnewer %+v", older.State.ClaudeMem, newer.State.ClaudeMem)
	}
	path := BottlePath(dir, older.State.Session)
	steps := []struct {
		name string
		b    *render.Bottle
		want Outcome
		disk *render.Bottle // what the file holds afterwards
	}{
		{"first bottle", older, Written, older},
		{"newer replaces older", newer, Written, newer},
		{"older does not replace newer", older, Covered, newer},
		{"same again", newer, Covered, newer},
	}
	for _, s := range steps {
		got, err := storeAt(dir).Write(s.b)
		if err != nil {
			t.Fatalf("%s: Write: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s: Write = %v, want %v", s.name, got, s.want)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, s.disk.Bytes) {
			which := "neither bottle"
			if bytes.Equal(data, older.Bytes) {
				which = "the older bottle"
			} else if bytes.Equal(data, newer.Bytes) {
				which = "the newer bottle"
			}
			t.Errorf("%s: the file holds %s", s.name, which)
		}
	}
}

// rdbStateInFile checks that the state the bottle carries is the state
// Render returned.
func rdbStateInFile(t *testing.T, b *render.Bottle) {
	t.Helper()
	got, err := render.StateOf(b.Bytes)
	if err != nil {
		t.Fatalf("bottle state: %v", err)
	}
	if !reflect.DeepEqual(*got, b.State) {
		t.Errorf("state in the file %+v differs from the rendered state %+v", *got, b.State)
	}
	if got.Bytes != len(b.Bytes) {
		t.Errorf("state says %d bytes, bottle has %d", got.Bytes, len(b.Bytes))
	}
}

// rdbEpoch is a fixed observer batch time, i seconds apart (ms).
func rdbEpoch(i int) int64 { return int64(1_790_000_000_000) + int64(i)*1000 }

func rdbWriteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// rdbChain writes the records of one transcript, each the child of the
// one before, in the shape Claude Code 2.1.x writes them.
type rdbChain struct {
	sid  string
	n    int
	last string // uuid of the previous record
}

func (c *rdbChain) record(ts string, fields map[string]any) string {
	c.n++
	uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", c.n)
	rec := map[string]any{
		"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/home/dev/proj",
		"sessionId": c.sid, "version": "2.1.39", "gitBranch": "main", "uuid": uuid, "timestamp": ts,
	}
	if c.last != "" {
		rec["parentUuid"] = c.last
	}
	for k, v := range fields {
		rec[k] = v
	}
	c.last = uuid
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

func rdbUser(c *rdbChain, ts, text string) string {
	return c.record(ts, map[string]any{
		"type":             "user",
		"message":          map[string]any{"role": "user", "content": text},
		"thinkingMetadata": map[string]any{"maxThinkingTokens": 31999}, "todos": []any{}, "permissionMode": "default",
	})
}

func rdbAssistant(c *rdbChain, ts, msgID string, block map[string]any) string {
	return c.record(ts, map[string]any{
		"type":      "assistant",
		"requestId": "req_" + msgID,
		"message": map[string]any{
			"model": "claude-opus-4-6", "id": msgID, "type": "message", "role": "assistant",
			"content": []any{block}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 3, "output_tokens": 11},
		},
	})
}

func rdbToolResult(c *rdbChain, ts, toolUseID, output string) string {
	parent := c.last
	return c.record(ts, map[string]any{
		"type": "user",
		"message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": toolUseID, "content": output},
		}},
		"toolUseResult":           map[string]any{"stdout": output, "stderr": "", "interrupted": false},
		"sourceToolAssistantUUID": parent,
	})
}

func rdbText(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func rdbToolUse(id, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input, "caller": map[string]any{"type": "direct"}}
}

// rdbFileID is the identity of the file at path, as sources records it.
func rdbFileID(t *testing.T, path string) sources.FileID {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return sources.FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}
