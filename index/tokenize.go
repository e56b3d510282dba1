package index

import (
	"unicode"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// The index's words come from bottled's own tokenizer, registered on each
// connection under tokenizerName (fts5.API.CreateTokenizer), and the same
// code cuts queries, finds a hit's line and counts a block's words, so
// that all of them agree.
//
// Outside the scripts written without spaces it cuts text as FTS5's
// unicode61 tokenizer with remove_diacritics 2 did: a token is a run of
// letters, digits and private-use characters, folded to lower case and
// stripped of diacritics ("Café" is "cafe"), and beyond unicode61 folded
// as fold.go says (Greek tonos, ß, compatibility forms, Turkish ı, letters
// with a stroke, ё). A combining mark (Mn, Mc, Me) is part of the
// character it follows, never a separator, so that a Devanagari or Thai
// word is one word: it is folded with that character, composed (NFC), so
// that text in NFD is searched as in NFC. Each emoji is a token of its
// own, with the emoji joined to it (👨‍💻) and without its skin tone (👍🏽
// is 👍).
//
// unicode61 makes one token of a whole run of Han, kana or Hangul, and
// those scripts put no space between words (Chinese, Japanese) or attach
// particles to them (Korean "안정적입니다" is "안정적" and "입니다"), so only a
// whole run between spaces or punctuation could be found; so do Thai, Lao,
// Khmer and Myanmar ("ฉันชอบกินข้าวผัด" is five words). Here a run of
// those characters (each with its marks: Thai "ถี" is one) is cut into
// bigrams, each pair of neighbours one token at its own position ("稳定性"
// is "稳定", "定性"): a word of n characters is the phrase of its n-1
// bigrams, found wherever it stands inside a run.
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
	runeCJK          // cut into bigrams: a script written without spaces
	runeMark         // part of the character before it (a combining mark, a joiner)
	runeEmoji        // an emoji, a token of its own
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
// make words (unicode61's default), or bigrams in the scripts written
// without spaces (isSpaceless); combining marks (Mn, Mc, Me) and what
// else continues the character before it (isJoiner) are part of it, never
// a separator; emoji (isEmoji) are tokens of their own.
func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	if isJoiner(r) {
		return runeMark
	}
	if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) {
		if isSpaceless(r) {
			return runeCJK
		}
		return runeWord
	}
	if unicode.IsMark(r) {
		return runeMark
	}
	if isEmoji(r) {
		return runeEmoji
	}
	return runeSpace
}

// isJoiner reports whether r continues the character before it though
// Unicode does not call it a mark: the vowels and final consonants of
// Korean in conjoining jamo (NFD), the half-width kana voicing marks, ZWNJ
// and ZWJ, emoji skin tones and tag characters.
func isJoiner(r rune) bool {
	switch {
	case r < 0x1160:
		return false
	case r <= 0x11FF, r >= 0xD7B0 && r <= 0xD7FF, r == 0xFF9E, r == 0xFF9F, r == 0x200C, r == 0x200D:
		return true
	}
	return r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F
}

// zwj joins emoji into one (👨‍💻).
const zwj = 0x200D

// isSpaceless reports whether a letter or digit r is of a script written
// without spaces between words or with particles attached: Han, Hiragana,
// Katakana (with its prolonged sound mark, which Unicode puts in no
// script), Hangul, Bopomofo; Thai, Lao, Khmer, Myanmar.
func isSpaceless(r rune) bool {
	switch {
	case r < 0x0E00:
		return false
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7A3, r >= 0x3040 && r <= 0x30FF:
		return true // the common blocks, without a table look-up
	case r <= 0x0EFF, r >= 0x1000 && r <= 0x109F, r >= 0x1780 && r <= 0x17FF:
		return true // Thai, Lao, Myanmar, Khmer
	case r == 0x30FC, r == 0xFF70, r >= 0x3031 && r <= 0x3035:
		return true
	case r < 0x1100:
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo,
		unicode.Myanmar, unicode.Khmer)
}

// isEmoji reports whether r, a symbol, is an emoji: of the blocks of
// pictographs, dingbats and miscellaneous symbols.
func isEmoji(r rune) bool {
	return (r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r >= 0x2B00 && r <= 0x2BFF ||
		r >= 0x2300 && r <= 0x23FF) && unicode.Is(unicode.So, r)
}

// isRegional reports whether r is a regional indicator, two of which are
// a flag.
func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

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
			if i, buf, ok = scanCJK(text, i, query, buf, emit); !ok {
				return
			}
		case runeEmoji:
			var t token
			t, i, buf = scanEmoji(text, i, buf)
			if !emit(t) {
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

// marksEnd is the offset after the marks that start at i.
func marksEnd(text string, i int) int {
	for i < len(text) && text[i] >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(text[i:])
		if classOf(r) != runeMark {
			break
		}
		i += size
	}
	return i
}

// scanWord reads the word that starts at i, folding it into buf, and
// returns its token with the offset after it. A word of marks that all
// fold away has nothing left: its token is empty (end == start).
func scanWord(text string, i int, buf []byte) (token, int, []byte) {
	start, changed := i, false
	buf = buf[:0]
	base, baseAt := 0, 0 // where the last non-ASCII character starts, in text and buf
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
		class := classOf(r)
		if class == runeMark && i > start {
			// The marks after a character are folded with it (one byte,
			// if it is ASCII).
			if text[i-1] < utf8.RuneSelf {
				base, baseAt = i-1, len(buf)-1
			}
			end := marksEnd(text, i)
			buf = fold.appendFoldUnit(buf[:baseAt], text[base:end])
			i, changed = end, changed || string(buf[baseAt:]) != text[base:end]
			continue
		}
		if class != runeWord && class != runeMark {
			break
		}
		base, baseAt = i, len(buf)
		var folded bool
		buf, folded = fold.appendFolded(buf, r)
		i += size
		changed = changed || folded
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
// offset after it; false if emit asked to stop. Each character of the run
// is one with its marks (a Thai consonant with its vowel and tone marks).
func scanCJK(text string, i int, query bool, buf []byte, emit func(token) bool) (int, []byte, bool) {
	var prev struct {
		start, end int
		folded     string // "" if it is text[start:end]
	}
	n := 0 // the characters so far
	// The character at i, its base rune ending at end; then the rune after
	// it, r of class, ending at next.
	r, end, class := classAt(text, i)
	for class == runeCJK {
		base, baseEnd := r, end
		var next int
		r, next, class = classAt(text, end)
		for class == runeMark {
			end = next
			r, next, class = classAt(text, end)
		}
		folded := ""
		if end > baseEnd || !unfolded(base) {
			buf = fold.appendFoldUnit(buf[:0], text[i:end])
			if string(buf) != text[i:end] {
				folded = string(buf)
			}
		}
		if n > 0 {
			bigram := token{start: prev.start, end: end}
			if prev.folded != "" || folded != "" {
				bigram.folded = or(prev.folded, text[prev.start:prev.end]) + or(folded, text[i:end])
			}
			if !emit(bigram) {
				return i, buf, false
			}
			if !query && !emit(token{start: prev.start, end: prev.end, folded: prev.folded, colocated: true}) {
				return i, buf, false
			}
		}
		prev.start, prev.end, prev.folded = i, end, folded
		n++
		i, end = end, next
	}
	last := token{start: prev.start, end: prev.end, folded: prev.folded}
	switch {
	case n == 1:
		return i, buf, emit(last)
	case !query:
		last.colocated = true
		return i, buf, emit(last)
	}
	return i, buf, true
}

// classAt is the rune at i in text, the offset after it and its class;
// runeSpace at the end of text.
func classAt(text string, i int) (rune, int, uint8) {
	if i >= len(text) {
		return 0, i, runeSpace
	}
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), i + 1, asciiClass[c]
	}
	r, size := utf8.DecodeRuneInString(text[i:])
	return r, i + size, classOf(r)
}

// or is s, or else if s is empty.
func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// scanEmoji reads the emoji that starts at i, with its modifiers, the
// emoji joined to it (ZWJ) and, for a regional indicator, the second of
// its flag, and returns its token (without variation selectors and skin
// tones, so that 👍 finds 👍🏽) with the offset after it.
func scanEmoji(text string, i int, buf []byte) (token, int, []byte) {
	start := i
	end := emojiEnd(text, i)
	buf = buf[:0]
	for _, r := range text[start:end] {
		if r == zwj {
			buf = utf8.AppendRune(buf, r)
		} else {
			buf = fold.appendFold(buf, r)
		}
	}
	t := token{start: start, end: end}
	if string(buf) != text[start:end] {
		t.folded = string(buf)
	}
	return t, end, buf
}

// emojiEnd is the offset after the emoji that starts at i (see scanEmoji).
func emojiEnd(text string, i int) int {
	first, size := utf8.DecodeRuneInString(text[i:])
	i += size
	if r, size := utf8.DecodeRuneInString(text[i:]); isRegional(first) && isRegional(r) {
		i += size
	}
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case classOf(r) != runeMark:
			return i
		case r == zwj:
			if next, n := utf8.DecodeRuneInString(text[i+size:]); classOf(next) == runeEmoji {
				size += n
			}
		}
		i += size
	}
	return i
}

// countWords counts the positions of text's tokens (a colocated token
// shares its position), the length of a row as FTS5 counts it for
// ranking.
func countWords(text []byte) int {
	var c wordCounter
	for i := 0; i < len(text); {
		if b := text[i]; b < utf8.RuneSelf {
			i++
			if asciiClass[b] == runeWord {
				c.word()
			} else {
				c.space()
			}
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		i += size
		c.add(r, classOf(r))
	}
	c.space()
	return c.n
}

// wordCounter counts the positions of tokens as scanTokens cuts them.
type wordCounter struct {
	n            int
	in           uint8 // the class of what the last character is part of
	letters      bool  // the word so far folds to something
	run          int   // the CJK characters so far
	joined, flag bool  // an emoji joined to the next; half a flag
}

// end ends the word or run before.
func (c *wordCounter) end() {
	if c.in == runeWord && c.letters {
		c.n++ // a word of marks that fold away is no token (see scanWord)
	}
	c.n += max(c.run-1, min(c.run, 1)) // the bigrams, or the one character
	c.letters, c.run = false, 0
}

func (c *wordCounter) word() {
	if c.in != runeWord {
		c.end()
		c.in = runeWord
	}
	c.letters = true
}

func (c *wordCounter) space() {
	if c.in != runeSpace {
		c.end()
		c.in = runeSpace
	}
}

// add counts r, of class.
func (c *wordCounter) add(r rune, class uint8) {
	switch class {
	case runeWord:
		c.word()
	case runeSpace:
		c.space()
	case runeCJK:
		if c.in != runeCJK {
			c.end()
			c.in = runeCJK
		}
		c.run++
	case runeMark:
		switch c.in {
		case runeSpace:
			c.in, c.letters = runeWord, kept(r)
		case runeWord:
			c.letters = c.letters || kept(r)
		case runeEmoji:
			c.joined, c.flag = r == zwj, false
		}
	case runeEmoji:
		if c.in == runeEmoji && (c.joined || c.flag && isRegional(r)) {
			c.joined, c.flag = false, false
			return
		}
		c.end()
		c.in, c.n = runeEmoji, c.n+1
		c.joined, c.flag = false, isRegional(r)
	}
}

// kept reports whether a mark r is left by the fold.
func kept(r rune) bool { return len(fold.appendFold(nil, r)) > 0 }
