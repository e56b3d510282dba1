package index

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/textcut"
)

// Queries are words and "quoted phrases". The text is never handed to
// FTS5's query syntax: it is cut into tokens here, as the index's
// tokenizer cuts documents (see tokenizerName), and every phrase is
// written out as an FTS5 string, so that quotes, *, NEAR, OR, AND, NOT,
// parentheses, column filters and anything else in the input are searched
// for as the words they contain, or dropped if they contain none.

// maxTerms bounds the tokens of one query; more would only slow it down.
const maxTerms = 16

// phrase is a run of tokens that must appear in this order; a single
// word is a phrase of one token, a word of Chinese, Japanese or Korean
// the phrase of its bigrams.
type phrase struct {
	tokens []string
}

// parseQuery cuts a query into phrases: each "quoted" part is one phrase
// (an unbalanced quote runs to the end), every other word its own, and
// so is every run of CJK characters.
func parseQuery(s string) []phrase {
	var out []phrase
	n := 0
	add := func(p phrase) {
		if len(p.tokens) == 0 || n >= maxTerms {
			return
		}
		if n+len(p.tokens) > maxTerms {
			p = phrase{tokens: p.tokens[:maxTerms-n]}
		}
		n += len(p.tokens)
		out = append(out, p)
	}
	for i, part := range strings.Split(s, `"`) {
		if i%2 == 1 {
			var p phrase
			scanTokens(part, true, func(t token) bool {
				p.tokens = append(p.tokens, t.term(part))
				return true
			})
			add(p)
			continue
		}
		var p phrase
		end := 0
		scanTokens(part, true, func(t token) bool {
			// The bigrams of one run overlap: they are one word.
			if t.start >= end {
				add(p)
				p = phrase{}
			}
			p.tokens = append(p.tokens, t.term(part))
			end = t.end
			return true
		})
		add(p)
	}
	return out
}

// tokens cuts s into the tokens a query would search for.
func tokens(s string) []string {
	var out []string
	scanTokens(s, true, func(t token) bool {
		out = append(out, t.term(s))
		return true
	})
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
		b.WriteString(p.expr())
	}
	return b.String()
}

// expr is the phrase as an FTS5 string.
func (p phrase) expr() string {
	return `"` + strings.ReplaceAll(strings.Join(p.tokens, " "), `"`, `""`) + `"`
}

// snippetLength bounds a hit's snippet, in characters (grapheme clusters).
const (
	snippetLength = 160
	snippetBefore = 50 // characters of context kept before the first match
	// clusterBytes bounds how many bytes a snippet's character is
	// looked for in (a family emoji takes 25): a block can be megabytes.
	clusterBytes = 64
)

// locate returns the bytes of text of the first match of a phrase of the
// query: where a phrase is, or, if no phrase is found whole (FTS5 and
// this may disagree on text it matched), the first token of a phrase;
// -1, -1 if neither.
func locate(text []byte, ps []phrase) (start, end int) {
	s := string(text)
	type tok struct {
		term       string
		start, end int
	}
	var at [][]tok // the tokens at each position: one, or two in a CJK run's last
	scanTokens(s, false, func(t token) bool {
		if !t.colocated || len(at) == 0 {
			at = append(at, nil)
		}
		at[len(at)-1] = append(at[len(at)-1], tok{t.term(s), t.start, t.end})
		return true
	})
	// find is the end of the token at pos that is want, -1 if none is.
	find := func(pos int, want string) int {
		if i := slices.IndexFunc(at[pos], func(t tok) bool { return t.term == want }); i >= 0 {
			return at[pos][i].end
		}
		return -1
	}
	matches := func(p phrase, pos int) int {
		if pos+len(p.tokens) > len(at) {
			return -1
		}
		end := -1
		for k, want := range p.tokens {
			if end = find(pos+k, want); end < 0 {
				return -1
			}
		}
		return end
	}
	for pos := range at {
		for _, p := range ps {
			if end := matches(p, pos); end >= 0 {
				return at[pos][0].start, end
			}
		}
	}
	for pos := range at {
		for _, p := range ps {
			if end := find(pos, p.tokens[0]); end >= 0 {
				return at[pos][0].start, end
			}
		}
	}
	return -1, -1
}

// snippet is the part of text around its match text[at:end], on one
// line: from the start of its line or snippetBefore characters before
// it, whichever is later, to at most snippetLength characters; and the
// bytes of the snippet the match is (empty when at is -1, or the match
// is cut off).
func snippet(text []byte, at, end int) (string, [2]int) {
	if at < 0 {
		at, end = 0, 0
	}
	look := max(bytes.LastIndexByte(text[:at], '\n')+1, at-snippetBefore*clusterBytes)
	for look < at && !utf8.RuneStart(text[look]) {
		look++
	}
	from := at - len(textcut.Tail(string(text[look:at]), snippetBefore, textcut.Graphemes))
	ahead := text[from:min(len(text), from+2*snippetLength*clusterBytes)]
	to := from + len(textcut.Head(string(ahead), 2*snippetLength, textcut.Graphemes))
	s, match := oneLine(text[from:to], [2]int{at - from, end - from})
	if c := textcut.Clip(s, snippetLength, textcut.Graphemes); c != s {
		s = c
		kept := len(s) - len(textcut.Ellipsis)
		match = [2]int{min(match[0], kept), min(match[1], kept)}
	} else if to < len(text) {
		s += " " + textcut.Ellipsis
	}
	if from > 0 && text[from-1] != '\n' {
		s = textcut.Ellipsis + s
		match = [2]int{match[0] + len(textcut.Ellipsis), match[1] + len(textcut.Ellipsis)}
	}
	return s, match
}

// oneLine is text with each run of white space one space and none at its
// ends (as strings.Fields joined with spaces), and where the bytes
// mark[0]:mark[1] of text (a match: no space at its start) are in it.
func oneLine(text []byte, mark [2]int) (string, [2]int) {
	var b strings.Builder
	var at [2]int
	space := false // white space not yet written
	for i := 0; ; {
		if i == mark[0] {
			at[0] = b.Len()
			if space && b.Len() > 0 {
				at[0]++
			}
		}
		if i == mark[1] {
			at[1] = b.Len()
		}
		if i >= len(text) {
			break
		}
		r, size := utf8.DecodeRune(text[i:])
		switch {
		case unicode.IsSpace(r):
			space = true
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.Write(text[i : i+size])
		}
		i += size
	}
	at[0] = min(at[0], b.Len())
	at[1] = min(max(at[1], at[0]), b.Len())
	return b.String(), at
}
