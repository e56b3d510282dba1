package index

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
)

// TestPutReadsEachRowOnce checks that a Put reads what it needs of the
// database once: the bottle's row by its name, and the rows of its blocks
// (none after an append, which takes them from the update before), for a
// new bottle, an appended one, and one whose project changed.
func TestPutReadsEachRowOnce(t *testing.T) {
	data := t.TempDir()
	ix := openIndex(t, data)
	if err := os.MkdirAll(bottles.BottlesDir(data), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := ix.doExisting(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	g := &growing{id: "reads", cwd: "/home/u/app"}
	for i := range 50 {
		g.turns = append(g.turns, turnText(i))
	}
	// Statements are told apart by what they read: the bottle's row by
	// its name, the rows of its blocks.
	reads := map[string]string{
		"the bottle's row": "FROM bottles WHERE path = ?",
		"its blocks' rows": "FROM docs WHERE bottle = ?",
	}
	steps := []struct {
		name      string
		change    func()
		maxBlocks int // SELECTs of the blocks' rows
	}{
		{"new bottle", func() {}, 1},
		{"append", func() { g.turns = append(g.turns, turnText(50)) }, 0},
		{"other project", func() { g.cwd = "/home/u/other" }, 1},
		{"append after", func() { g.turns = append(g.turns, turnText(51)) }, 0},
	}
	for _, step := range steps {
		step.change()
		b := g.bottle(t)
		if err := replaceFile(bottles.BottlePath(bottles.BottlesDir(data), g.id), b); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		ix.mu.Lock()
		err := ix.conn.Trace(sqlite3.TRACE_STMT, func(_ sqlite3.TraceEvent, _, sql any) error {
			for what, from := range reads {
				if s, _ := sql.(string); strings.Contains(s, from) && strings.HasPrefix(strings.TrimSpace(s), "SELECT") {
					count[what]++
				}
			}
			return nil
		})
		ix.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Put(context.Background(), g.id+".md", b); err != nil {
			t.Fatal(err)
		}
		ix.mu.Lock()
		err = ix.conn.Trace(0, nil)
		ix.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if n := count["the bottle's row"]; n != 1 {
			t.Errorf("%s: the bottle's row read %d times, want once", step.name, n)
		}
		if n := count["its blocks' rows"]; n > step.maxBlocks {
			t.Errorf("%s: its blocks' rows read %d times, want at most %d", step.name, n, step.maxBlocks)
		}
	}
}
