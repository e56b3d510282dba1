package index

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	redactrules "github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// growing is a session that a test changes turn by turn: messages with a
// trail of repeated commands (identical blocks, which share a checksum),
// rendered as the daemon renders it.
type growing struct {
	id, cwd string
	turns   []string
	rules   *redactrules.Rules
}

func (g *growing) bottle(t testing.TB) []byte {
	t.Helper()
	start := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	sp := &sources.Spine{SessionID: g.id, CWD: g.cwd, Started: start}
	for i, text := range g.turns {
		at := start.Add(time.Duration(i) * 7 * time.Minute) // the date changes in the body
		answered := at.Add(time.Minute)
		if i%4 == 1 {
			answered = time.Time{} // a heading without a time: the block takes the one before
		}
		sp.Entries = append(sp.Entries,
			sources.Entry{Kind: sources.EntryUser, Time: at, Text: text},
			sources.Entry{Kind: sources.EntryAssistant, Time: answered, Text: "answer to " + text,
				Deeds: []sources.Deed{{Kind: sources.DeedCommand, Tool: "Bash", Target: "go test ./..."},
					{Kind: sources.DeedCommand, Tool: "Bash", Target: fmt.Sprintf("git diff %d", i%3)}}})
	}
	b, err := render.Render(render.Input{SessionID: g.id, Spine: sp, Now: testNow, Location: time.UTC, Rules: g.rules})
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes
}

func turnText(i int) string {
	return fmt.Sprintf("turn %d about the zebra codename and %s", i, strings.Repeat(fmt.Sprintf("word%d ", i%17), 40))
}

// TestPutFromEarlierParseEqualsFresh changes a session's bottle step by
// step as a session changes (turns appended, an answer growing, a rewind
// that changes the middle, the end of a long message changed, other
// redaction rules, another project, the same bottle again, the bottle
// indexed by another process meanwhile) and Puts each into one index, which reads each from
// the parse of the one before: after every step the index holds exactly
// what a fresh index holds with that bottle alone Put into it, row for row
// and word for word; and the steps that only appended took their first
// blocks from the earlier parse.
func TestPutFromEarlierParseEqualsFresh(t *testing.T) {
	data := t.TempDir()
	ix := openIndex(t, data)
	if err := os.MkdirAll(bottles.BottlesDir(data), 0o700); err != nil {
		t.Fatal(err)
	}
	g := &growing{id: "grow", cwd: "/home/u/app"}
	for i := range 300 {
		g.turns = append(g.turns, turnText(i))
	}
	// A message longer than the parser's marks are apart: a mark falls
	// inside it.
	g.turns[120] = strings.Repeat("a long message, line after line\n", 1000)
	zebra, err := redactrules.Builtin().With([]redactrules.Rule{{Kind: "codename", Pattern: "zebra"}})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		change func()
		fast   bool // blocks are taken from the earlier parse
		synced bool // indexed by Sync, which finds the bottle changed, not Put
	}{
		{"first", func() {}, false, false},
		{"append", func() { g.turns = append(g.turns, turnText(300)) }, true, false},
		{"append more", func() { g.turns = append(g.turns, turnText(301), turnText(302)) }, true, false},
		{"answer grows", func() { g.turns[len(g.turns)-1] += " and more" }, true, false},
		{"same again", func() {}, true, false},
		{"rewind", func() { g.turns = append(g.turns[:150], "a new way from the middle", turnText(7)) }, true, false},
		{"middle edited", func() { g.turns[100] = "an edited message" }, true, false},
		{"long message's end edited", func() { g.turns[120] += "with another end" }, true, false},
		{"append after", func() { g.turns = append(g.turns, turnText(400)) }, true, false},
		{"other rules", func() { g.rules = zebra }, false, false},
		{"append redacted", func() { g.turns = append(g.turns, turnText(401)) }, true, false},
		{"rules back", func() { g.rules = nil }, false, false},
		{"other project", func() { g.cwd = "/home/u/other" }, false, false},
		{"append elsewhere", func() { g.turns = append(g.turns, turnText(402)) }, true, false},
		{"cut to one", func() { g.turns = g.turns[:1] }, false, false},
		{"grown again", func() {
			for i := range 100 {
				g.turns = append(g.turns, turnText(500+i))
			}
		}, false, false},
		{"append at last", func() { g.turns = append(g.turns, turnText(600)) }, true, false},
		// Another process indexes the bottle between two of this one's
		// updates: its rows are no longer those this one cached.
		{"another process", func() {
			g.turns = append(g.turns, turnText(700))
			other := openIndex(t, data)
			b := g.bottle(t)
			if err := replaceFile(bottles.BottlePath(bottles.BottlesDir(data), g.id), b); err != nil {
				t.Fatal(err)
			}
			if err := other.Put(context.Background(), g.id+".md", b); err != nil {
				t.Fatal(err)
			}
			g.turns = append(g.turns[:len(g.turns)-2], turnText(701))
		}, false, false},
		{"append after the other", func() { g.turns = append(g.turns, turnText(702)) }, true, false},
		// A sync reads the bottle from its parse too, and keeps the new
		// one for the Put after it.
		{"append, synced", func() { g.turns = append(g.turns, turnText(703)) }, true, true},
		{"append after the sync", func() { g.turns = append(g.turns, turnText(704)) }, true, false},
	}
	name := g.id + ".md"
	for _, step := range steps {
		step.change()
		b := g.bottle(t)
		if err := replaceFile(bottles.BottlePath(bottles.BottlesDir(data), g.id), b); err != nil {
			t.Fatal(err)
		}
		index := ix.Put
		if step.synced {
			index = func(ctx context.Context, _ string, _ []byte) error { return ix.Sync(ctx) }
		}
		if err := index(context.Background(), name, b); err != nil {
			t.Fatal(err)
		}
		kept := keptBy(t, ix, name)
		if step.fast && kept == 0 || !step.fast && kept != 0 {
			t.Errorf("%s: %d rows kept from the earlier parse", step.name, kept)
		}
		freshData := t.TempDir()
		fresh := openIndex(t, freshData)
		if err := os.MkdirAll(bottles.BottlesDir(freshData), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := replaceFile(bottles.BottlePath(bottles.BottlesDir(freshData), g.id), b); err != nil {
			t.Fatal(err)
		}
		if err := fresh.Put(context.Background(), name, b); err != nil {
			t.Fatal(err)
		}
		sameIndex(t, step.name, ix, fresh)
	}
}

// keptBy is how many of the bottle's rows its last update (the index's
// last) kept from the earlier parse without looking at them: those that
// update did not mark (updateDocs marks every row it matches or makes).
func keptBy(t testing.TB, ix *Index, name string) int {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	r, err := ix.rowAt(name)
	if err != nil {
		t.Fatal(err)
	}
	x := ix.known.lists[r.id]
	if x == nil {
		return 0
	}
	kept := 0
	for _, d := range x.docs {
		if d.mark != ix.marks {
			kept++
		}
	}
	return kept
}

// sameIndex compares what two indexes hold of their bottles: the bottle
// rows (but their files' identity), every block's row (but its number)
// and every word indexed.
func sameIndex(t testing.TB, what string, got, want *Index) {
	t.Helper()
	g, w := dumpIndex(t, got), dumpIndex(t, want)
	if len(w.docs) == 0 || len(w.words) == 0 {
		t.Fatalf("%s: nothing indexed", what)
	}
	sameLists(t, what+": blocks", g.docs, w.docs)
	sameLists(t, what+": words", g.words, w.words)
	sameLists(t, what+": rows", dumpRows(t, got), dumpRows(t, want))
}

// dumpRows lists the bottles' rows and their blocks' word counts.
func dumpRows(t testing.TB, ix *Index) []string {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	for _, sql := range []string{
		`SELECT path, session, archived, role, project, mode, started, last_active, turns, compactions, first_prompt, size FROM bottles ORDER BY path`,
		`SELECT b.path, d.seq, d.words FROM docs d JOIN bottles b ON b.id = d.bottle ORDER BY b.path, d.seq`,
	} {
		if err := ix.query(sql, func(s *sqlite3.Stmt) error {
			var cols []string
			for i := range s.ColumnCount() {
				cols = append(cols, s.ColumnText(i))
			}
			out = append(out, strings.Join(cols, " | "))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
