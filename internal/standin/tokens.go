package standin

import (
	"unicode/utf8"
)

// CountTokens answers a count_tokens request: an approximation of the
// API's tokenizer over the request's messages and system prompt. Claude
// Code's Read tool asks it whether a file's contents fit its 25,000-token
// cap, so the tests that read bottles through the real Read tool depend on
// it being close to the real tokenizer rather than on it agreeing with
// bottled's own estimate. The rules follow how BPE tokenizers split text:
// a word of ASCII letters is about one token per four letters (a leading
// space joins the word), a run of digits one per three, each other ASCII
// symbol one token, a line break one, a run of two or more spaces one,
// and each non-ASCII character one token, two outside the Basic
// Multilingual Plane (emoji).
func CountTokens(r *Request) int {
	n := Tokens(r.System)
	for _, m := range r.Messages {
		n += 4 // role and framing
		for _, b := range m.Blocks {
			n += Tokens(b.Text) + 2
		}
	}
	return n
}

// Tokens is the token estimate of one text, by the rules of CountTokens.
func Tokens(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			n++
			if r > 0xFFFF {
				n++
			}
			i += size
		case isLetter(c):
			j := i
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			n += (j - i + 3) / 4
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case c == ' ' || c == '\t':
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j-i > 1 {
				n++
			}
			i = j
		default: // line breaks and ASCII symbols
			n++
			i++
		}
	}
	return n
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
