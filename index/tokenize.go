package index

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// The index's words come from bottled's own tokenizer, registered on each
// connection under tokenizerName (fts5.API.CreateTokenizer), and the same
// code cuts queries, finds a hit's line and counts a block's words, so
// that all of them agree.
//
// Outside Chinese, Japanese and Korean it cuts text as FTS5's unicode61
// tokenizer with remove_diacritics 2 did: a token is a run of letters,
// digits and private-use characters, folded to lower case and stripped of
// diacritics ("Café" is "cafe"; the table of what loses which diacritic is
// unicode61's, see fold_table.go). unicode61's table has the diacritics of
// Latin letters only and folds one rune to one, so beyond it Greek letters
// lose their tonos and dialytika as Latin ones lose theirs ("Ελληνικά" is
// "ελληνικα", see fold_greek.go), and ß is "ss" ("Straße" is "strasse"):
// what a user types without them finds them. Diacritics that make a
// letter of its own elsewhere (Russian й, ё) are kept, as unicode61 keeps
// them.
//
// unicode61 makes one token of a whole run of Han, kana or Hangul, and
// those scripts put no space between words (Chinese, Japanese) or attach
// particles to them (Korean "안정적입니다" is "안정적" and "입니다"), so only a
// whole run between spaces or punctuation could be found. Here a run of
// those characters is cut into bigrams, each pair of neighbours one token
// at its own position ("稳定性" is "稳定", "定性"): a word of n characters is
// the phrase of its n-1 bigrams, found wherever it stands inside a run.
// In a document each character is also a token of its own, at the
// position of the bigram it starts (the last one at the last bigram's;
// FTS5_TOKEN_COLOCATED, so phrases are not broken), so that a query of one
// character finds it anywhere. A prefix query over the bigrams would find
// the same, but reads every bigram of a common character: one-character
// queries took 100 ms and more over 1 GB of bottles, for an index a tenth
// smaller. A run of one character is that character.
const tokenizerName = "bottled"

// tokenizer is the FTS5 tokenizer (see tokenizerName).
type tokenizer struct{}

func newTokenizer([]string) (fts5.Tokenizer, error) { return tokenizer{}, nil }

func (tokenizer) Tokenize(flags fts5.TokenizeFlag, text, _ string, emit fts5.TokenCallback) error {
	var err error
	scanTokens(text, flags&fts5.TOKENIZE_QUERY != 0, func(t token) bool {
		var tf fts5.TokenFlag
		if t.colocated {
			tf = fts5.TOKEN_COLOCATED
		}
		// An empty token makes the driver pass text[start:end] itself,
		// without copying.
		err = emit(tf, t.folded, t.start, t.end)
		return err == nil
	})
	return err
}

// token is one token of a text.
type token struct {
	start, end int    // its bytes in the text
	folded     string // the token, when it is not text[start:end] as it is
	// colocated marks a CJK character of a document, at the position of
	// the bigram it starts (or, the last, ends).
	colocated bool
}

// term is the token's text.
func (t token) term(text string) string {
	if t.folded != "" {
		return t.folded
	}
	return text[t.start:t.end]
}

// Classes of runes.
const (
	runeSpace = iota // separates tokens
	runeWord         // part of a word
	runeCJK          // cut into bigrams
	runeMark         // part of a word, folded away (a combining diacritic)
)

// asciiClass is the class of each ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = runeWord
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = runeWord, runeWord
	}
	return t
}()

// classOf is the class of r: letters, digits and private-use characters
// make words (unicode61's default), the diacritics remove_diacritics
// drops are part of the word they follow, and Han, kana, Hangul and
// Bopomofo letters are cut into bigrams.
func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Co, r) {
		if unicode.Is(unicode.Mn, r) && foldRune(r) < 0 {
			return runeMark
		}
		return runeSpace
	}
	if isCJK(r) {
		return runeCJK
	}
	return runeWord
}

// isCJK reports whether a letter or digit r is of a script written
// without spaces between words or with particles attached: Han, Hiragana,
// Katakana (with its prolonged sound mark, which Unicode puts in no
// script), Hangul, Bopomofo.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7A3, r >= 0x3040 && r <= 0x30FF:
		return true // the common blocks, without a table look-up
	case r == 0x30FC, r == 0xFF70, r >= 0x3031 && r <= 0x3035:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo)
}

// foldRune folds r to lower case without diacritics: as unicode61 with
// remove_diacritics 2 does (foldTable), and beyond it, the tonos and
// dialytika of Greek letters (greekFoldTable); -1 means it is dropped (a
// combining diacritic). ß (and ẞ, whose lower case it is) stays ß here:
// scanWord writes it as ss, two runes for one.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	r = unicode.ToLower(r)
	if f, ok := lookupFold(folds, r); ok {
		return f
	}
	return r
}

// folds is foldTable and greekFoldTable in one table, so that a rune is
// looked up once, as before there were two: with a second look-up for
// Greek, the look-ups took 17 % of the CPU profile of tokenizing Greek
// text, against 12 % with one.
var folds = func() [][2]uint16 {
	t := slices.Concat(foldTable[:], greekFoldTable[:])
	slices.SortFunc(t, func(a, b [2]uint16) int { return int(a[0]) - int(b[0]) })
	return t
}()

// lookupFold is what a fold table (of runes up to U+FFFF) makes of r: a
// rune, or -1 for one dropped; false if the table does not change it.
func lookupFold(table [][2]uint16, r rune) (rune, bool) {
	if r > 0xFFFF {
		return r, false
	}
	i, j := 0, len(table) // sort.Search, without a call per step
	for i < j {
		if h := int(uint(i+j) >> 1); rune(table[h][0]) < r {
			i = h + 1
		} else {
			j = h
		}
	}
	if i == len(table) || rune(table[i][0]) != r {
		return r, false
	}
	if to := table[i][1]; to != 0 {
		return rune(to), true
	}
	return -1, true
}

// sharpS is German ß, which folds to "ss": Strasse and Straße are one
// word, as Swiss German writes it and as a keyboard without ß types it.
const sharpS = 'ß'

// scanTokens calls emit for each token of text in order, until emit
// returns false. A query (query true) has no colocated tokens: a query's
// run of CJK characters is the phrase of its bigrams, or its one
// character.
func scanTokens(text string, query bool, emit func(token) bool) {
	var buf []byte
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch classOf(r) {
		case runeSpace:
			i += size
		case runeCJK:
			var ok bool
			if i, ok = scanCJK(text, i, query, emit); !ok {
				return
			}
		default:
			var t token
			t, i, buf = scanWord(text, i, buf)
			if t.end > t.start && !emit(t) {
				return
			}
		}
	}
}

// scanWord reads the word that starts at i, folding it into buf, and
// returns its token with the offset after it. A word of marks alone has
// nothing left after folding: its token is empty (end == start).
func scanWord(text string, i int, buf []byte) (token, int, []byte) {
	start, changed := i, false
	buf = buf[:0]
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf {
			if asciiClass[c] != runeWord {
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
				changed = true
			}
			buf = append(buf, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if class := classOf(r); class != runeWord && class != runeMark {
			break
		}
		f := foldRune(r)
		if f != r {
			changed = true
		}
		switch {
		case f == sharpS:
			buf, changed = append(buf, "ss"...), true
		case f >= 0:
			buf = utf8.AppendRune(buf, f)
		}
		i += size
	}
	switch {
	case !changed:
		return token{start: start, end: i}, i, buf
	case len(buf) == 0:
		return token{start: start, end: start}, i, buf
	}
	return token{start: start, end: i, folded: string(buf)}, i, buf
}

// scanCJK emits the tokens of the CJK run that starts at i and returns the
// offset after it; false if emit asked to stop.
func scanCJK(text string, i int, query bool, emit func(token) bool) (int, bool) {
	prev, n := i, 0 // the start of the last character, and how many
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if classOf(r) != runeCJK {
			break
		}
		if n > 0 {
			if !emit(token{start: prev, end: i + size}) {
				return i, false
			}
			if !query && !emit(token{start: prev, end: i, colocated: true}) {
				return i, false
			}
		}
		prev, n = i, n+1
		i += size
	}
	switch {
	case n == 1:
		return i, emit(token{start: prev, end: i})
	case !query:
		return i, emit(token{start: prev, end: i, colocated: true})
	}
	return i, true
}

// countWords counts the positions of text's tokens (a colocated token
// shares its position), the length of a row as FTS5 counts it for
// ranking.
func countWords(text []byte) int {
	n := 0
	inWord, letters, run := false, false, 0
	endWord := func() {
		if inWord && letters {
			n++ // a word of marks alone is no token (see scanWord)
		}
		inWord, letters = false, false
	}
	endRun := func() {
		n += max(run-1, min(run, 1)) // the bigrams, or the one character
		run = 0
	}
	for i := 0; i < len(text); {
		var class uint8
		if c := text[i]; c < utf8.RuneSelf {
			class = asciiClass[c]
			i++
		} else {
			r, size := utf8.DecodeRune(text[i:])
			class = classOf(r)
			i += size
		}
		switch class {
		case runeWord, runeMark:
			endRun()
			inWord = true
			letters = letters || class == runeWord
		case runeCJK:
			endWord()
			run++
		default:
			endWord()
			endRun()
		}
	}
	endWord()
	endRun()
	return n
}
