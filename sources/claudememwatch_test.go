package sources

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bottled-dev/bottled/internal/memwriter"
)

// TestMemoryWatch follows a database written by the real claude-mem: a
// cursor taken at the start sees nothing old; each kind of new row
// (prompt, observation, summary, tool use, a memory session id registered
// late) reports its session, and only its session.
func TestMemoryWatch(t *testing.T) {
	w := memwriter.Require(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "claude-mem.db")
	session := func(id string) memwriter.Op {
		return memwriter.Op{"op": "session", "content": id, "project": "p", "prompt": "first " + id}
	}
	register := func(id string) memwriter.Op {
		return memwriter.Op{"op": "register", "content": id, "memory": "mem-" + id}
	}
	w.Write(t, path, session("old"), register("old"), session("late"))

	db, err := OpenClaudeMemDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mw, err := db.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	if changed, err := mw.Changed(ctx); err != nil || !changed {
		t.Fatalf("first Changed = %v, %v; want true", changed, err)
	}
	cur, err := mw.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if mw.SchemaVersion() < 40 {
		t.Errorf("SchemaVersion = %d", mw.SchemaVersion())
	}
	if changed, _ := mw.Changed(ctx); changed {
		t.Errorf("Changed without a commit by anyone else")
	}

	steps := []struct {
		name string
		ops  []memwriter.Op
		want []string
	}{
		{"a prompt", []memwriter.Op{{"op": "prompt", "content": "old", "number": 2, "text": "more"}}, []string{"old"}},
		{"a new session", []memwriter.Op{session("new")}, []string{"new"}},
		{"a late registration", []memwriter.Op{register("late")}, []string{"late"}},
		{"an observation", []memwriter.Op{{"op": "observation", "content": "late", "prompt_number": 1, "type": "discovery", "title": "Looked"}}, []string{"late"}},
		{"a summary", []memwriter.Op{{"op": "summary", "content": "old", "prompt_number": 2, "request": "r"}}, []string{"old"}},
		{"a tool use", []memwriter.Op{{"op": "tool_use", "content": "new", "tool_use_id": "toolu_1", "tool_name": "Bash"}}, []string{"new"}},
		{"rows of two sessions", []memwriter.Op{
			{"op": "prompt", "content": "new", "number": 1, "text": "x"},
			{"op": "observation", "content": "old", "prompt_number": 2, "type": "change", "title": "Changed"},
		}, []string{"new", "old"}},
	}
	for _, st := range steps {
		w.Write(t, path, append(st.ops, memwriter.Op{"op": "kill"})...)
		changed, err := mw.Changed(ctx)
		if err != nil || !changed {
			t.Fatalf("%s: Changed = %v, %v", st.name, changed, err)
		}
		ids, next, err := mw.Since(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, st.want) {
			t.Errorf("%s: Since = %v, want %v", st.name, ids, st.want)
		}
		cur = next
		if ids, _, _ := mw.Since(ctx, cur); len(ids) != 0 {
			t.Errorf("%s: the next Since repeats %v", st.name, ids)
		}
	}
}

// TestCursorMatchesSession checks that the cheap per-session cursor, which
// freshness checks compare with a bottle's, is exactly the one a full read
// records: were they to differ, every bottle would look stale.
func TestCursorMatchesSession(t *testing.T) {
	w := memwriter.Require(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "claude-mem.db")
	w.Write(t, path,
		memwriter.Op{"op": "session", "content": "a", "project": "p", "prompt": "hello"},
		memwriter.Op{"op": "prompt", "content": "a", "number": 1, "text": "hello"},
		memwriter.Op{"op": "prompt", "content": "a", "number": 2, "text": "Hello memory agent, junk that is filtered"},
		memwriter.Op{"op": "register", "content": "a", "memory": "mem-a"},
		memwriter.Op{"op": "tool_use", "content": "a", "tool_use_id": "toolu_a", "tool_name": "Read"},
		memwriter.Op{"op": "observation", "content": "a", "prompt_number": 1, "type": "discovery", "title": "Read it", "tool_use_ids": []string{"toolu_a"}},
		memwriter.Op{"op": "summary", "content": "a", "prompt_number": 1, "request": "r"},
		memwriter.Op{"op": "session", "content": "b", "project": "p", "prompt": "no memory id yet"},
		memwriter.Op{"op": "prompt", "content": "b", "number": 1, "text": "no memory id yet"},
	)
	db, err := OpenClaudeMemDB(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range []string{"a", "b"} {
		mem, err := db.Session(ctx, id)
		if err != nil || mem == nil {
			t.Fatalf("Session(%s) = %v, %v", id, mem, err)
		}
		cur, known, err := db.Cursor(ctx, id)
		if err != nil || !known {
			t.Fatalf("Cursor(%s) = %v, %v", id, known, err)
		}
		if cur != mem.Cursor {
			t.Errorf("Cursor(%s) = %+v, Session's cursor %+v", id, cur, mem.Cursor)
		}
	}
	if _, known, err := db.Cursor(ctx, "unknown"); known || err != nil {
		t.Errorf("Cursor of an unknown session: known %v, err %v", known, err)
	}
}
