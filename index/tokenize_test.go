package index

import (
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite fold_table.go from the driver's unicode61 tokenizer")

// unicode61Folds tokenizes every character of the Basic Multilingual
// Plane with FTS5's unicode61 tokenizer (remove_diacritics 2), each
// between two letters, and returns what each becomes inside a word: a
// rune, -1 for a character it drops, or nothing for one that separates
// words.
func unicode61Folds(t *testing.T) map[rune]rune {
	t.Helper()
	c, err := openConn(filepath.Join(t.TempDir(), "u61.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2');
		CREATE VIRTUAL TABLE v USING fts5vocab(t, instance); BEGIN`); err != nil {
		t.Fatal(err)
	}
	ins, _, err := c.Prepare(`INSERT INTO t (rowid, x) VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	for r := rune(1); r <= 0xFFFF; r++ {
		if utf8.ValidRune(r) {
			if err := bind(ins, []any{int64(r), "x" + string(r) + "y"}); err != nil {
				t.Fatal(err)
			}
			if err := ins.Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	ins.Close()
	if err := c.Exec("COMMIT"); err != nil {
		t.Fatal(err)
	}
	q, _, err := c.Prepare(`SELECT doc, term FROM v WHERE term LIKE 'x%y'`)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out := map[rune]rune{}
	for q.Step() {
		r, mid := rune(q.ColumnInt64(0)), []rune(strings.TrimSuffix(strings.TrimPrefix(q.ColumnText(1), "x"), "y"))
		switch len(mid) {
		case 0:
			out[r] = -1
		case 1:
			out[r] = mid[0]
		default:
			t.Fatalf("unicode61 folds %U to %q", r, string(mid))
		}
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFoldTable: the tokenizer folds as unicode61 with remove_diacritics 2
// does, from a table of what unicode61 does to each lower-case letter
// (fold_table.go, which -update writes), before its own folds (see
// TestFoldBeyondUnicode61). The only differences are letters whose lower
// case SQLite's Unicode tables do not know yet.
func TestFoldTable(t *testing.T) {
	u61 := unicode61Folds(t)
	var table [][2]uint16
	for r := rune(1); r <= 0xFFFF; r++ {
		f, ok := u61[r]
		if !ok || (f == r) || (unicode.ToLower(r) != r && f != -1) {
			continue // upper case is lowered first, then looked up
		}
		if f < 0 {
			f = 0
		}
		table = append(table, [2]uint16{uint16(r), uint16(f)})
	}
	if *update {
		writeFoldTable(t, "fold_table.go", "TestFoldTable", "foldTable", `is what FTS5's unicode61 tokenizer (remove_diacritics 2) makes of
// the lower-case letters and the combining diacritics it changes, by rune: the
// letter without its diacritics, or 0 for a diacritic it drops.`, table)
		return
	}
	if !slices.Equal(foldTable[:], table) {
		t.Fatalf("fold_table.go (%d entries) is not what unicode61 does (%d): run go test ./index -run TestFoldTable -update", len(foldTable), len(table))
	}
	newer := 0
	for r := rune(1); r <= 0xFFFF; r++ {
		f, ok := u61[r]
		if !ok || classOf(r) != runeWord && classOf(r) != runeMark {
			continue
		}
		if got := fold61(r); got != f {
			if f == r && got == unicode.ToLower(r) || f == unicode.ToUpper(r) {
				newer++ // a case pair SQLite's tables do not have
				continue
			}
			t.Errorf("%U %q folds to %q, unicode61 to %q", r, r, got, f)
		}
	}
	if newer > 200 {
		t.Errorf("%d letters fold otherwise than in unicode61", newer)
	}
}

// TestFoldIdempotent: a folded word folds to itself, so that a query's
// folded tokens, written into the FTS5 query, are the same tokens there.
func TestFoldIdempotent(t *testing.T) {
	for r := rune(1); r <= unicode.MaxRune; r++ {
		f := foldRune(r)
		again := ""
		for _, r := range f {
			again += foldRune(r)
		}
		if again != f {
			t.Errorf("%U folds to %q, which folds to %q", r, f, again)
		}
	}
}

// toks lists the tokens of text: each one's term, after a + if colocated.
func toks(text string, query bool) []string {
	var out []string
	scanTokens(text, query, func(t token) bool {
		s := t.term(text)
		if t.colocated {
			s = "+" + s
		}
		out = append(out, s)
		return true
	})
	return out
}

func TestTokenize(t *testing.T) {
	cases := []struct {
		in           string
		doc, query   []string
		sameAsQuery  bool
		countedWords int
	}{
		{in: "Hello, World", doc: []string{"hello", "world"}, sameAsQuery: true},
		{in: "Café naïve ZÜRICH", doc: []string{"cafe", "naive", "zurich"}, sameAsQuery: true},
		{in: "cafe\u0301 nai\u0308ve", doc: []string{"cafe", "naive"}, sameAsQuery: true}, // decomposed
		{in: "\u0301 x", doc: []string{"x"}, sameAsQuery: true},                           // a mark alone is no word
		{in: "snake_case x-1 3.14 don't", doc: []string{"snake", "case", "x", "1", "3", "14", "don", "t"}, sameAsQuery: true},
		{in: "ΣΊΣΥΦΟΣ σοφός", doc: []string{"σισυφοσ", "σοφοσ"}, sameAsQuery: true}, // tonos, final sigma
		{in: "ΐ Ϋ πρωτεΐνη ο\u0344", doc: []string{"ι", "υ", "πρωτεινη", "ο"}, sameAsQuery: true},
		{in: "ἀρχή ᾶ", doc: []string{"ἀρχη", "ᾶ"}, sameAsQuery: true}, // polytonic breathings and circumflex stay
		{in: "Straße GROẞ ßx", doc: []string{"strasse", "gross", "ssx"}, sameAsQuery: true},
		{in: "йод ёлка", doc: []string{"йод", "елка"}, sameAsQuery: true},
		{in: "稳定性", doc: []string{"稳定", "+稳", "定性", "+定", "+性"}, query: []string{"稳定", "定性"}},
		{in: "稳", doc: []string{"稳"}, sameAsQuery: true},
		{in: "用redis缓存。好", doc: []string{"用", "redis", "缓存", "+缓", "+存", "好"}, query: []string{"用", "redis", "缓存", "好"}},
		{in: "안정적입니다 배포", doc: []string{"안정", "+안", "정적", "+정", "적입", "+적", "입니", "+입", "니다", "+니", "+다", "배포", "+배", "+포"},
			query: []string{"안정", "정적", "적입", "입니", "니다", "배포"}},
		{in: "テストを追加", doc: []string{"テス", "+テ", "スト", "+ス", "トを", "+ト", "を追", "+を", "追加", "+追", "+加"},
			query: []string{"テス", "スト", "トを", "を追", "追加"}},
		{in: "第3章", doc: []string{"第", "3", "章"}, sameAsQuery: true},
		// Thai: a consonant with its vowel and tone marks is one character.
		{in: "เสถียร", doc: []string{"เส", "+เ", "สถี", "+ส", "ถีย", "+ถี", "ยร", "+ย", "+ร"}, query: []string{"เส", "สถี", "ถีย", "ยร"}},
		{in: "ｻｰﾊﾞｰ", doc: []string{"サー", "+サ", "ーバ", "+ー", "バー", "+バ", "+ー"}, query: []string{"サー", "ーバ", "バー"}},
		{in: "한국", doc: []string{"한국", "+한", "+국"}, query: []string{"한국"}}, // NFD
		{in: "ＨＥＬＬＯ ﬁ Œuvre İSTANBUL ılık Łódź ǅ", doc: []string{"hello", "fi", "oeuvre", "istanbul", "ilik", "lodz", "dz"}, sameAsQuery: true},
		{in: "नमस्ते می\u200cخواهم", doc: []string{"नमस्ते", "میخواهم"}, sameAsQuery: true}, // marks and ZWNJ inside words
		{in: "👍🏽👨‍💻 ❤️🇯🇵x", doc: []string{"👍", "👨‍💻", "❤", "🇯🇵", "x"}, sameAsQuery: true},
		{in: "\xff\xfe broken\x00end", doc: []string{"broken", "end"}, sameAsQuery: true},
	}
	for _, c := range cases {
		if c.sameAsQuery {
			c.query = c.doc
		}
		if got := toks(c.in, false); !reflect.DeepEqual(got, c.doc) {
			t.Errorf("document %q: %q, want %q", c.in, got, c.doc)
		}
		if got := toks(c.in, true); !reflect.DeepEqual(got, c.query) {
			t.Errorf("query %q: %q, want %q", c.in, got, c.query)
		}
	}
}

// TestCountWords: a block's length for ranking is its tokens' positions,
// as FTS5 counts them (colocated tokens share one).
func TestCountWords(t *testing.T) {
	for _, s := range []string{"", "one", "two words", "  lead, trail.  ", "ünï-code 日本語 x2", "a\nb\tc", "\xff\xfe broken",
		"snake_case x-1 3.14 a/b `code` ~@#$%^&*()[]{}<>?!;:'\"", "\x00\x7f end", "稳定性，稳。用redis缓存", "안정적입니다 배포",
		"\u0301 \u0301a a\u0301 稳\u0301定", "コーヒー",
		"Straße ẞ ß-ß", "ΣΊΣΥΦΟΣ πρωτεΐνη \u0344 ο\u0344ς", "เสถียร ฐานข้อมูล \u0e34 \u0e34a", "ｻｰﾊﾞｰ ﬁ ½",
		"\u1112\u1161\u11ab\u1100\u116e\u11a8", "👍🏽👨\u200d💻 🇯🇵🇯🇵🇯 x\u20e3 🇯\u20e3 \ufe0f 🏽"} {
		positions := 0
		scanTokens(s, false, func(t token) bool {
			if !t.colocated {
				positions++
			}
			return true
		})
		if got := countWords([]byte(s)); got != positions {
			t.Errorf("countWords(%q) = %d, tokens at %d positions", s, got, positions)
		}
	}
}

// tokenizeTexts are 256 KB of text in each of a few scripts, and the
// real bottles (skipped where the fixtures are absent), in this order.
var tokenizeTexts = []struct {
	name string
	text func(testing.TB) string
}{
	{"english", repeatedText("Added exponential backoff to the retry loop; see internal/retry.go:42 for `Backoff()`.\n")},
	{"greek", repeatedText("Η δοκιμή ελέγχει τον λόγο του σφάλματος στην πρωτεΐνη, ΆΡΘΡΟ και Ώρα του ελέγχου.\n")},
	{"german", repeatedText("Die Straße ist gesperrt, die Straßenbahn fährt nicht über die große Brücke.\n")},
	{"russian", repeatedText("Проверь конфигурацию сервера и перезапусти службу ещё раз, пожалуйста.\n")},
	{"thai", repeatedText("ช่วยทำให้บริการนี้เสถียรขึ้นและย้ายฐานข้อมูลไปเครื่องใหม่ ขอบคุณมากครับ\n")},
	{"cjk", repeatedText("我们需要让这个服务更稳定一些，然后再部署到生产环境。テストを追加してください。안정적입니다.\n")},
	{"real", func(tb testing.TB) string {
		var b strings.Builder
		for _, rb := range realBottles(tb, true) {
			b.Write(rb.bottle.Bytes)
		}
		return b.String()
	}},
}

func repeatedText(line string) func(testing.TB) string {
	return func(testing.TB) string { return strings.Repeat(line, 256<<10/len(line)+1) }
}

// BenchmarkTokenize cuts text as a document's is cut for the index.
func BenchmarkTokenize(b *testing.B) {
	for _, tt := range tokenizeTexts {
		b.Run(tt.name, func(b *testing.B) {
			text := tt.text(b)
			b.SetBytes(int64(len(text)))
			loopCPU(b, func() {
				n := 0
				scanTokens(text, false, func(t token) bool { n += len(t.term(text)); return true })
			})
		})
	}
}

// BenchmarkTokenizeCountWords counts a document's words, as Put does for
// every block.
func BenchmarkTokenizeCountWords(b *testing.B) {
	for _, tt := range tokenizeTexts {
		b.Run(tt.name, func(b *testing.B) {
			text := []byte(tt.text(b))
			b.SetBytes(int64(len(text)))
			loopCPU(b, func() { countWords(text) })
		})
	}
}

// loopCPU runs fn in b's loop and reports the CPU time of an iteration
// (cpu-ns/op) beside the wall time: on a machine shared with other work,
// the wall time varies several times over, the thread's CPU time far less.
func loopCPU(b *testing.B, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, ok := threadCPU()
	n := 0
	for b.Loop() {
		fn()
		n++
	}
	if cpu, _ := threadCPU(); ok && n > 0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(n), "cpu-ns/op")
	}
}

// FuzzTokenize: for any text, tokens are in order inside it (a CJK
// bigram overlaps the one before it), each one's term is what its own
// bytes are cut to, and is cut to itself again (as a query's token is by
// FTS5), and countWords counts their positions.
func FuzzTokenize(f *testing.F) {
	for _, seed := range []string{"Hello, World", "Straße ẞ ßß-ß", "ΣΊΣΥΦΟΣ πρωτεΐνη ο\u0344ς", "cafe\u0301 x",
		"稳定性 用redis缓存", "안정적입니다", "\xff\xfe broken\x00end", "\u0301 \u0301a", "йод ёлка ἀρχή",
		"ฉันชอบกินข้าวผัด", "ｻｰﾊﾞｰ ＨＥＬＬＯ ﬁ", "\u1112\u1161\u11ab", "👍🏽👨\u200d💻🇯🇵🇯", "x\u0f73 İı"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		positions, start := 0, 0
		scanTokens(text, false, func(tk token) bool {
			if tk.start < start || tk.start >= tk.end || tk.end > len(text) {
				t.Fatalf("%q: token %+v after one at %d", text, tk, start)
			}
			start = tk.start
			if !tk.colocated {
				positions++
			}
			term := tk.term(text)
			if own := toks(text[tk.start:tk.end], true); !tk.colocated && !slices.Contains(own, term) {
				t.Fatalf("%q: token %q of %q, which is cut to %q", text, term, text[tk.start:tk.end], own)
			}
			if again := toks(term, true); !slices.Equal(again, []string{term}) {
				t.Fatalf("%q: token %q is cut to %q", text, term, again)
			}
			return true
		})
		if got := countWords([]byte(text)); got != positions {
			t.Fatalf("countWords(%q) = %d, tokens at %d positions", text, got, positions)
		}
	})
}

// writeFoldTable writes file, generated by test, declaring the fold table
// name (documented by doc, which follows the name) as table.
func writeFoldTable(t *testing.T, file, test, name, doc string, table [][2]uint16) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by %s -update; DO NOT EDIT.\n\npackage index\n\n", test)
	fmt.Fprintf(&b, "// %s %s\nvar %s = [...][2]uint16{\n", name, doc, name)
	for _, e := range table {
		if e[1] == 0 {
			fmt.Fprintf(&b, "\t{%#04x, 0}, // %q dropped\n", e[0], rune(e[0]))
		} else {
			fmt.Fprintf(&b, "\t{%#04x, %#04x}, // %q → %q\n", e[0], e[1], rune(e[0]), rune(e[1]))
		}
	}
	b.WriteString("}\n")
	writeSource(t, file, b.String())
}
