package redact

import (
	"strconv"
	"strings"
)

// A token may reach a bottle escaped: a markdown backslash escape of its
// punctuation (ghp\_…, sk\-ant-…, written so that a markdown renderer
// does not take _ for emphasis) or an HTML character reference (ghp&#95;…,
// &lowbar;). The web view's markdown renderer decodes both, and shows the
// token live; the model reading the bottle reads through them. So the
// token formats are looked for again in the words that hold one, with
// these decoded, and what they find there is replaced in the string as
// it is, escapes and all. (A private key block, whose lines are words of
// their own, is not found escaped.)

// escapable is what a token's escapes decode to: the punctuation of the
// token formats' alphabets (and, for a numeric reference, letters and
// digits).
var escapable = chars("_-.+/=~")

// namedRefs are the HTML character references of that punctuation.
var namedRefs = []struct {
	ref string
	c   byte
}{{"&lowbar;", '_'}, {"&UnderBar;", '_'}, {"&period;", '.'}, {"&plus;", '+'}, {"&sol;", '/'}, {"&equals;", '='}}

// findEscaped appends to out the tokens that s holds escaped: each word
// of s (a run of bytes but whitespace, as a token is) that holds an
// escape is looked at again with its escapes decoded, and what a token
// format finds there is mapped back onto s. A string without an escape
// costs two IndexByte scans and no allocation.
func findEscaped(s string, out []found) []found {
	es := escapes{s: s, slash: strings.IndexByte(s, '\\'), amp: strings.IndexByte(s, '&')}
	for end, i := 0, es.next(0); i >= 0; i = es.next(end) {
		start := end + strings.LastIndexAny(s[end:i], " \t\r\n") + 1
		end = len(s)
		if e := strings.IndexAny(s[i:], " \t\r\n"); e >= 0 {
			end = i + e
		}
		view, offs := decoded(s[start:end])
		for _, f := range findKeywords(view, nil) {
			if f.rank == format {
				f.Start, f.End = start+offs[f.Start], start+offs[f.End]
				out = append(out, f)
			}
		}
	}
	return out
}

// decoded returns w with the escapes of token characters decoded, and
// for each byte of it the offset in w of what it was decoded from
// (len(w) for its end).
func decoded(w string) (string, []int) {
	var b strings.Builder
	b.Grow(len(w))
	offs := make([]int, 0, len(w)+1)
	for i := 0; i < len(w); {
		c, n := escapeAt(w, i)
		if n == 0 {
			c, n = w[i], 1
			if w[i] == '\\' && i+1 < len(w) && w[i+1] == '\\' {
				b.WriteByte('\\') // an escaped backslash escapes nothing after it
				offs = append(offs, i)
				i++
			}
		}
		b.WriteByte(c)
		offs = append(offs, i)
		i += n
	}
	return b.String(), append(offs, len(w))
}

// escapes finds the escapes of token characters in s, in order: the
// two bytes that start one are looked for with IndexByte, which is fast,
// each from where it was last seen, so that s is read once.
type escapes struct {
	s          string
	slash, amp int // the next \ and & not yet passed, -1 when none is left
}

// next returns where the first escape at or after from starts, or -1.
func (e *escapes) next(from int) int {
	for {
		e.slash, e.amp = e.after(e.slash, '\\', from), e.after(e.amp, '&', from)
		i := e.slash
		if i < 0 || e.amp >= 0 && e.amp < i {
			i = e.amp
		}
		if i < 0 {
			return -1
		}
		if _, n := escapeAt(e.s, i); n > 0 {
			return i
		}
		from = i + 1
		if e.s[i] == '\\' && i+1 < len(e.s) && e.s[i+1] == '\\' {
			from++ // an escaped backslash escapes nothing after it
		}
	}
}

// after returns seen, the last position of c found, if it is at or
// after from, else the next c from there on.
func (e *escapes) after(seen int, c byte, from int) int {
	if seen < 0 || seen >= from {
		return seen
	}
	if j := strings.IndexByte(e.s[from:], c); j >= 0 {
		return from + j
	}
	return -1
}

// escapeAt decodes the escape of a token character that starts at i:
// the character and the escape's length, or 0 if none starts there.
func escapeAt(s string, i int) (byte, int) {
	switch {
	case s[i] == '\\' && i+1 < len(s) && escapable[s[i+1]]:
		return s[i+1], 2
	case s[i] != '&' || i+2 >= len(s):
		return 0, 0
	case s[i+1] != '#':
		for _, r := range namedRefs {
			if strings.HasPrefix(s[i:], r.ref) {
				return r.c, len(r.ref)
			}
		}
		return 0, 0
	}
	j, base := i+2, 10
	if s[j] == 'x' || s[j] == 'X' {
		j, base = j+1, 16
	}
	e := run(s, j, hexChars)
	if e == j || e-j > 7 || e == len(s) || s[e] != ';' {
		return 0, 0
	}
	n, err := strconv.ParseUint(s[j:e], base, 8)
	if err != nil || n >= 0x80 || !alnum[n] && !escapable[n] {
		return 0, 0
	}
	return byte(n), e + 1 - i
}
