package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A quote is an opening quote and the quotes that close it.
type quote struct{ open, close, alt string }

// The quotes a value may stand in: ASCII ones, escaped ones (JSON shown
// inside a string), and the typographic ones that editors, chat clients
// and other languages' keyboards put in their place.
var (
	asciiQuotes   = [...]quote{{`"`, `"`, ""}, {"'", "'", ""}, {"`", "`", ""}}
	escapedQuotes = [...]quote{{`\"`, `\"`, ""}, {`\'`, `\'`, ""}}
	typoQuotes    = [...]quote{
		{"“", "”", "“"}, // English, and “…“ as some keyboards make it
		{"”", "”", ""},  // Swedish, Finnish
		{"„", "“", "”"}, // German, Polish
		{"‘", "’", "‘"}, {"’", "’", ""}, {"‚", "‘", "’"},
		{"«", "»", ""}, {"»", "«", "»"}, {"‹", "›", ""}, {"›", "‹", ""},
		{"「", "」", ""}, {"『", "』", ""}, {"＂", "＂", ""}, {"＇", "＇", ""},
	}
)

// quoteAt returns the quote that opens at i, and its length; 0 if none
// does.
func quoteAt(s string, i int) (int, quote) {
	if i >= len(s) {
		return 0, quote{}
	}
	switch c := s[i]; {
	case c == '"' || c == '\'' || c == '`':
		return 1, asciiQuotes[strings.IndexByte("\"'`", c)]
	case c == '\\':
		if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
			return 2, escapedQuotes[strings.IndexByte("\"'", s[i+1])]
		}
	case c >= 0x80:
		for _, q := range typoQuotes {
			if strings.HasPrefix(s[i:], q.open) {
				return len(q.open), q
			}
		}
	}
	return 0, quote{}
}

// closeQuote returns where the quote q that opened before s closes in s,
// and the length of its closing quote; -1 if it does not.
// In a double-quoted string a backslash escapes the quote after it (as in
// a shell, JSON or most languages: "Xk9\"vL8" is one string).
func closeQuote(s string, q quote) (int, int) {
	e := strings.Index(s, q.close)
	if q.open == `"` {
		e = unescapedQuote(s)
	}
	if q.alt != "" {
		if a := strings.Index(s, q.alt); a >= 0 && (e < 0 || a < e) {
			return a, len(q.alt)
		}
	}
	return e, len(q.close)
}

func skipQuote(s string, i int) int { return i + quoteLen(s, i) }

// quoteLen is the length of the quote that opens at i, 0 if none does:
// quoteAt's length, without the quote.
func quoteLen(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	switch c := s[i]; {
	case c == '"' || c == '\'' || c == '`':
		return 1
	case c == '\\':
		if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
			return 2
		}
	case c >= 0x80:
		n, _ := quoteAt(s, i)
		return n
	}
	return 0
}

// skipEmphasis skips the ** or __ that closes a markdown label
// ("**Password:** x").
func skipEmphasis(s string, i int) int {
	for n := 0; n < 3 && i < len(s) && (s[i] == '*' || s[i] == '_'); n++ {
		i++
	}
	return i
}

func skipBlanks(s string, i, n int) int {
	for ; n > 0 && i < len(s) && (s[i] == ' ' || s[i] == '\t'); n-- {
		i++
	}
	return i
}

// value returns the span of the value of the key s[l:r] that starts at
// p: inside its quotes if it is quoted (a quoted value with whitespace in
// it is text, not a secret), else up to where valueEnd ends it, inside
// the brackets that wrap it whole ((x), [x]). head is where its head
// ends, the run of the bytes a token is made of (TOKEN=x in
// TOKEN=x;rest): a value judged no secret whole may be one by its head,
// and a value too long to be one is cut there.
func value(s string, l, p int) (start, end, head int, ok bool) {
	if quoteLen(s, p) > 0 {
		n, q := quoteAt(s, p)
		start = p + n
		e, _ := closeQuote(s[start:min(len(s), start+maxQuoted+n)], q)
		if e >= 0 {
			v := s[start : start+e]
			if strings.ContainsAny(v, " \t\r\n") {
				return 0, 0, 0, false
			}
			return start, start + e, start + e, e > 0
		}
		if quoteLen(s, start) > 0 {
			return 0, 0, 0, false // an unclosed quote before another: text
		}
		p = start
	}
	if assignmentAt(s, p) {
		return 0, 0, 0, false // KEY=x, itself an assignment, is judged from its own key
	}
	end = valueEnd(s, p, stopsFor(s, l, p))
	if q := skipBlanks(s, end, 4); q > end && q < len(s) && (s[q] == '=' || s[q] == ':') {
		if k := secretKeyBefore(s, p, end); k > p {
			end = k // x`api_key = y: the value ends where the next key starts
		}
	}
	for end > p && end-p <= maxValue && strings.IndexByte(".,;:", s[end-1]) >= 0 {
		end-- // the punctuation of the sentence or list it ends
	}
	if end-p >= 2 && end-p <= maxValue && (s[p] == '(' && s[end-1] == ')' || s[p] == '[' && s[end-1] == ']') {
		p, end = p+1, end-1
	}
	head = runMax(s[:end], p, valueHead, maxValue+1)
	for pad := 0; pad < 2 && head < end && s[head] == '='; pad++ {
		head++
	}
	for head > p && s[head-1] == '.' {
		head--
	}
	if end-p > maxValue {
		end = head
	}
	return p, end, head, end > p && end-p <= maxValue
}

// valueHead makes up the head of an unquoted value: what a token or a
// password is made of but the separators of the text around it (& ; , :
// | \ quotes and brackets, and = but as base64's padding at its end).
var valueHead = chars(alnumChars, "_.+/~!@#$%^*-?")

// judgeValue tells whether the value s[start:end] of a key of kind is a
// secret, and of which kind: judged whole by judge, or by its head
// (s[start:head], a secret glued to the text after it), in which case
// the whole still goes, so that no part of it shows.
func judgeValue(judge func(kind, v string) bool, kind, s string, start, end, head int) (string, bool) {
	if k, ok := judgeKind(judge, kind, s[start:end]); ok {
		return k, true
	}
	if start < head && head < end {
		return judgeKind(judge, kind, s[start:head])
	}
	return "", false
}

// judgeKind tells whether v is a secret of kind, or, given to a key
// that names an AWS secret key but not of its shape, a secret.
func judgeKind(judge func(kind, v string) bool, kind, v string) (string, bool) {
	switch {
	case judge(kind, v):
		return kind, true
	case kind == "AWS secret access key" && judge("secret", v):
		return "secret", true
	}
	return "", false
}

// valueStops is what ends an unquoted value besides whitespace.
type valueStops struct {
	key     int       // where the key starts
	closers closerSet // what closes the quotes, brackets or tag open before the key
	known   bool      // closers has been read
	query   bool      // the key is a URL query's: & and # end its value
}

// A closerSet is a set of the bytes of closerBytes.
type closerSet uint8

const closerBytes = "\"'`)]}*<"

func (c closerSet) has(b byte) bool {
	k := strings.IndexByte(closerBytes, b)
	return k >= 0 && c&(1<<k) != 0
}

func (c *closerSet) add(b byte) { *c |= 1 << strings.IndexByte(closerBytes, b) }

// stopsFor finds what ends the value at p of the key that starts at l:
// the </ of <key>value</key>, the & of a query, the quotes or brackets
// that the key stands in (f(password=x), 'PASSWORD=x', "env": ["K=x"]),
// found only when the value holds such a quote or bracket.
func stopsFor(s string, l, p int) valueStops {
	if l > 0 && s[l-1] == '<' && s[p-1] == '>' {
		var c closerSet
		c.add('<')
		return valueStops{key: l, closers: c, known: true}
	}
	return valueStops{key: l, query: l > 0 && (s[l-1] == '?' || s[l-1] == '&')}
}

// closes reports whether c closes what the key stands in.
func (st *valueStops) closes(s string, c byte) bool {
	if !st.known {
		st.closers, st.known = enclosing(s, st.key), true
	}
	return st.closers.has(c)
}

// maxEnclosing is how far back before a key its enclosing quotes and
// brackets are looked for, on its line.
const maxEnclosing = 256

// enclosing returns what closes the quotes and brackets open at l on its
// line: brackets not closed before l, and quotes that l is after an odd
// number of (an apostrophe between letters, as in "don't", is none);
// markdown emphasis right before the key closes with *.
func enclosing(s string, l int) closerSet {
	var set closerSet
	if l > 0 && s[l-1] == '*' {
		set.add('*')
	}
	lo := max(0, l-maxEnclosing)
	if nl := strings.LastIndexByte(s[lo:l], '\n'); nl >= 0 {
		lo += nl + 1
	}
	const brackets, closers, quotes = "([{", ")]}", "\"'`"
	var depth, count [3]int
	for i := l - 1; i >= lo; i-- {
		c := s[i]
		if k := strings.IndexByte(closers, c); k >= 0 {
			depth[k]++
		} else if k := strings.IndexByte(brackets, c); k >= 0 {
			if depth[k] > 0 {
				depth[k]--
			} else {
				set.add(closers[k])
			}
		} else if k := strings.IndexByte(quotes, c); k >= 0 && !(c == '\'' && apostrophe(s, i)) {
			count[k]++
		}
	}
	for k := range quotes {
		if count[k]%2 == 1 {
			set.add(quotes[k])
		}
	}
	return set
}

// apostrophe reports whether the ' at i stands between letters (don't,
// it's), not as a quote.
func apostrophe(s string, i int) bool {
	return i > 0 && i+1 < len(s) && alpha[s[i-1]] && alpha[s[i+1]]
}

// unescapedQuote is the index of the first " in s that no backslash
// escapes, -1 if none.
func unescapedQuote(s string) int {
	for i := strings.IndexByte(s, '"'); i >= 0; {
		backslashes := 0
		for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
		next := strings.IndexByte(s[i+1:], '"')
		if next < 0 {
			return -1
		}
		i += 1 + next
	}
	return -1
}

// valueEnd returns where an unquoted value that starts at p ends: at
// whitespace, a control character or non-ASCII punctuation (a closing
// “, a fullwidth comma), an escape sequence shown as text (\n, \"),
// what stops says, or a separator (& ; ,) before the next key=value of a
// query or connection string. Anything else, the symbols a password
// holds, is part of it. The result is past maxValue if the value is.
func valueEnd(s string, p int, stops valueStops) int {
	limit := min(len(s), p+maxValue+1)
	for i := p; i < limit; i++ {
		if i = run(s[:limit], i, plainValue); i == limit {
			break
		}
		switch c := s[i]; {
		case c <= ' ' || c == 0x7f:
			return i
		case c >= 0x80:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.Is(unicode.Sm, r) {
				return i // (＝ is a math symbol)
			}
			i += n - 1
		case c == '=' || c == ':':
			if k := secretKeyBefore(s, p, i); k > p {
				return k
			}
		case strings.IndexByte(closerBytes, c) >= 0 && stops.closes(s, c):
			return i
		case c == '<':
			if i+1 < len(s) && (s[i+1] == '/' || alpha[s[i+1]]) {
				return i // a tag: <password>x</password>, x<br>
			}
		case c == '\\':
			if i+1 < len(s) && strings.IndexByte(`nrt"'\`, s[i+1]) >= 0 {
				return i
			}
		case c == '&' || c == '#':
			if stops.query || c == '&' && assignmentAt(s, i+1) {
				return i
			}
		case c == ';' || c == ',':
			if assignmentAt(s, i+1) {
				return i
			}
		}
	}
	return limit
}

// secretKeyBefore returns where the key of an assignment starts when the
// = or : at i, inside the value that starts at p, ends a key that holds
// a secret word (x!password=y): another assignment, read from its own
// key. Ending the value there keeps the work linear in the string: no
// value is read again from each key inside it. It returns -1 otherwise.
func secretKeyBefore(s string, p, i int) int {
	k := i
	for k > p && identChars[s[k-1]] && i-k < maxIdent {
		k--
	}
	if k == p || k == i || identChars[s[k-1]] {
		return -1
	}
	for j := k; j+3 <= i; j++ {
		for _, w := range assignmentWords {
			if hasFoldPrefix(s[j:i], w) {
				return k
			}
		}
	}
	return -1
}

// assignmentWords are the keywords matchAssignment is registered for,
// bar pw, whose short form a value holds by chance.
var assignmentWords = []string{"key", "token", "secret", "pass", "pwd", "cred", "auth"}

// plainValue are the bytes valueEnd takes into a value without a
// second look.
var plainValue = func() *charset {
	var c charset
	for b := '!'; b <= '~'; b++ {
		c[b] = !strings.ContainsRune(closerBytes+"\\&#;,=:", b)
	}
	return &c
}()

// assignmentAt reports whether a key=value starts at i (page=2,
// Encrypt=true): what follows a separator that ends the value before it.
// A value's base64 padding (abc=) is none: a value must follow the =.
func assignmentAt(s string, i int) bool {
	e := runMax(s, i, identChars, maxIdent+1)
	return e > i && e-i <= maxIdent && e+1 < len(s) && s[e] == '=' && s[e+1] > ' ' && s[e+1] != '='
}
