package index

import (
	"cmp"
	"fmt"
	"go/format"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTalks are sessions in Greek, German and Russian, with the accents,
// final sigmas and sharp s their writers type.
var foldTalks = []talk{
	{ID: "s-el", CWD: "/home/u/el", Start: day, Turns: [][2]string{
		{"Γράψε μια δοκιμή για τα Ελληνικά, παρακαλώ.", "Η δοκιμή ελέγχει τον ΛΌΓΟ του σφάλματος."},
		{"Ο λόγος είναι η πρωτεΐνη ΠΡΩΤΕΪΝΗ.", "Ο ΛΌΓΟΣ βρέθηκε: ΆΡΘΡΟ και Ώρα."},
	}},
	{ID: "s-el-nfd", CWD: "/home/u/el", Start: day.Add(time.Hour), Turns: [][2]string{
		{"μια επανάληψη\u0301 και σημει\u0301ωση", "Εντάξει."},
	}},
	{ID: "s-de", CWD: "/home/u/de", Start: day.Add(2 * time.Hour), Turns: [][2]string{
		{"Die Straße ist gesperrt, die Straßenbahn fährt nicht.", "Die GROẞE Umleitung ist eingerichtet."},
	}},
	{ID: "s-de-ss", CWD: "/home/u/de", Start: day.Add(3 * time.Hour), Turns: [][2]string{
		{"In der Schweiz schreibt man Strasse und gross.", "Ja."},
	}},
	{ID: "s-ru", CWD: "/home/u/ru", Start: day.Add(4 * time.Hour), Turns: [][2]string{
		{"Проверь йод и ёлку.", "Готово."},
	}},
}

// TestSearchFolds: Greek words are found without their tonos and
// dialytika, whatever their sigma, and German ß as ss, both ways; the
// hit's line and snippet hold the word as written. Marks that make a
// letter of its own (Russian й, ё) are not folded away.
func TestSearchFolds(t *testing.T) {
	checkSearches(t, foldTalks, []searchCase{
		{"ελληνικα", []string{"s-el"}, []string{"Ελληνικά"}},
		{"ΕΛΛΗΝΙΚΆ", []string{"s-el"}, []string{"Ελληνικά"}},
		{"δοκιμη", []string{"s-el"}, []string{"δοκιμή"}},
		{"δοκιμή", []string{"s-el"}, []string{"δοκιμή"}},
		{"λογος", []string{"s-el"}, []string{"λόγος", "ΛΌΓΟΣ"}},
		{"λογοσ", []string{"s-el"}, []string{"λόγος", "ΛΌΓΟΣ"}}, // no final sigma
		{"ΛΟΓΟΣ", []string{"s-el"}, []string{"λόγος", "ΛΌΓΟΣ"}},
		{"λόγο", []string{"s-el"}, []string{"ΛΌΓΟ"}},
		{"πρωτεινη", []string{"s-el"}, []string{"πρωτεΐνη", "ΠΡΩΤΕΪΝΗ"}},
		{"αρθρο ωρα", []string{"s-el"}, []string{"ΆΡΘΡΟ"}},
		{`"δοκιμη για τα ελληνικα"`, []string{"s-el"}, []string{"δοκιμή για τα Ελληνικά"}},
		{"επαναληψη", []string{"s-el-nfd"}, []string{"επανάληψη\u0301"}}, // decomposed, and an accent too many
		{"σημείωση", []string{"s-el-nfd"}, []string{"σημει\u0301ωση"}},
		{"strasse", []string{"s-de", "s-de-ss"}, []string{"Straße", "Strasse"}},
		{"STRASSE", []string{"s-de", "s-de-ss"}, []string{"Straße", "Strasse"}},
		{"straße", []string{"s-de", "s-de-ss"}, []string{"Straße", "Strasse"}},
		{"strassenbahn", []string{"s-de"}, []string{"Straßenbahn"}},
		{"grosse", []string{"s-de"}, []string{"GROẞE"}},
		{"groß", []string{"s-de-ss"}, []string{"gross"}},
		{"strase", nil, nil},
		{"йод", []string{"s-ru"}, []string{"йод"}},
		{"иод", nil, nil},
		{"елку", []string{"s-ru"}, []string{"ёлку"}}, // ё is е, as Russian users type it
	})
}

// greekMarks are the diacritics whose Greek letters fold to the letter
// without them: tonos (Unicode calls it acute), dialytika (diaeresis),
// and the two together. Breathings, the circumflex and the iota
// subscript of polytonic Greek are not among them.
var greekMarks = []rune{0x0301, 0x0308, 0x0344}

// greekFolds derives greekFoldTable from Unicode's canonical
// decompositions: every lower-case Greek letter whose NFD is a Greek
// letter and greekMarks alone folds to that letter as unicode61 folds it;
// and U+0344, the combining dialytika with tonos, whose NFD is U+0308
// U+0301, is dropped as unicode61 drops those two.
func greekFolds(t *testing.T) [][2]uint16 {
	t.Helper()
	var out [][2]uint16
	for _, r := range []rune{0x0344} {
		for _, m := range norm.NFD.String(string(r)) {
			if fold61(m) >= 0 {
				t.Fatalf("%U decomposes to %U, which unicode61 keeps", r, m)
			}
		}
		out = append(out, [2]uint16{uint16(r), 0})
	}
	for r := rune(1); r <= 0xFFFF; r++ {
		// Those NFKC folds otherwise are compatFoldTable's (ϓ is Ύ, not ϒ).
		if base, ok := greekBase(r); ok && unicode.ToLower(r) == r && norm.NFKC.String(string(r)) == norm.NFC.String(string(r)) {
			out = append(out, [2]uint16{uint16(r), uint16(fold61(unicode.ToLower(base)))})
		}
	}
	slices.SortFunc(out, func(a, b [2]uint16) int { return int(a[0]) - int(b[0]) })
	return out
}

// greekBase is the letter a Greek letter r is without its greekMarks, if
// it is one with them.
func greekBase(r rune) (rune, bool) {
	if !unicode.Is(unicode.Greek, r) || !unicode.IsLetter(r) {
		return 0, false
	}
	d := []rune(norm.NFD.String(string(r)))
	if len(d) < 2 || !unicode.Is(unicode.Greek, d[0]) || !unicode.IsLetter(d[0]) {
		return 0, false
	}
	for _, m := range d[1:] {
		if !slices.Contains(greekMarks, m) {
			return 0, false
		}
	}
	return d[0], true
}

// fold61 is foldRune without bottled's own folds: what unicode61 does,
// from fold_table.go (which TestFoldTable checks against it).
func fold61(r rune) rune {
	if r < utf8.RuneSelf {
		return unicode.ToLower(r)
	}
	r = unicode.ToLower(r)
	if f, ok := lookupFold(foldTable[:], r); ok {
		return f
	}
	return r
}

// TestGreekFoldTable: greekFoldTable is what Unicode's decompositions
// make of the Greek letters with tonos and dialytika (see greekFolds;
// -update writes fold_greek.go), each of them, capitals too, folds to its
// letter, and none is a letter unicode61 folds already.
func TestGreekFoldTable(t *testing.T) {
	table := greekFolds(t)
	if *update {
		writeFoldTable(t, "fold_greek.go", "TestGreekFoldTable", "greekFoldTable", `is what bottled folds beyond unicode61 (see foldRune), by rune:
// the lower-case Greek letters with tonos, dialytika or both, each to the letter
// without them (Unicode's decomposition), and the combining dialytika with tonos,
// dropped (0) as the combining tonos and dialytika are.`, table)
		return
	}
	if !slices.Equal(greekFoldTable[:], table) {
		t.Fatalf("fold_greek.go (%d entries) is not what Unicode's decompositions give (%d): run go test ./index -run TestGreekFoldTable -update", len(greekFoldTable), len(table))
	}
	for _, e := range table {
		if _, ok := lookupFold(foldTable[:], rune(e[0])); ok {
			t.Errorf("%U is in unicode61's table too", e[0])
		}
	}
	letters := 0
	for r := rune(1); r <= unicode.MaxRune; r++ {
		if base, ok := greekBase(r); ok {
			letters++
			if got, want := foldRune(r), foldRune(unicode.ToLower(base)); got != want {
				t.Errorf("%U %q folds to %q, want %q", r, r, got, want)
			}
		}
	}
	// Pairs as a reader checks them: the monotonic accents, their capitals, polytonic oxia.
	for _, p := range []string{"άα", "έε", "ήη", "ίι", "όο", "ύυ", "ώω", "ΐι", "ΰυ", "ϊι", "ϋυ",
		"Άα", "Έε", "Ήη", "Ίι", "Όο", "Ύυ", "Ώω", "Ϊι", "Ϋυ", "\u1f71α", "\u1fbbα", "\u1fd3ι", "ςσ", "Σσ"} {
		r := []rune(p)
		if got := foldRune(r[0]); got != string(r[1]) {
			t.Errorf("%U %q folds to %q, want %q", r[0], r[0], got, r[1])
		}
	}
	if letters < 30 {
		t.Errorf("only %d Greek letters with tonos or dialytika", letters)
	}
}

// TestFoldBeyondUnicode61: bottled folds as unicode61 (fold61) but for
// the runes of greekFoldTable, extraFolds and compatFoldTable, with their
// capitals; every rune of a word is folded so in a token, and a folded
// token is cut and folded to itself again (a query's tokens, written into
// the FTS5 query, are the same tokens there).
func TestFoldBeyondUnicode61(t *testing.T) {
	beyond := map[rune]string{}
	for _, e := range greekFoldTable {
		beyond[rune(e[0])] = ""
		if e[1] != 0 {
			beyond[rune(e[0])] = string(rune(e[1]))
		}
	}
	for _, e := range slices.Concat(extraFolds[:], compatFoldTable[:]) {
		if _, ok := beyond[e.r]; ok {
			t.Errorf("%U %q is in two tables", e.r, e.r)
		}
		beyond[e.r] = e.to
	}
	for r := rune(1); r <= unicode.MaxRune; r++ {
		want, ok := beyond[unicode.ToLower(r)]
		if !ok {
			if f := fold61(r); f >= 0 {
				want = string(f)
			}
		}
		if got := foldRune(r); got != want {
			t.Errorf("%U %q folds to %q, want %q", r, r, got, want)
		}
		if class := classOf(r); class != runeWord && class != runeMark {
			continue
		}
		word := "x" + string(r) + "y"
		if got := toks(word, false); !reflect.DeepEqual(got, []string{"x" + want + "y"}) {
			t.Errorf("%q is cut to %q, want %q", word, got, "x"+want+"y")
		} else if again := toks(got[0], true); !reflect.DeepEqual(again, got) {
			t.Errorf("%q is cut to %q, which is cut to %q", word, got, again)
		}
	}
}

// compatFolds derives compatFoldTable: what NFKC makes of each lower-case
// rune of a word, a CJK run or a mark that NFKC changes (a compatibility
// form, or one that NFC replaces: U+0340 is U+0300), folded by the other
// tables, where that is
// not what the rune folds to without it and is of the rune's own class
// (letters and marks for a word's, one character for CJK, marks for a
// mark), so that it is cut as the rune is: ½ stays ½ (NFKC's 1⁄2 would
// be two words), ㅏ stays ㅏ (NFKC's conjoining ᅡ continues the
// character before it).
func compatFolds() []foldTo {
	base := newFolder(nil)
	var out []foldTo
	for r := rune(1); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) || unicode.ToLower(r) != r {
			continue
		}
		if to, ok := compatFold(&base, r); ok {
			out = append(out, foldTo{r, to})
		}
	}
	return out
}

// compatFold is what base makes of NFKC's r, if that is for
// compatFoldTable (see compatFolds).
func compatFold(base *folder, r rune) (string, bool) {
	class, s := classOf(r), string(r)
	if class != runeWord && class != runeCJK && class != runeMark {
		return "", false
	}
	k := norm.NFKC.String(s)
	if k == s {
		return "", false
	}
	to := string(base.appendFoldUnit(nil, k))
	if to == string(base.appendFold(nil, r)) {
		return "", false
	}
	classes := map[uint8]int{}
	for _, r := range to {
		classes[classOf(r)]++
	}
	switch class {
	case runeCJK:
		return to, utf8.RuneCountInString(to) == 1 && classes[runeCJK] == 1
	case runeMark:
		return to, classes[runeMark] == utf8.RuneCountInString(to)
	}
	return to, to != "" && classes[runeWord] > 0 && classes[runeWord]+classes[runeMark] == utf8.RuneCountInString(to)
}

// TestCompatFoldTable: compatFoldTable is what compatFolds derives from
// Unicode (-update writes fold_compat.go), and every rune, capitals too,
// whose NFKC is for the table folds to it.
func TestCompatFoldTable(t *testing.T) {
	table := compatFolds()
	if *update {
		writeCompatTable(t, table)
		return
	}
	if !slices.Equal(compatFoldTable[:], table) {
		t.Fatalf("fold_compat.go (%d entries) is not what NFKC gives (%d): run go test ./index -run TestCompatFoldTable -update", len(compatFoldTable), len(table))
	}
	base := newFolder(nil)
	for r := rune(1); r <= unicode.MaxRune; r++ {
		if want, ok := compatFold(&base, r); ok && foldRune(r) != want {
			t.Errorf("%U %q folds to %q, NFKC to %q", r, r, foldRune(r), want)
		}
	}
	for _, p := range [][2]string{{"Ａ", "a"}, {"ｚ", "z"}, {"９", "9"}, {"ﬁ", "fi"}, {"ﬂ", "fl"}, {"ｻ", "サ"}, {"ｰ", "ー"},
		{"①", "1"}, {"²", "2"}, {"Ⅻ", "xii"}, {"𝐀", "a"}, {"ǅ", "dz"}, {"豈", "豈"}} {
		if got := foldRune([]rune(p[0])[0]); got != p[1] {
			t.Errorf("%q folds to %q, want %q", p[0], got, p[1])
		}
	}
}

// TestMergedFolds: fold_merged.go (which -update writes) is every fold
// table merged, compatFoldTable as compatFolds derives it.
func TestMergedFolds(t *testing.T) {
	want := newFolder(compatFolds())
	if *update {
		writeMergedFolds(t, want)
		return
	}
	if !slices.Equal(fold.folds, want.folds) || !slices.Equal(fold.expansions, want.expansions) || fold.pages != want.pages {
		t.Fatalf("fold_merged.go (%d and %d entries) is not the tables merged (%d and %d): run go test ./index -run 'TestMergedFolds|TestCompatFoldTable' -update",
			len(fold.folds), len(fold.expansions), len(want.folds), len(want.expansions))
	}
}

// writeMergedFolds writes fold_merged.go, declaring the tables of f.
func writeMergedFolds(t *testing.T, f folder) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`// Code generated by TestMergedFolds -update; DO NOT EDIT.

package index

// mergedFolds is foldTable, greekFoldTable, extraFolds and compatFoldTable
// in one table of runes up to U+FFFF, by rune: the rune it folds to, 0 if
// dropped, expanded if in mergedExpansions.
var mergedFolds = [...][2]uint16{
`)
	for _, e := range f.folds {
		fmt.Fprintf(&b, "\t{%#04x, %#04x},\n", e[0], e[1])
	}
	b.WriteString("}\n\n// mergedExpansions are the folds to more than one rune, or of runes beyond\n// U+FFFF, by rune.\nvar mergedExpansions = [...]foldTo{\n")
	for _, e := range f.expansions {
		fmt.Fprintf(&b, "\t{%#04x, %q},\n", e.r, e.to)
	}
	b.WriteString("}\n")
	writeSource(t, "fold_merged.go", b.String())
}

// writeCompatTable writes fold_compat.go, declaring compatFoldTable.
func writeCompatTable(t *testing.T, table []foldTo) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`// Code generated by TestCompatFoldTable -update; DO NOT EDIT.

package index

// compatFoldTable is what bottled folds the compatibility forms to (see
// compatFolds in fold_test.go), by lower-case rune: NFKC's form, folded.
var compatFoldTable = [...]foldTo{
`)
	for _, e := range table {
		fmt.Fprintf(&b, "\t{%#04x, %q}, // %q\n", e.r, e.to, e.r)
	}
	b.WriteString("}\n")
	writeSource(t, "fold_compat.go", b.String())
}

// writeSource writes the Go source src, formatted, to file.
func writeSource(t *testing.T, file, src string) {
	t.Helper()
	out, err := format.Source([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// unfoldedFormat is the last index format whose words kept the Greek
// accents and ß that the tokenizer now folds: its words cannot be searched
// with the folded ones.
const unfoldedFormat = 4

// TestUnfoldedFormatRebuilt: an index of unfoldedFormat, complete or with
// its build left unfinished, is never searched nor continued: the daemon
// and bottled index (building to the end), a search and a reader
// (building for a while) each build a new generation, and find the folded
// words in it. The old generation's words are deleted here, so that any
// answer from it finds nothing.
func TestUnfoldedFormatRebuilt(t *testing.T) {
	cases := []struct {
		name       string
		unfinished bool
		buildFor   time.Duration
	}{
		{"daemon", false, 0},
		{"search", false, 3 * time.Second},
		{"reader", false, ReaderBuildFor},
		{"unfinished, daemon", true, 0},
		{"unfinished, search", true, 3 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			for _, s := range foldTalks {
				writeBottles(t, data, s.Bottle(t, testNow))
			}
			openIndex(t, data).Close()
			path, gen := currentGen(t, data)
			conn, err := openConn(path)
			if err != nil {
				t.Fatal(err)
			}
			old := fmt.Sprintf(`INSERT INTO text (text) VALUES ('delete-all'); PRAGMA user_version = %d;`, unfoldedFormat)
			if c.unfinished {
				old += fmt.Sprintf(`INSERT INTO build VALUES (1, 0, '', %d, 1, 1, 0);`, buildTop)
			}
			if err := conn.Exec(old); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			ix := openIndexWith(t, data, Options{Location: time.UTC, BuildFor: c.buildFor})
			for q, want := range map[string][]string{"ελληνικα": {"s-el"}, "strasse": {"s-de", "s-de-ss"}} {
				if got := sessionsOf(search(t, ix, q, Scope{Limit: MaxLimit})); !slices.Equal(got, want) {
					t.Errorf("search %q: %v, want %v", q, got, want)
				}
			}
			if _, now := currentGen(t, data); now == gen {
				t.Errorf("generation %d of format %d still in use", gen, unfoldedFormat)
			}
		})
	}
}

// newFolder folds by unicode61's, the Greek and the extra folds, and
// compat.
func newFolder(compat []foldTo) folder {
	t := slices.Concat(foldTable[:], greekFoldTable[:])
	var ex []foldTo
	for _, f := range slices.Concat(extraFolds[:], compat) {
		to, n := utf8.DecodeRuneInString(f.to)
		switch {
		case f.r <= 0xFFFF && f.to == "":
			t = append(t, [2]uint16{uint16(f.r), 0})
		case f.r <= 0xFFFF && n == len(f.to) && to < expanded:
			t = append(t, [2]uint16{uint16(f.r), uint16(to)})
		default:
			if f.r <= 0xFFFF {
				t = append(t, [2]uint16{uint16(f.r), expanded})
			}
			ex = append(ex, f)
		}
	}
	slices.SortFunc(t, func(a, b [2]uint16) int { return int(a[0]) - int(b[0]) })
	slices.SortFunc(ex, func(a, b foldTo) int { return cmp.Compare(a.r, b.r) })
	return paged(folder{folds: t, expansions: ex})
}

// foldRune is what r folds to.
func foldRune(r rune) string { return string(fold.appendFold(nil, r)) }
