package index

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
)

// TestSearchRealBottles indexes the bottles of the real fixtures and
// searches each for a word found in no other bottle: the bottle must be
// among the hits, and every hit's line must hold the word.
func TestSearchRealBottles(t *testing.T) {
	data := t.TempDir()
	corpus := realBottles(t, false)
	ix := indexCorpus(t, data, corpus)
	words := uniqueWords(t, corpus)
	checked := 0
	for _, b := range corpus {
		w := words[b.id]
		if w == "" {
			continue
		}
		checked++
		hits := search(t, ix, w, Scope{Limit: MaxLimit})
		if got := sessionsOf(hits); !slices.Equal(got, []string{b.id}) {
			t.Errorf("search %q: sessions %v, want [%s]", w, got, b.id)
		}
		for _, h := range hits {
			if line := lineOf(t, h.Bottle, h.Line); !strings.Contains(strings.ToLower(line), w) {
				t.Errorf("search %q: hit at %s:%d, a line without it: %.100q", w, h.Bottle, h.Line, line)
			}
			if !strings.Contains(strings.ToLower(h.Snippet), w) {
				t.Errorf("search %q: snippet without it: %q", w, h.Snippet)
			}
		}
	}
	if checked < len(corpus)/2 {
		t.Fatalf("only %d of %d bottles had a word of their own", checked, len(corpus))
	}
}

// uniqueWords picks, for each bottle, a long word of its conversation
// (blocks, not header) that no other bottle has.
func uniqueWords(t testing.TB, bottles []realBottle) map[string]string {
	t.Helper()
	count := map[string]int{}
	per := map[string][]string{}
	for _, b := range bottles {
		p, err := render.Parse(b.bottle.Bytes, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, bl := range p.Blocks {
			for _, w := range tokens(string(b.bottle.Bytes[bl.Text:bl.End])) {
				if len(w) >= 9 && isLetters(w) && !seen[w] {
					seen[w] = true
					per[b.id] = append(per[b.id], w)
				}
			}
		}
		// The header's words (project path, outline) are not indexed, but
		// a word there may also be in another bottle's text.
		for _, w := range tokens(string(b.bottle.Bytes[:p.BodyStart])) {
			seen[w] = true
		}
		for w := range seen {
			count[w]++
		}
	}
	out := map[string]string{}
	for _, b := range bottles {
		for _, w := range per[b.id] {
			if count[w] == 1 {
				out[b.id] = w
				break
			}
		}
	}
	return out
}

func isLetters(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// TestPerTurnEqualsRebuild grows a real session turn by turn, indexing each
// new bottle with Put, and checks that (a) a block that did not change keeps
// its indexed row, so it was not tokenized again, and (b) the index ends up
// holding exactly what a rebuild from the final bottle holds: the same
// blocks and the same words at the same offsets.
func TestPerTurnEqualsRebuild(t *testing.T) {
	// The real session with the most blocks.
	corpus := realBottles(t, true)
	src := slices.MaxFunc(corpus, func(a, b realBottle) int { return a.blocks - b.blocks })
	full, err := os.ReadFile(src.src)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(full, []byte("\n"))
	id := src.id
	work := t.TempDir()
	transcript := filepath.Join(work, id+".jsonl")
	data := filepath.Join(work, "data")
	ix := openIndex(t, data)
	name := id + ".md"
	var final []byte
	prevIDs := map[int64][]int64{} // block checksum → doc ids after the previous Put
	steps := 0
	for cut := 1; cut <= len(lines); cut += max(len(lines)/25, 1) {
		if cut+max(len(lines)/25, 1) > len(lines) {
			cut = len(lines) // the last step takes the whole file
		}
		if err := os.WriteFile(transcript, bytes.Join(lines[:cut], nil), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := renderTranscript(t, id, transcript, testNow)
		if err != nil {
			continue // nothing to show yet
		}
		writeBottles(t, data, b)
		if err := ix.Put(context.Background(), name, b.Bytes); err != nil {
			t.Fatal(err)
		}
		ids := docIDs(t, ix)
		kept := 0
		for sum, was := range prevIDs {
			now, ok := ids[sum]
			if !ok {
				continue
			}
			kept++
			// Blocks with the same bytes (a command run in many turns)
			// share a checksum: each keeps one of the rows.
			for _, row := range was[:min(len(was), len(now))] {
				if !slices.Contains(now, row) {
					t.Errorf("step %d: an unchanged block was indexed again (row %d gone, now %v)", steps, row, now)
				}
			}
		}
		if steps > 0 && kept == 0 {
			t.Errorf("step %d: no block was kept from the previous step", steps)
		}
		prevIDs = ids
		final = b.Bytes
		steps++
		if cut == len(lines) {
			break
		}
	}
	if steps < 10 {
		t.Fatalf("only %d steps", steps)
	}
	rebuilt := filepath.Join(work, "rebuilt")
	if err := os.MkdirAll(bottles.BottlesDir(rebuilt), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bottles.BottlePath(bottles.BottlesDir(rebuilt), id), final, 0o600); err != nil {
		t.Fatal(err)
	}
	want := dumpIndex(t, openIndex(t, rebuilt))
	got := dumpIndex(t, ix)
	if len(want.docs) < 20 || len(want.words) < 1000 {
		t.Fatalf("the rebuilt index is too small to compare: %d blocks, %d words", len(want.docs), len(want.words))
	}
	sameLists(t, "blocks", got.docs, want.docs)
	sameLists(t, "words", got.words, want.words)
}

// docIDs maps each indexed block's checksum to its rows, oldest first.
func docIDs(t testing.TB, ix *Index) map[int64][]int64 {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, _, err := ix.conn.Prepare(`SELECT sum, id FROM docs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[int64][]int64{}
	for st.Step() {
		out[st.ColumnInt64(0)] = append(out[st.ColumnInt64(0)], st.ColumnInt64(1))
	}
	return out
}

// TestArchiveAndDeletion: a cleared (archived) session leaves search and
// the session list unless asked for; a deleted bottle leaves no hit at all;
// archiving does not tokenize the bottle again.
func TestArchiveAndDeletion(t *testing.T) {
	data := t.TempDir()
	corpus := realBottles(t, false)[:3]
	ix := indexCorpus(t, data, corpus)
	words := uniqueWords(t, corpus)
	target := corpus[0]
	word := words[target.id]
	if word == "" {
		t.Fatal("no word of its own in the first bottle")
	}
	if got := sessionsOf(search(t, ix, word, Scope{})); !slices.Equal(got, []string{target.id}) {
		t.Fatalf("before archiving: %v", got)
	}
	before := docIDs(t, ix)
	dir := bottles.BottlesDir(data)
	archived, err := bottles.Open(filepath.Dir(dir), func() time.Time { return testNow }, nil).Archive(target.id)
	if err != nil || archived == "" {
		t.Fatalf("archive: %q %v", archived, err)
	}
	if got := search(t, ix, word, Scope{}); len(got) != 0 {
		t.Errorf("archived session still found: %v", sessionsOf(got))
	}
	hits := search(t, ix, word, Scope{Archived: true})
	if got := sessionsOf(hits); !slices.Equal(got, []string{target.id}) {
		t.Errorf("archived session not found when asked for: %v", got)
	}
	for _, h := range hits {
		if !h.Archived || h.Bottle != archived {
			t.Errorf("hit %s archived=%v, want the archive %s", h.Bottle, h.Archived, archived)
		}
	}
	if after := docIDs(t, ix); !maps.EqualFunc(before, after, slices.Equal) {
		t.Errorf("archiving indexed the bottle again")
	}
	list, err := ix.Sessions(context.Background(), Scope{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.ID == target.id {
			t.Errorf("archived session listed without the flag")
		}
	}
	list, _ = ix.Sessions(context.Background(), Scope{Archived: true})
	if !slices.ContainsFunc(list, func(s Session) bool { return s.ID == target.id && s.Archived }) {
		t.Errorf("archived session not listed with the flag")
	}

	// The session is resumed: its new bottle stands for it, the archive
	// is not shown twice.
	if err := os.WriteFile(bottles.BottlePath(dir, target.id), target.bottle.Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	hits = search(t, ix, word, Scope{Archived: true})
	if len(hits) == 0 || slices.ContainsFunc(hits, func(h Hit) bool { return h.Archived }) {
		t.Errorf("resumed session: hits %v", hits)
	}

	// Deleted, current and archived: no hit, even when asked for.
	os.Remove(bottles.BottlePath(dir, target.id))
	os.Remove(archived)
	if got := search(t, ix, word, Scope{Archived: true}); len(got) != 0 {
		t.Errorf("deleted bottle still found: %v", got)
	}
	if n := countRows(t, ix, `SELECT count(*) FROM docs d JOIN bottles b ON b.id = d.bottle WHERE b.session = '`+target.id+`'`); n != 0 {
		t.Errorf("%d blocks of the deleted bottle still indexed", n)
	}
}

func countRows(t testing.TB, ix *Index, sql string) int {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st, _, err := ix.conn.Prepare(sql)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Step() {
		t.Fatal(st.Err())
	}
	return st.ColumnInt(0)
}
