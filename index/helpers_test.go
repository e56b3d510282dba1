package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// realBottle is a real fixture rendered as a bottle.
type realBottle struct {
	id     string
	src    string // the transcript
	blocks int
	bottle *render.Bottle
}

// realBottles renders the main-thread transcripts of the real fixtures
// (of both corpora with more).
func realBottles(t testing.TB, more bool) []realBottle {
	t.Helper()
	dir := fixtures.Real(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if more {
		second, _ := filepath.Glob(filepath.Join(dir, "..", "real2", "*", "*.jsonl"))
		files = append(files, second...)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "agent-") })
	var out []realBottle
	for i, f := range files {
		id := fmt.Sprintf("real%02d-%s", i, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
		if len(id) > 100 {
			id = id[:100]
		}
		id = strings.Map(func(r rune) rune {
			if r == '.' {
				return '_'
			}
			return r
		}, id)
		b, err := renderTranscript(t, id, f, testNow.Add(time.Duration(i)*time.Second))
		if err != nil {
			continue // sidechain-only
		}
		p, err := render.Parse(b.Bytes, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, realBottle{id: id, src: f, blocks: len(p.Blocks), bottle: b})
	}
	if len(out) < 5 {
		t.Fatalf("only %d real bottles", len(out))
	}
	return out
}

// writeBottles writes bottles into dataDir's bottles directory.
func writeBottles(t testing.TB, dataDir string, bs ...*render.Bottle) {
	t.Helper()
	for _, b := range bs {
		if _, err := bottles.Open(dataDir, nil, nil).Write(b); err != nil {
			t.Fatal(err)
		}
	}
}

// indexCorpus writes the bottles of corpus into dataDir and opens its
// index.
func indexCorpus(t testing.TB, dataDir string, corpus []realBottle) *Index {
	t.Helper()
	for _, b := range corpus {
		writeBottles(t, dataDir, b.bottle)
	}
	return openIndex(t, dataDir)
}

// renderTranscript renders the transcript at path alone as session id's
// bottle, as of now.
func renderTranscript(t testing.TB, id, path string, now time.Time) (*render.Bottle, error) {
	t.Helper()
	tr, err := sources.ReadTranscript(id, path)
	if err != nil {
		t.Fatal(err)
	}
	return render.Render(render.Input{SessionID: id, Spine: sources.BuildSpine(id, []*sources.Transcript{tr}), Now: now, Location: time.UTC})
}

// redactBottle rewrites the session's bottle with secret replaced in its first
// prompt, as a render after a redaction does, having asked for a purge
// first, as the store does before it renames such a bottle into place.
func redactBottle(t testing.TB, data string, s *talk, secret string) {
	t.Helper()
	s.Turns[0][0] = strings.ReplaceAll(s.Turns[0][0], secret, "[redacted]")
	store := bottles.Open(data, nil, nil)
	if err := store.AskPurge(); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(store.Path(s.ID), s.Bottle(t, testNow).Bytes); err != nil {
		t.Fatal(err)
	}
}

func openIndex(t testing.TB, dataDir string) *Index {
	t.Helper()
	return openIndexWith(t, dataDir, Options{Location: time.UTC})
}

// openIndexWith opens the index of dataDir with opts, closed at the
// test's end.
func openIndexWith(t testing.TB, dataDir string, opts Options) *Index {
	t.Helper()
	ix, err := Open(context.Background(), dataDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// lockAsBuilder takes the build lock of dataDir's index, as another
// process building it does, until unlock.
func lockAsBuilder(t testing.TB, dataDir string) (unlock func()) {
	t.Helper()
	unlock, _, err := lockBuild(context.Background(), filepath.Join(Dir(dataDir), lockFile), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return unlock
}

// listed returns the IDs of the sessions ix lists in scope, sorted.
func listed(t testing.TB, ix *Index, scope Scope) []string {
	t.Helper()
	list, err := ix.Sessions(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return ids
}

func search(t testing.TB, ix *Index, q string, scope Scope) []Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q, scope)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return hits
}

func sessionsOf(hits []Hit) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.Session] {
			seen[h.Session] = true
			out = append(out, h.Session)
		}
	}
	sort.Strings(out)
	return out
}

// lineOf returns line n (1-based) of a file.
func lineOf(t testing.TB, path string, n int) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("%s has no line %d", path, n)
	}
	return lines[n-1]
}

// dump is the content of an index in a form two indexes can be compared
// by: per bottle, each block's position, checksum, kind and time, and
// every indexed word with its block and offset.
type dump struct {
	docs  []string
	words []string
}

func dumpIndex(t testing.TB, ix *Index) dump {
	t.Helper()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var d dump
	q := func(sql string, row func(*sqlite3.Stmt) string, out *[]string) {
		st, _, err := ix.conn.Prepare(sql)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for st.Step() {
			*out = append(*out, row(st))
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
	}
	q(`SELECT b.path, d.seq, d.sum, d.kind, d.time FROM docs d JOIN bottles b ON b.id = d.bottle ORDER BY b.path, d.seq`,
		func(s *sqlite3.Stmt) string {
			return strings.Join([]string{s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnText(3), s.ColumnText(4)}, " ")
		}, &d.docs)
	if err := ix.conn.Exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, text, instance)`); err != nil {
		t.Fatal(err)
	}
	q(`SELECT b.path, d.seq, v.term, v.offset FROM temp.vocab v JOIN docs d ON d.id = v.doc JOIN bottles b ON b.id = d.bottle
		ORDER BY b.path, d.seq, v.offset, v.term`,
		func(s *sqlite3.Stmt) string {
			return strings.Join([]string{s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnText(3)}, " ")
		}, &d.words)
	return d
}

func sameLists(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: first difference at %d: %q, want %q", what, i, got[i], want[i])
			return
		}
	}
}

// searchCase is a query, the sessions its hits are in (in order, nil for
// none), and what each hit's line and snippet hold: one of shown, or the
// query itself if shown is nil, in any case.
type searchCase struct {
	query string
	want  []string
	shown []string
}

// checkSearches indexes the bottles of talks and runs each case on them.
func checkSearches(t *testing.T, talks []talk, cases []searchCase) {
	t.Helper()
	data := t.TempDir()
	for _, s := range talks {
		writeBottles(t, data, s.Bottle(t, testNow))
	}
	ix := openIndex(t, data)
	for _, c := range cases {
		hits := search(t, ix, c.query, Scope{Limit: MaxLimit})
		if got := sessionsOf(hits); !slices.Equal(got, c.want) {
			t.Errorf("search %q: %v, want %v", c.query, got, c.want)
			continue
		}
		shown := c.shown
		if shown == nil {
			shown = []string{c.query}
		}
		holds := func(text string) bool {
			return slices.ContainsFunc(shown, func(w string) bool { return strings.Contains(strings.ToLower(text), strings.ToLower(w)) })
		}
		for _, h := range hits {
			if line := lineOf(t, h.Bottle, h.Line); !holds(line) {
				t.Errorf("search %q: hit at line %d, which holds none of %q: %q", c.query, h.Line, shown, line)
			}
			if !holds(h.Snippet) {
				t.Errorf("search %q: snippet without any of %q: %q", c.query, shown, h.Snippet)
			}
		}
	}
}
