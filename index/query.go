package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Queries are words and "quoted phrases". The text is never handed to
// FTS5's query syntax: it is cut into tokens here, each made of letters and
// digits only (what FTS5's unicode61 tokenizer keeps), and every phrase is
// written out as an FTS5 string, so that quotes, *, NEAR, OR, AND, NOT,
// parentheses, column filters and anything else in the input are searched
// for as the words they contain, or dropped if they contain none.

// maxTerms bounds the tokens of one query; more would only slow it down.
const maxTerms = 16

// phrase is a run of tokens that must appear in this order; a single
// word is a phrase of one token.
type phrase []string

// parseQuery cuts a query into phrases: each "quoted" part is one phrase
// (an unbalanced quote runs to the end), every other word its own.
func parseQuery(s string) []phrase {
	var out []phrase
	n := 0
	add := func(p phrase) {
		if len(p) == 0 || n >= maxTerms {
			return
		}
		if n+len(p) > maxTerms {
			p = p[:maxTerms-n]
		}
		n += len(p)
		out = append(out, p)
	}
	for i, part := range strings.Split(s, `"`) {
		toks := tokens(part)
		if i%2 == 1 {
			add(toks)
			continue
		}
		for _, t := range toks {
			add(phrase{t})
		}
	}
	return out
}

// isTokenRune is unicode61's default token character: a letter, a digit
// or a private-use character; everything else separates tokens.
func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// tokens lowercases s and cuts it into tokens.
func tokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if isTokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// matchExpr writes phrases as an FTS5 query: each phrase one FTS5 string,
// all of them required. The tokens hold no quote, but quotes are doubled
// all the same, as FTS5 strings escape them.
func matchExpr(ps []phrase) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(strings.Join(p, " "), `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// snippetRunes bounds a hit's snippet.
const (
	snippetRunes  = 160
	snippetBefore = 50 // runes of context kept before the first match
)

// locate finds the first token of text equal to a token of the query and
// returns its byte offset, or -1.
func locate(text []byte, ps []phrase) int {
	want := map[string]bool{}
	for _, p := range ps {
		for _, t := range p {
			want[t] = true
		}
	}
	start := -1
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if isTokenRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			if want[strings.ToLower(string(text[start:i]))] {
				return start
			}
			start = -1
		}
		i += size
	}
	if start >= 0 && want[strings.ToLower(string(text[start:]))] {
		return start
	}
	return -1
}

// snippet is the part of text around offset at, on one line: from the
// start of its line or snippetBefore runes before it, whichever is later,
// to at most snippetRunes runes.
func snippet(text []byte, at int) string {
	if at < 0 {
		at = 0
	}
	from := at
	for n := 0; from > 0 && n < snippetBefore; n++ {
		_, size := utf8.DecodeLastRune(text[:from])
		if text[from-size] == '\n' {
			break
		}
		from -= size
	}
	to := from
	for n := 0; to < len(text) && n < snippetRunes*2; n++ {
		_, size := utf8.DecodeRune(text[to:])
		to += size
	}
	s := strings.Join(strings.Fields(string(text[from:to])), " ")
	if utf8.RuneCountInString(s) > snippetRunes {
		s = string([]rune(s)[:snippetRunes-1])
		s = strings.TrimRightFunc(s, unicode.IsSpace) + "…"
	} else if to < len(text) {
		s += " …"
	}
	if from > 0 && text[from-1] != '\n' {
		s = "…" + s
	}
	return s
}

// asciiToken marks the ASCII bytes isTokenRune accepts: a rebuild counts
// the words of every block, and most of them are ASCII.
var asciiToken = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isTokenRune(rune(c))
	}
	return t
}()

// countWords counts the tokens of text as isTokenRune cuts them.
func countWords(text []byte) int {
	n, in := 0, false
	for i := 0; i < len(text); {
		var token bool
		if c := text[i]; c < utf8.RuneSelf {
			token = asciiToken[c]
			i++
		} else {
			r, size := utf8.DecodeRune(text[i:])
			token = isTokenRune(r)
			i += size
		}
		if token && !in {
			n++
		}
		in = token
	}
	return n
}
