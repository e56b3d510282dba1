package sources

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/memwriter"
)

// memT0 is the observer batch time the tests give observations and
// summaries (ms); prompts and sessions get the time of the writer's run.
const memT0 = int64(1_790_000_000_000)

// memQueryInt reads one integer with an independent connection.
func memQueryInt(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow(query, args...).Scan(&v); err != nil {
		t.Fatalf("%s %v: %v", query, args, err)
	}
	return v
}

// memOpen opens path with OpenClaudeMemDB and closes it when the test ends.
func memOpen(t *testing.T, path string) *ClaudeMemDB {
	t.Helper()
	m, err := OpenClaudeMemDB(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenClaudeMemDB(%s): %v", path, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// memFileID is the identity of the file at path, computed here rather than
// with the package's own helper.
func memFileID(t *testing.T, path string) FileID {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}

// memAbbrev shows a text in a failure message: short texts verbatim, long
// ones by their start, length and hash (so that two long texts that differ
// anywhere show differently).
func memAbbrev(s string) string {
	if len(s) <= 100 {
		return fmt.Sprintf("%q", s)
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%.60q…(%d bytes, sha256 %s)", s, len(s), hex.EncodeToString(sum[:6]))
}

func memPromptLines(ps []Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("#%d n=%d created=%s clipped=%v text=%s",
			p.ID, p.Number, p.Created.Format(time.RFC3339Nano), p.Clipped, memAbbrev(p.Text)))
	}
	return out
}

func memObservationLines(obs []Observation) []string {
	var out []string
	for _, o := range obs {
		out = append(out, fmt.Sprintf("#%d type=%q title=%q subtitle=%q narrative=%q text=%q n=%d created=%s",
			o.ID, o.Type, o.Title, o.Subtitle, o.Narrative, o.Text, o.PromptNumber, o.Created.Format(time.RFC3339Nano)))
	}
	return out
}

func memSummaryLines(ss []Summary) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("#%d req=%q inv=%q learned=%q done=%q next=%q notes=%q n=%d created=%s",
			s.ID, s.Request, s.Investigated, s.Learned, s.Completed, s.NextSteps, s.Notes, s.PromptNumber,
			s.Created.Format(time.RFC3339Nano)))
	}
	return out
}

// memCompareLines fails the test when got and want differ, showing both.
func memCompareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// memCheck compares a ClaudeMem with the expected one, field by field.
func memCheck(t *testing.T, got, want *ClaudeMem) {
	t.Helper()
	if got == nil {
		t.Fatalf("Session(%s) = nil, want a memory", want.ContentSessionID)
	}
	if got.ContentSessionID != want.ContentSessionID || got.MemorySessionID != want.MemorySessionID || got.Project != want.Project {
		t.Errorf("ids: got content %q, memory %q, project %q; want %q, %q, %q",
			got.ContentSessionID, got.MemorySessionID, got.Project, want.ContentSessionID, want.MemorySessionID, want.Project)
	}
	if !got.Started.Equal(want.Started) || got.Started.Location() != time.UTC {
		t.Errorf("Started = %v, want %v (UTC)", got.Started, want.Started)
	}
	memCompareLines(t, "prompts", memPromptLines(got.Prompts), memPromptLines(want.Prompts))
	memCompareLines(t, "observations", memObservationLines(got.Observations), memObservationLines(want.Observations))
	memCompareLines(t, "summaries", memSummaryLines(got.Summaries), memSummaryLines(want.Summaries))
	if fmt.Sprint(got.ToolUses) != fmt.Sprint(want.ToolUses) || (got.ToolUses == nil) != (want.ToolUses == nil) {
		t.Errorf("ToolUses = %v, want %v", got.ToolUses, want.ToolUses)
	}
	if got.Cursor != want.Cursor {
		t.Errorf("Cursor = %+v, want %+v", got.Cursor, want.Cursor)
	}
	if got.Cursor.DB == (FileID{}) {
		t.Errorf("Cursor.DB is zero")
	}
}

// memStarted reads sdk_sessions.started_at_epoch independently.
func memStarted(t *testing.T, db *sql.DB, content string) time.Time {
	t.Helper()
	return time.UnixMilli(memQueryInt(t, db, `SELECT started_at_epoch FROM sdk_sessions WHERE content_session_id = ?`, content)).UTC()
}

// memPromptCreated reads user_prompts.created_at_epoch independently.
func memPromptCreated(t *testing.T, db *sql.DB, id int64) time.Time {
	t.Helper()
	return time.UnixMilli(memQueryInt(t, db, `SELECT created_at_epoch FROM user_prompts WHERE id = ?`, id)).UTC()
}

func TestMemoryFromRealClaudeMem(t *testing.T) {
	w := memwriter.Require(t)
	const (
		sidA, sidB, sidC = "a1b2c3d4-0000-4000-8000-00000000000a", "a1b2c3d4-0000-4000-8000-00000000000b", "a1b2c3d4-0000-4000-8000-00000000000c"
		memA, memB       = "mem-A-1", "mem-B-1"
		prompt1          = "First prompt of A: fix the retry loop"
		prompt2          = "Visible start <private>SECRET-P</private> visible end"
		prompt2Stored    = "Visible start  visible end" // claude-mem strips the element, keeps both spaces
	)
	// 5017 UTF-16 units (each emoji counts two), so claude-mem keeps 3999
	// units and adds "…".
	long := "LONG-A " + strings.Repeat("😀", 10) + strings.Repeat("z", 4990)
	// The cap split the word of emoji and z's, so only "LONG-A" is kept.
	longStored := "LONG-A…"

	ops := []memwriter.Op{
		/* 0 */ {"op": "session", "content": sidA, "project": "proj-a", "prompt": prompt1},
		/* 1 */ {"op": "register", "content": sidA, "memory": memA},
		/* 2 */ {"op": "session", "content": sidB, "project": "proj-b", "prompt": "B first"},
		/* 3 */ {"op": "register", "content": sidB, "memory": memB},
		/* 4 */ {"op": "prompt", "content": sidA, "number": 1, "text": prompt1},
		/* 5 */ {"op": "prompt", "content": sidB, "number": 1, "text": "B first"},
		/* 6 */ {"op": "prompt", "content": sidA, "number": 2, "text": prompt2},
		/* 7 */ {"op": "tool_use", "content": sidA, "tool_use_id": "toolu_A1", "tool_name": "Bash",
			"tool_input": map[string]any{"command": "go test ./..."}, "prompt_number": 2},
		/* 8 */ {"op": "tool_use", "content": sidA, "tool_use_id": "toolu_A2", "tool_name": "Read", "prompt_number": 2}, // never linked
		/* 9 */ {"op": "prompt", "content": sidA, "number": 3, "text": long},
		/* 10 */ {"op": "observation", "content": sidA, "prompt_number": 1, "type": "discovery",
			"title": "A1 Read the retry loop", "subtitle": "retry.go", "narrative": "It loops forever. Found in retry.go.",
			"created_at_epoch": memT0 + 3000},
		/* 11 */ {"op": "observation", "content": sidA, "prompt_number": 2, "type": "change",
			"title": "A2 Ran the tests", "narrative": "All green.", "created_at_epoch": memT0 + 1000,
			"tool_use_ids": []string{"toolu_A1"}},
		/* 12 */ {"op": "observation", "content": sidB, "prompt_number": 1, "type": "discovery",
			"title": "B1 belongs to B", "narrative": "Not A's.", "created_at_epoch": memT0 + 1500},
		/* 13 */ {"op": "observation", "content": sidA, "prompt_number": 3, "type": "bugfix",
			"title": "A3 Capped the retries", "narrative": "At five.", "created_at_epoch": memT0 + 2000},
		// Same batch time as op 11: the tie is broken by id.
		/* 14 */ {"op": "observation", "content": sidA, "prompt_number": 3, "type": "feature",
			"title": "A4 Added jitter", "created_at_epoch": memT0 + 1000},
		/* 15 */ {"op": "summary", "content": sidA, "prompt_number": 1, "request": "Fix the retry loop",
			"investigated": "retry.go", "learned": "it was unbounded", "completed": "capped", "next_steps": "tests",
			"notes": "n", "created_at_epoch": memT0 + 3500},
		// A later id with an earlier time: summaries are ordered by time.
		/* 16 */ {"op": "summary", "content": sidA, "prompt_number": 3, "request": "Cap and jitter",
			"created_at_epoch": memT0 + 2500},
		/* 17 */ {"op": "summary", "content": sidB, "prompt_number": 1, "request": "B's summary", "created_at_epoch": memT0 + 4000},
		/* 18 */ {"op": "prompt", "content": sidB, "number": 2, "text": "B second"},
		/* 19 */ {"op": "tool_use", "content": sidB, "tool_use_id": "toolu_B1", "tool_name": "Bash", "prompt_number": 2},
		/* 20 */ {"op": "observation", "content": sidB, "prompt_number": 2, "type": "change",
			"title": "B2 linked in B", "created_at_epoch": memT0 + 5000, "tool_use_ids": []string{"toolu_B1"}},
		// C: prompts, but the observer never registered a memory session.
		/* 21 */ {"op": "session", "content": sidC, "project": "proj-c", "prompt": "C only"},
		/* 22 */ {"op": "prompt", "content": sidC, "number": 1, "text": "C only"},
		/* 23 */ {"op": "tool_use", "content": sidC, "tool_use_id": "toolu_C1", "tool_name": "Bash", "prompt_number": 1},
	}
	dbPath := filepath.Join(t.TempDir(), "claude-mem.db")
	before := time.Now().UnixMilli()
	res := w.Write(t, dbPath, ops...)
	after := time.Now().UnixMilli()
	if res[11].Linked != 1 || res[20].Linked != 1 {
		t.Fatalf("writer linked %d and %d tool uses, want 1 and 1", res[11].Linked, res[20].Linked)
	}
	if res[14].ID <= res[11].ID {
		t.Fatalf("observation ids %d, %d: the tie case needs the second to be larger", res[11].ID, res[14].ID)
	}

	sqlDB := memwriter.OpenRO(t, dbPath)
	m := memOpen(t, dbPath)
	dbID := memFileID(t, dbPath)

	t.Run("session A", func(t *testing.T) {
		got, err := m.Session(t.Context(), sidA)
		if err != nil {
			t.Fatal(err)
		}
		started := memStarted(t, sqlDB, sidA)
		if ms := started.UnixMilli(); ms < before || ms > after {
			t.Errorf("started_at_epoch %d outside the writer's run [%d, %d]", ms, before, after)
		}
		want := &ClaudeMem{
			ContentSessionID: sidA, MemorySessionID: memA, Project: "proj-a", Started: started,
			Prompts: []Prompt{
				{ID: res[4].ID, Number: 1, Text: prompt1, Created: memPromptCreated(t, sqlDB, res[4].ID)},
				{ID: res[6].ID, Number: 2, Text: prompt2Stored, Created: memPromptCreated(t, sqlDB, res[6].ID)},
				{ID: res[9].ID, Number: 3, Text: longStored, CutByClaudeMem: true, Created: memPromptCreated(t, sqlDB, res[9].ID)},
			},
			// By created_at_epoch, then id.
			Observations: []Observation{
				{ID: res[11].ID, Type: "change", Title: "A2 Ran the tests", Narrative: "All green.", PromptNumber: 2, Created: time.UnixMilli(memT0 + 1000).UTC()},
				{ID: res[14].ID, Type: "feature", Title: "A4 Added jitter", PromptNumber: 3, Created: time.UnixMilli(memT0 + 1000).UTC()},
				{ID: res[13].ID, Type: "bugfix", Title: "A3 Capped the retries", Narrative: "At five.", PromptNumber: 3, Created: time.UnixMilli(memT0 + 2000).UTC()},
				{ID: res[10].ID, Type: "discovery", Title: "A1 Read the retry loop", Subtitle: "retry.go", Narrative: "It loops forever. Found in retry.go.", PromptNumber: 1, Created: time.UnixMilli(memT0 + 3000).UTC()},
			},
			Summaries: []Summary{
				{ID: res[16].ID, Request: "Cap and jitter", PromptNumber: 3, Created: time.UnixMilli(memT0 + 2500).UTC()},
				{ID: res[15].ID, Request: "Fix the retry loop", Investigated: "retry.go", Learned: "it was unbounded",
					Completed: "capped", NextSteps: "tests", Notes: "n", PromptNumber: 1, Created: time.UnixMilli(memT0 + 3500).UTC()},
			},
			ToolUses: map[string]int64{"toolu_A1": res[11].ID},
			Cursor: ClaudeMemCursor{
				DB: dbID, MemorySessionID: memA,
				Prompt: res[9].ID, Observation: max(res[10].ID, res[11].ID, res[13].ID, res[14].ID),
				Summary: max(res[15].ID, res[16].ID), ToolUseLinks: 1,
			},
		}
		memCheck(t, got, want)
		// B's rows are newer than all of A's, so A's cursor must not be
		// the table maxima.
		for _, c := range []struct {
			what  string
			got   int64
			query string
		}{
			{"prompt", got.Cursor.Prompt, `SELECT MAX(id) FROM user_prompts`},
			{"observation", got.Cursor.Observation, `SELECT MAX(id) FROM observations`},
			{"summary", got.Cursor.Summary, `SELECT MAX(id) FROM session_summaries`},
		} {
			if all := memQueryInt(t, sqlDB, c.query); c.got == all {
				t.Errorf("cursor %s = %d is the whole table's maximum, which is B's row", c.what, c.got)
			}
		}
	})

	t.Run("session B", func(t *testing.T) {
		got, err := m.Session(t.Context(), sidB)
		if err != nil {
			t.Fatal(err)
		}
		want := &ClaudeMem{
			ContentSessionID: sidB, MemorySessionID: memB, Project: "proj-b", Started: memStarted(t, sqlDB, sidB),
			Prompts: []Prompt{
				{ID: res[5].ID, Number: 1, Text: "B first", Created: memPromptCreated(t, sqlDB, res[5].ID)},
				{ID: res[18].ID, Number: 2, Text: "B second", Created: memPromptCreated(t, sqlDB, res[18].ID)},
			},
			Observations: []Observation{
				{ID: res[12].ID, Type: "discovery", Title: "B1 belongs to B", Narrative: "Not A's.", PromptNumber: 1, Created: time.UnixMilli(memT0 + 1500).UTC()},
				{ID: res[20].ID, Type: "change", Title: "B2 linked in B", PromptNumber: 2, Created: time.UnixMilli(memT0 + 5000).UTC()},
			},
			Summaries: []Summary{{ID: res[17].ID, Request: "B's summary", PromptNumber: 1, Created: time.UnixMilli(memT0 + 4000).UTC()}},
			ToolUses:  map[string]int64{"toolu_B1": res[20].ID},
			Cursor: ClaudeMemCursor{DB: dbID, MemorySessionID: memB, Prompt: res[18].ID, Observation: res[20].ID,
				Summary: res[17].ID, ToolUseLinks: 1},
		}
		memCheck(t, got, want)
	})

	t.Run("no memory session", func(t *testing.T) {
		got, err := m.Session(t.Context(), sidC)
		if err != nil {
			t.Fatal(err)
		}
		want := &ClaudeMem{
			ContentSessionID: sidC, Project: "proj-c", Started: memStarted(t, sqlDB, sidC),
			Prompts: []Prompt{{ID: res[22].ID, Number: 1, Text: "C only", Created: memPromptCreated(t, sqlDB, res[22].ID)}},
			Cursor:  ClaudeMemCursor{DB: dbID, Prompt: res[22].ID},
		}
		memCheck(t, got, want)
	})

	t.Run("unknown session", func(t *testing.T) {
		got, err := m.Session(t.Context(), "a1b2c3d4-0000-4000-8000-0000000000ff")
		if got != nil || err != nil {
			t.Errorf("Session(unknown) = %+v, %v; want nil, nil", got, err)
		}
	})
}

// memHash is the SHA-256 of a file's bytes.
func memHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func memDirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestMemoryReadsWALAndNeverWrites reads a database whose writer died with
// its last commits in the WAL, as a running or killed claude-mem worker
// leaves it: the reader must see those rows, and must change neither the
// database file nor the WAL (no write, no checkpoint, not even on close).
func TestMemoryReadsWALAndNeverWrites(t *testing.T) {
	w := memwriter.Require(t)
	const sid = "wal-0000-4000-8000-000000000001"
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "claude-mem.db")
	// The first run closes its store, which checkpoints its rows into the
	// database file; the second is killed, leaving its rows in the WAL.
	first := w.Write(t, dbPath,
		memwriter.Op{"op": "session", "content": sid, "project": "wal", "prompt": "one"},
		memwriter.Op{"op": "register", "content": sid, "memory": "mem-wal"},
		memwriter.Op{"op": "prompt", "content": sid, "number": 1, "text": "one"},
		memwriter.Op{"op": "observation", "content": sid, "prompt_number": 1, "type": "discovery", "title": "in the file", "created_at_epoch": memT0},
	)
	second := w.Write(t, dbPath,
		memwriter.Op{"op": "prompt", "content": sid, "number": 2, "text": "two, only in the WAL"},
		memwriter.Op{"op": "tool_use", "content": sid, "tool_use_id": "toolu_W1", "tool_name": "Bash", "prompt_number": 2},
		memwriter.Op{"op": "observation", "content": sid, "prompt_number": 2, "type": "change", "title": "in the WAL",
			"created_at_epoch": memT0 + 1000, "tool_use_ids": []string{"toolu_W1"}},
		memwriter.Op{"op": "summary", "content": sid, "prompt_number": 2, "request": "wal summary", "created_at_epoch": memT0 + 2000},
		memwriter.Op{"op": "kill"},
	)

	walPath := dbPath + "-wal"
	walInfo, err := os.Stat(walPath)
	if err != nil || walInfo.Size() == 0 {
		t.Fatalf("precondition: the killed writer left no WAL frames (%v, %v)", walInfo, err)
	}
	// Precondition: the database file alone (immutable=1 ignores the WAL)
	// lacks the second run's rows.
	if n := memQueryInt(t, memwriter.OpenRO(t, dbPath, "immutable=1"), `SELECT count(*) FROM user_prompts`); n != 1 {
		t.Fatalf("precondition: the database file holds %d prompts, want 1 (the rest in the WAL)", n)
	}
	dbHash, walHash := memHash(t, dbPath), memHash(t, walPath)
	names := memDirNames(t, dir)

	m, err := OpenClaudeMemDB(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Session(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.SchemaVersion(t.Context()); err != nil {
		t.Fatal(err)
	}
	if again, err := m.Session(t.Context(), sid); err != nil || again == nil || len(again.Prompts) != 2 {
		t.Errorf("second Session: %+v, %v", again, err)
	}
	// Closing the last connection is where a read-write connection would
	// checkpoint the WAL and delete it.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	t.Run("rows in the WAL are read", func(t *testing.T) {
		if got == nil {
			t.Fatal("Session = nil")
		}
		var prompts, obs, sums []int64
		for _, p := range got.Prompts {
			prompts = append(prompts, p.ID)
		}
		for _, o := range got.Observations {
			obs = append(obs, o.ID)
		}
		for _, s := range got.Summaries {
			sums = append(sums, s.ID)
		}
		if want := []int64{first[2].ID, second[0].ID}; !slices.Equal(prompts, want) {
			t.Errorf("prompt ids %v, want %v", prompts, want)
		}
		if want := []int64{first[3].ID, second[2].ID}; !slices.Equal(obs, want) {
			t.Errorf("observation ids %v, want %v", obs, want)
		}
		if want := []int64{second[3].ID}; !slices.Equal(sums, want) {
			t.Errorf("summary ids %v, want %v", sums, want)
		}
		if got.ToolUses["toolu_W1"] != second[2].ID || got.Cursor.ToolUseLinks != 1 {
			t.Errorf("ToolUses %v, links %d; want toolu_W1 → %d, 1 link", got.ToolUses, got.Cursor.ToolUseLinks, second[2].ID)
		}
		if got.Cursor.Prompt != second[0].ID || got.Cursor.Observation != second[2].ID || got.Cursor.Summary != second[3].ID {
			t.Errorf("Cursor %+v does not reach the WAL's rows (%d, %d, %d)", got.Cursor, second[0].ID, second[2].ID, second[3].ID)
		}
	})

	t.Run("nothing written", func(t *testing.T) {
		if h := memHash(t, dbPath); h != dbHash {
			t.Errorf("the database file changed while reading (sha256 %s → %s)", dbHash[:12], h[:12])
		}
		info, err := os.Stat(walPath)
		if err != nil {
			t.Fatalf("the WAL is gone after reading (checkpointed on close?): %v", err)
		}
		if info.Size() != walInfo.Size() {
			t.Errorf("the WAL changed size while reading: %d → %d bytes", walInfo.Size(), info.Size())
		}
		if h := memHash(t, walPath); h != walHash {
			t.Errorf("the WAL's bytes changed while reading")
		}
		for _, n := range memDirNames(t, dir) {
			if !slices.Contains(names, n) && n != "claude-mem.db-shm" {
				t.Errorf("reading created %s", n)
			}
		}
	})
}

func TestMemoryLegacySchema(t *testing.T) {
	const t0 = int64(1_735_000_000_000) // 2024-12-24, ms
	path := filepath.Join(t.TempDir(), "claude-mem.db")
	sessions := []memwriter.LegacySession{
		{
			Session: memwriter.LegacySDKSession{ClaudeSessionID: "legacy-1", SDKSessionID: "sdk-1", Project: "old",
				UserPrompt: "first legacy prompt", StartedAtEpoch: t0},
			Prompts: []memwriter.LegacyPrompt{
				{ID: 11, PromptNumber: 1, Text: "first legacy prompt", CreatedAtEpoch: t0 + 100},
				{ID: 12, PromptNumber: 2, Text: "second legacy prompt", CreatedAtEpoch: t0 + 200},
				// Observer junk (issue #2104), newest: dropped, but counted.
				{ID: 13, PromptNumber: 3, Text: "<observed_from_primary_session>\n<what>Bash</what>\n</observed_from_primary_session>", CreatedAtEpoch: t0 + 210},
			},
			Observations: []memwriter.LegacyObservation{
				{ID: 500, Type: "feature", Title: "Added X", Subtitle: "x.go", Narrative: "X is new. More.", PromptNumber: 1, CreatedAtEpoch: t0 + 300},
				{ID: 501, Text: "free-text body from before titles existed", CreatedAtEpoch: t0 + 250},
			},
			Summaries: []memwriter.LegacySummary{{ID: 70, Request: "do X", Completed: "did X", PromptNumber: 2, CreatedAtEpoch: t0 + 400}},
		},
		{
			// Higher ids than legacy-1's: its cursor must not reach them.
			Session: memwriter.LegacySDKSession{ClaudeSessionID: "legacy-2", SDKSessionID: "sdk-2", Project: "old", StartedAtEpoch: t0},
			Prompts: []memwriter.LegacyPrompt{{ID: 20, PromptNumber: 1, Text: "other session", CreatedAtEpoch: t0 + 100}},
			Observations: []memwriter.LegacyObservation{
				{ID: 600, Title: "Other", Narrative: "Not legacy-1's.", PromptNumber: 1, CreatedAtEpoch: t0 + 100},
			},
			Summaries: []memwriter.LegacySummary{{ID: 71, Request: "other", CreatedAtEpoch: t0 + 100}},
		},
		{
			// claude-mem's own observer session: never a bottle.
			Session: memwriter.LegacySDKSession{ClaudeSessionID: "legacy-observer", SDKSessionID: "sdk-obs", Project: "observer-sessions", StartedAtEpoch: t0},
			Prompts: []memwriter.LegacyPrompt{{PromptNumber: 1, Text: "observer prompt", CreatedAtEpoch: t0}},
		},
	}
	for _, s := range sessions {
		if err := memwriter.BuildLegacyDB(path, s); err != nil {
			t.Fatal(err)
		}
	}
	m := memOpen(t, path)

	got, err := m.Session(t.Context(), "legacy-1")
	if err != nil {
		t.Fatal(err)
	}
	memCheck(t, got, &ClaudeMem{
		ContentSessionID: "legacy-1", MemorySessionID: "sdk-1", Project: "old", Started: time.UnixMilli(t0).UTC(),
		Prompts: []Prompt{
			{ID: 11, Number: 1, Text: "first legacy prompt", Created: time.UnixMilli(t0 + 100).UTC()},
			{ID: 12, Number: 2, Text: "second legacy prompt", Created: time.UnixMilli(t0 + 200).UTC()},
		},
		Observations: []Observation{
			{ID: 501, Type: "discovery", Text: "free-text body from before titles existed", Created: time.UnixMilli(t0 + 250).UTC()},
			{ID: 500, Type: "feature", Title: "Added X", Subtitle: "x.go", Narrative: "X is new. More.", PromptNumber: 1, Created: time.UnixMilli(t0 + 300).UTC()},
		},
		Summaries: []Summary{{ID: 70, Request: "do X", Completed: "did X", PromptNumber: 2, Created: time.UnixMilli(t0 + 400).UTC()}},
		Cursor:    ClaudeMemCursor{DB: memFileID(t, path), MemorySessionID: "sdk-1", Prompt: 13, Observation: 501, Summary: 70},
	})

	if got, err := m.Session(t.Context(), "legacy-observer"); got != nil || err != nil {
		t.Errorf("Session(observer-sessions project) = %+v, %v; want nil, nil", got, err)
	}
	if v, err := m.SchemaVersion(t.Context()); err != nil || v != 10 {
		t.Errorf("SchemaVersion = %d, %v; want 10 (the legacy ledger's last)", v, err)
	}
}

func TestMemoryErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sqlite := func(name, schema string) string {
		p := filepath.Join(dir, name)
		db, err := sql.Open("sqlite3", "file:"+filepath.ToSlash(p))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(schema); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// damaged is a claude-mem database whose schema page was overwritten:
	// SQLite reports it corrupt (SQLITE_CORRUPT), not "not a database".
	damaged := func(name string) string {
		p := sqlite(name, `CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY, content_session_id TEXT, memory_session_id TEXT, platform_source TEXT);`)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := 100; i < 200 && i < len(data); i++ {
			data[i] = 0xff
		}
		return write(name, data)
	}
	subdir := filepath.Join(dir, "a-directory")
	if err := os.Mkdir(subdir, 0o700); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing file", filepath.Join(dir, "missing", "claude-mem.db"), ErrNoClaudeMemDB},
		{"not sqlite", write("text.db", []byte(strings.Repeat("this is not a database\n", 400))), ErrClaudeMemShape},
		{"short non-sqlite file", write("short.db", []byte("hello")), ErrClaudeMemShape},
		{"empty file", write("empty.db", nil), ErrClaudeMemShape},
		{"no sdk_sessions", sqlite("other.db", `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x');`), ErrClaudeMemShape},
		{"sdk_sessions without session ids", sqlite("noids.db", `CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY, project TEXT);`), ErrClaudeMemShape},
		{"directory", subdir, ErrClaudeMemShape},
		{"damaged database", damaged("damaged.db"), ErrClaudeMemShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, statErr := os.Stat(tt.path)
			var hash string
			if statErr == nil && before.Mode().IsRegular() {
				hash = memHash(t, tt.path)
			}
			m, err := OpenClaudeMemDB(context.Background(), tt.path)
			if err == nil {
				m.Close()
				t.Fatalf("OpenClaudeMemDB(%s) succeeded, want %v", tt.path, tt.want)
			}
			if m != nil {
				t.Errorf("OpenClaudeMemDB returned a ClaudeMemDB with error %v", err)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q is not %q", err, tt.want)
			}
			for _, other := range []error{ErrNoClaudeMemDB, ErrClaudeMemShape} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("error %q is also %q", err, other)
				}
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name %s", err, tt.path)
			}
			// A failed open leaves what it looked at alone.
			switch {
			case errors.Is(statErr, os.ErrNotExist):
				if _, err := os.Stat(tt.path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("opening a missing database created %s (%v)", tt.path, err)
				}
			case hash != "":
				if memHash(t, tt.path) != hash {
					t.Errorf("opening %s changed it", tt.path)
				}
			}
		})
	}
}

// TestMemoryDropsObserverJunk writes the junk rows with the real claude-mem
// writer: saveUserPrompt stores them as given (only the session-init route
// skips task notifications, and old versions stored the observer's own
// prompts), so they are rows claude-mem itself can hold.
func TestMemoryDropsObserverJunk(t *testing.T) {
	w := memwriter.Require(t)
	const (
		sid      = "junk-0000-4000-8000-000000000001"
		observer = "junk-0000-4000-8000-0000000000ob"
	)
	texts := []struct {
		text string
		keep bool
	}{
		{"J real first prompt", true},
		{"<observed_from_primary_session>\n<what_happened>Bash</what_happened>\n</observed_from_primary_session>", false},
		{"You are a Claude-Mem, a specialized observer tool for creating searchable memory FOR FUTURE SESSIONS.", false},
		{"Hello memory agent, you are continuing to observe the primary Claude session.", false},
		{"<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n<summary>done</summary>\n</task-notification>", false},
		{"<bash-notification>\n<shell-id>b2</shell-id>\n<status>failed</status>\n<summary>Background command failed</summary>\n</bash-notification>", false},
		{"<agent-notification>\n<agent-id>a3</agent-id>\n<status>completed</status>\n<summary>Agent done</summary>\n</agent-notification>", false},
		{"Why is \"You are a Claude-Mem, a specialized observer tool\" in my prompts?", true},
		{"Why does <task-notification> show up in my prompts?", true},
		{"J real last prompt", true},
		// The newest row is junk: the cursor must still reach it, or the
		// daemon would think the session changed on every check.
		{"Hello memory agent, one more time.", false},
	}
	ops := []memwriter.Op{
		{"op": "session", "content": sid, "project": "proj-j", "prompt": texts[0].text},
		{"op": "session", "content": observer, "project": "observer-sessions", "prompt": "observer prompt"},
		{"op": "register", "content": observer, "memory": "mem-observer"},
		{"op": "prompt", "content": observer, "number": 1, "text": "observer prompt"},
		{"op": "observation", "content": observer, "prompt_number": 1, "type": "discovery", "title": "observer's own", "created_at_epoch": memT0},
	}
	first := len(ops)
	for i, p := range texts {
		ops = append(ops, memwriter.Op{"op": "prompt", "content": sid, "number": i + 1, "text": p.text})
	}
	dbPath := filepath.Join(t.TempDir(), "claude-mem.db")
	res := w.Write(t, dbPath, ops...)
	m := memOpen(t, dbPath)

	got, err := m.Session(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("Session = nil")
	}
	var want []string
	for i, p := range texts {
		if p.keep {
			want = append(want, fmt.Sprintf("%d:%d:%s", res[first+i].ID, i+1, p.text))
		}
	}
	var gotLines []string
	for _, p := range got.Prompts {
		gotLines = append(gotLines, fmt.Sprintf("%d:%d:%s", p.ID, p.Number, p.Text))
	}
	memCompareLines(t, "prompts kept", gotLines, want)
	if last := res[len(res)-1].ID; got.Cursor.Prompt != last {
		t.Errorf("Cursor.Prompt = %d, want %d (the newest row, junk included)", got.Cursor.Prompt, last)
	}

	if got, err := m.Session(t.Context(), observer); got != nil || err != nil {
		t.Errorf("Session(observer-sessions project) = %+v, %v; want nil, nil", got, err)
	}
}

func TestMemorySchemaVersion(t *testing.T) {
	w := memwriter.Require(t)
	dbPath := filepath.Join(t.TempDir(), "claude-mem.db")
	w.Write(t, dbPath, memwriter.Op{"op": "session", "content": "v1", "project": "p", "prompt": "hi"})
	m := memOpen(t, dbPath)
	got, err := m.SchemaVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := memQueryInt(t, memwriter.OpenRO(t, dbPath), `SELECT MAX(version) FROM schema_versions`)
	t.Logf("claude-mem %s: schema ledger v%d", w.Version, want)
	if int64(got) != want {
		t.Errorf("SchemaVersion = %d, want %d (the ledger's max)", got, want)
	}
	if got <= 40 {
		t.Errorf("SchemaVersion = %d, want > 40 for a current claude-mem", got)
	}
}
