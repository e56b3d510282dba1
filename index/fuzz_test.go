package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
)

// queryCorpus holds the words FTS5's query language gives meaning to, so
// that a query that slipped into its syntax would find the wrong blocks.
var queryCorpus = []talk{
	{ID: "q1", CWD: "/p", Start: day, Turns: [][2]string{
		{"near the table drop", "or and not"},
		{"select star from bottles", "match body column text"},
		{"alpha beta gamma", "beta alpha"},
	}},
	{ID: "q2", CWD: "/p", Start: day.Add(time.Hour), Turns: [][2]string{
		{"a b c d e f g", "NEAR OR AND NOT"},
		{"bm25 rank rowid", "delete all optimize merge"},
	}},
}

// FuzzSearchQuery: any query text either searches for its words or is
// refused as having none; it never errors, and (for ASCII input, where this
// test's tokenizer and FTS5's agree exactly) it finds exactly the blocks
// that hold every word and every quoted phrase of it.
func FuzzSearchQuery(f *testing.F) {
	for _, seed := range []string{
		"alpha", `"alpha beta"`, `"beta alpha"`, "NEAR(a b)", "near table", "a OR b", "not", "a AND NOT b",
		`'; DROP TABLE bottles; --`, "body:alpha", "{body}: alpha", "*", "alph*", "^alpha", "-alpha", "+beta",
		`"unbalanced alpha`, `""""`, "(((", ")", "alpha\x00beta", "NEAR(\"a\" \"b\", 2)", "rank:1", "bottles",
		"é", "日本語", "\xff\xfe", "a b c d e f g h i j k l m n o p q r s t u v w x y z",
	} {
		f.Add(seed)
	}
	data := f.TempDir()
	for _, s := range queryCorpus {
		writeBottles(f, data, s.Bottle(f, testNow))
	}
	ix := openIndex(f, data)
	type block struct {
		session string
		words   []string
	}
	var blocks []block
	for _, s := range queryCorpus {
		b := s.Bottle(f, testNow)
		p, err := render.Parse(b.Bytes, time.UTC)
		if err != nil {
			f.Fatal(err)
		}
		for _, bl := range p.Blocks {
			blocks = append(blocks, block{s.ID, tokens(string(b.Bytes[bl.Text:bl.End]))})
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		hits, err := ix.Search(context.Background(), q, Scope{Limit: MaxLimit})
		ps := parseQuery(q)
		if len(ps) == 0 {
			if !errors.Is(err, ErrNoWords) {
				t.Fatalf("query %q without words: err %v", q, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		if !isASCII(q) {
			return
		}
		want := 0
		for _, b := range blocks {
			if holdsAll(b.words, ps) {
				want++
			}
		}
		if len(hits) != want {
			t.Fatalf("query %q (%s): %d hits, want %d", q, matchExpr(ps), len(hits), want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// holdsAll reports whether words hold every phrase as a run.
func holdsAll(words []string, ps []phrase) bool {
	for _, p := range ps {
		found := false
		for i := 0; i+len(p.tokens) <= len(words) && !found; i++ {
			found = slices.Equal(words[i:i+len(p.tokens)], p.tokens)
		}
		if !found {
			return false
		}
	}
	return true
}

// FuzzPrivateNeverFound follows private text from a transcript to search
// hits: a session whose messages hold a <private> part (closed, and
// unclosed to the end of a message) is rendered and indexed, and no word
// that the bottle does not show can be found; when the private part holds
// no tag of its own, none of its words can be found at all.
func FuzzPrivateNeverFound(f *testing.F) {
	for _, seed := range []string{
		"hunter2 password", "sk-ant-api03-SECRETKEY", "secret\nmultiline\nvalue", "Zürich café naïve",
		"<private>nested</private> still", "</private> escaped", "a", "日本語の秘密", "private", "alpha omega",
	} {
		f.Add(seed)
	}
	root := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, secret string) {
		n++
		id := "p" + strings.Repeat("x", n%3) + time.Now().Format("150405.000000000")
		id = strings.ReplaceAll(id, ".", "")
		data := filepath.Join(root, id)
		path := filepath.Join(data, id+".jsonl")
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		rec := func(uuid, parent string, i int) synth.Rec {
			return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: day.Add(time.Duration(i) * time.Minute), CWD: "/p"}
		}
		transcript := rec("u1", "", 0).User("public words <private>"+secret+"</private> after") +
			rec("a1", "u1", 1).Assistant("m1", "answer <private>"+secret+"</private> done") +
			rec("u2", "a1", 2).User("second message <private>"+secret) +
			rec("a2", "u2", 3).Assistant("m2", "closing remark")
		if err := os.WriteFile(path, []byte(transcript), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := renderTranscript(t, id, path, testNow)
		if err != nil {
			t.Fatal(err)
		}
		writeBottles(t, data, b)
		ix, err := Open(context.Background(), data, Options{Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		// The words of the conversation as the bottle shows it (its
		// header holds dates and ids, which are not indexed).
		p, err := render.Parse(b.Bytes, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		shown := map[string]bool{}
		for _, bl := range p.Blocks {
			for _, w := range tokens(string(b.Bytes[bl.Text:bl.End])) {
				shown[w] = true
			}
		}
		public := map[string]bool{}
		for _, w := range tokens("public words after answer done second message closing remark") {
			public[w] = true
		}
		plain := !strings.ContainsAny(secret, "<>")
		for _, w := range tokens(secret) {
			private := plain && !public[w]
			if private && shown[w] {
				t.Fatalf("private word %q is in the bottle", w)
			}
			if private || !shown[w] {
				if hits := search(t, ix, w, Scope{}); len(hits) != 0 {
					t.Fatalf("word %q, which the bottle does not show, found: %+v", w, hits)
				}
			}
		}
		if plain && len(tokens(secret)) > 0 {
			all := true
			for _, w := range tokens(secret) {
				all = all && public[w]
			}
			if hits := search(t, ix, `"`+strings.Join(tokens(secret), " ")+`"`, Scope{}); !all && len(hits) != 0 {
				t.Fatalf("private phrase found: %+v", hits)
			}
		}
		os.RemoveAll(data)
	})
}
