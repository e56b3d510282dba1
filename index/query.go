package index

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

// snippetRunes bounds a hit's snippet.
const (
	snippetRunes  = 160
	snippetBefore = 50 // runes of context kept before the first match
)

// locate returns the byte offset in text of the first match of a phrase
// of the query: where a phrase starts, or, if no phrase is found whole
// (FTS5 and this may disagree on text it matched), the first token of a
// phrase; -1 if neither.
func locate(text []byte, ps []phrase) int {
	s := string(text)
	type tok struct {
		term  string
		start int
	}
	var at [][]tok // the tokens at each position: one, or two in a CJK run's last
	scanTokens(s, false, func(t token) bool {
		if !t.colocated || len(at) == 0 {
			at = append(at, nil)
		}
		at[len(at)-1] = append(at[len(at)-1], tok{t.term(s), t.start})
		return true
	})
	holds := func(pos int, want string) bool {
		return slices.ContainsFunc(at[pos], func(t tok) bool { return t.term == want })
	}
	matches := func(p phrase, pos int) bool {
		if pos+len(p.tokens) > len(at) {
			return false
		}
		for k, want := range p.tokens {
			if !holds(pos+k, want) {
				return false
			}
		}
		return true
	}
	for pos := range at {
		for _, p := range ps {
			if matches(p, pos) {
				return at[pos][0].start
			}
		}
	}
	for pos := range at {
		for _, p := range ps {
			if holds(pos, p.tokens[0]) {
				return at[pos][0].start
			}
		}
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
