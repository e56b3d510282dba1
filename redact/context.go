package redact

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of what the context rules read and replace.
const (
	maxIdent   = 64      // a key's name
	maxQuoted  = 512     // a quoted value: longer is text, not a secret
	maxValue   = 8 << 10 // an unquoted value (a base64 key in a YAML secret)
	maxLine    = 4 << 10 // how far along a curl command its -u is looked for
	maxURL     = 512     // a URL's authority
	minSecret  = 10      // gitleaks' generic-api-key's shortest value
	minPass    = 6       // a password shorter than this is a placeholder or a test
	secretBits = 3.5     // gitleaks' generic-api-key's entropy floor
)

func init() {
	for _, w := range assignmentWords {
		register(w, one(matchAssignment))
	}
	// pw is too short a keyword alone: it is looked for with what joins
	// it to a name (DB_PW) or to its operator (pw=, "pw":).
	for _, w := range []string{"pw=", "pw:", `pw"`, "pw'", "_pw"} {
		register(w, one(matchAssignment))
	}
	register("bearer", one(matchBearer))
	register("://", one(matchURLPassword))
	register("curl", matchCurlUsers)
	for _, t := range tools {
		register(t.keyword(), matchToolPassword)
	}
}

// A tool is a command that takes a password after a flag.
type tool struct {
	name     string   // the command
	sub      string   // a word that must follow it (docker login), or ""
	flags    []string // the flags the password follows
	attached bool     // the password follows the flag only without a blank (mysql -pX; -p alone asks)
	kind     string
}

// keyword is what the tool is looked for by: its name, with its
// subcommand when the name is shorter than a keyword.
func (t tool) keyword() string {
	if len(t.name) < 3 {
		return t.name + " " + t.sub
	}
	return t.name
}

// tools are the commands whose password flags are common in a session's
// commands and in the instructions it reads.
var tools = func() []tool {
	ts := []tool{
		{name: "sshpass", flags: []string{"-p"}},
		{name: "redis-cli", flags: []string{"-a"}},
		{name: "security", flags: []string{"-w"}}, // macOS add-generic-password, add-internet-password
		{name: "sqlcmd", flags: []string{"-P"}},
		{name: "gh", sub: "secret", flags: []string{"--body", "-b"}, kind: "secret"},
		{name: "az", sub: "login", flags: []string{"-p"}},
	}
	for _, n := range []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mariadb", "mariadb-dump"} {
		ts = append(ts, tool{name: n, flags: []string{"-p"}, attached: true})
	}
	for _, n := range []string{"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras"} {
		ts = append(ts, tool{name: n, sub: "login", flags: []string{"-p"}})
	}
	for _, n := range []string{"ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare"} {
		ts = append(ts, tool{name: n, flags: []string{"-w"}})
	}
	for _, n := range []string{"mongosh", "mongo", "mongodump", "mongorestore", "mongoexport", "mongoimport"} {
		ts = append(ts, tool{name: n, flags: []string{"-p"}})
	}
	for i := range ts {
		if ts[i].kind == "" {
			ts[i].kind = "password"
		}
	}
	return ts
}()

var toolChars = chars(alnumChars, "-_")

// maxCommand is how far along a tool's command its password flag is
// looked for: a command line with its host, user, database and options
// fits (curl's maxLine also reads request bodies).
const maxCommand = 1 << 10

// matchToolPassword finds the password after a tool's flag, looked for
// along its command (through backslash-continued lines, up to && || | ;).
func matchToolPassword(s string, hit, from int) (found, int, bool) {
	if !boundaryBefore(s, hit) || hit > 0 && s[hit-1] == '-' {
		return found{}, 0, false
	}
	e := run(s, hit, toolChars)
	t, ok := toolNamed(s[hit:e])
	if !ok {
		return found{}, 0, false
	}
	line := s[:commandEnd(s, e, min(len(s), e+maxCommand))]
	line = line[:nextCommand(line, e, t.name)] // which is its own hit's
	if i := strings.IndexAny(line[e:], "|;&"); i >= 0 {
		line = line[:e+i]
	}
	p := max(from, e)
	if t.sub != "" && !hasWord(line[e:], t.sub) {
		return found{}, 0, false
	}
	for p < len(line) {
		i := strings.IndexByte(line[p:], '-')
		if i < 0 {
			break
		}
		p += i
		if f, ok := toolFlag(s, line, p, t); ok {
			return f, f.End, true
		}
		p = run(line, p, toolChars)
	}
	return found{}, 0, false
}

// nextCommand is where the tool name runs again as a command after e in
// line (a word of its own, after a blank or a path), or len(line).
func nextCommand(line string, e int, name string) int {
	for i := e; ; {
		j := strings.Index(line[i:], name)
		if j < 0 {
			return len(line)
		}
		j += i
		k := j + len(name)
		if c := line[j-1]; (c == ' ' || c == '\t' || c == '/') && (k == len(line) || line[k] == ' ') {
			return j
		}
		i = k
	}
}

func toolNamed(name string) (tool, bool) {
	for _, t := range tools {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// toolFlag reads the password of t's flag that starts at p, if one does.
func toolFlag(s, line string, p int, t tool) (found, bool) {
	if c := line[p-1]; c != ' ' && c != '\t' && c != '\n' {
		return found{}, false
	}
	for _, flag := range t.flags {
		if !strings.HasPrefix(line[p:], flag) {
			continue
		}
		q := p + len(flag)
		if q == len(line) || line[q] == '=' || toolChars[line[q]] && strings.HasPrefix(flag, "--") {
			continue // --body-file, or a flag this is a prefix of
		}
		blank := line[q] == ' ' || line[q] == '\t'
		if blank && t.attached {
			continue
		}
		if blank {
			q = skipBlanks(line, q, 4)
		}
		start, end, head, ok := value(line, p, q)
		if !ok || line[start] == '-' || !passwordValue(line[start:end]) && (head == end || !passwordValue(line[start:head])) {
			return found{}, false
		}
		return found{Finding{start, end, t.kind}, context}, true
	}
	return found{}, false
}

// matchAssignment finds the value assigned to a key that names a secret,
// hit being a secret word inside the key's name.
func matchAssignment(s string, hit int) (found, bool) {
	l := hit
	for l > 0 && identChars[s[l-1]] && hit-l < maxIdent {
		l--
	}
	r := runMax(s, hit, identChars, maxIdent+1)
	for r > hit && (s[r-1] == '.' || s[r-1] == '-') {
		r--
	}
	if l > 0 && identChars[s[l-1]] || r-l > maxIdent || strings.HasSuffix(s[:l], "://") {
		return found{}, false // a URL's user name: matchURLPassword's
	}
	p, form, ok := operator(s, l, r)
	if !ok {
		return found{}, false
	}
	start, end, head, ok := 0, 0, 0, false
	if form != assigned {
		// Without an operator, most keys are words of prose ("the key
		// point"): the next word must look like a value before the key's
		// name is read.
		if proseNext(s, p, form) {
			return found{}, false
		}
		start, end, head, ok = value(s, l, p)
		if !ok || end-start < minPass || onlyWordish(s[start:end]) {
			return found{}, false
		}
		if form == spaced && netrc(s, l) {
			form = listed
		}
		if form == listed && !cellEnds(s, end) {
			return found{}, false
		}
	}
	kind, word, ok := classify(proseWord(s, l), s[l:r])
	if !ok || form != assigned && (!labelWord(word) || kind == "authorization") || form == stated && kind != "password" {
		return found{}, false
	}
	if kind == "authorization" {
		return headerValue(s, p)
	}
	if form == assigned {
		if start, end, head, ok = value(s, l, p); !ok {
			return found{}, false
		}
	}
	judge := validValue
	if form == spaced || form == stated {
		judge = shapedValue
	}
	if kind, ok = judgeValue(judge, kind, s, start, end, head); !ok {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}

// proseNext reports whether a word of prose, no value, follows a key at
// p that no operator follows: the fast way out for "the key point: …".
func proseNext(s string, p int, f form) bool {
	w := run(s, p, wordish)
	switch {
	case w == p:
		return false
	case w == len(s) || s[w] <= ' ' || s[w] == '.' || s[w] == ',':
		return true
	}
	return f >= spaced && strings.IndexByte(":;!?)", s[w]) >= 0 && (w+1 == len(s) || s[w+1] <= ' ')
}

// cellEnds reports whether a value that ends at e is all of what follows
// its key in a table cell, a tab-separated line or a .netrc line: its
// closing quote, blanks, then the cell's | or the line's end.
func cellEnds(s string, e int) bool {
	e = skipBlanks(s, skipQuote(s, e), 8)
	return e == len(s) || s[e] == '|' || s[e] == '\n' || s[e] == '\r' || s[e] == '\t'
}

// validValue reports whether v is a secret of kind given to a key.
func validValue(kind, v string) bool {
	switch kind {
	case "password":
		return passwordValue(v)
	case "AWS secret access key":
		return len(v) == 40 && run(v, 0, b64) == 40 && !placeholder(v)
	}
	return secretValue(v)
}

// A form is how an assignment's key and value are joined, which says how
// sure it is that a value follows the key.
type form uint8

const (
	assigned form = iota // = : := => ?= <key>, --flag value: the operator says so
	listed               // a table's next cell, a tab, a .netrc line: the layout says so
	spaced               // a blank or a dash: only the value's shape can say so
	stated               // "is" or "was": as spaced, for a password alone ("the key is …" is prose)
)

// operator finds the assignment after the key s[l:r] (its closing quote,
// markdown emphasis and blanks allowed around it) and returns where the
// value may start, and its form: = : := => ?= (also fullwidth), > after
// <key, a blank after a --flag; the | of a table's cell, a tab, a blank
// in a .netrc line; a blank or a dash otherwise.
func operator(s string, l, r int) (int, form, bool) {
	p := skipQuote(s, r)
	p = skipEmphasis(s, p)
	b := p
	p = skipBlanks(s, p, 4)
	if p == len(s) {
		return 0, 0, false
	}
	next := byte(0)
	if p+1 < len(s) {
		next = s[p+1]
	}
	switch s[p] {
	case ':':
		switch {
		case next == '=':
			p++ // :=
		case next == ':' || strings.HasPrefix(s[p:], "://"):
			return 0, 0, false // a path (a::b, scheme://)
		}
	case '=':
		switch next {
		case '>':
			p++ // =>
		case '=', '~':
			return 0, 0, false // a comparison
		}
	case '?':
		if next != '=' {
			return 0, 0, false
		}
		p++ // ?=
	case '>':
		if l == 0 || s[l-1] != '<' {
			return 0, 0, false
		}
		return p + 1, assigned, true // <password>value</password>
	case 0xef:
		if !strings.HasPrefix(s[p:], "＝") && !strings.HasPrefix(s[p:], "：") {
			return 0, 0, false
		}
		p += len("＝") - 1 // a fullwidth = or :, as a CJK input method types them
	default:
		if p == b {
			return 0, 0, false
		}
		if strings.HasPrefix(s[l:r], "--") && s[p-1] == ' ' {
			return p, assigned, true // --api-key value
		}
		return blankOperator(s, l, b, p)
	}
	p = skipEmphasis(s, p+1)
	return skipBlanks(s, p, 8), assigned, true
}

// blankOperator reads what joins a key that starts at l to its value
// when only blanks, s[b:p], follow the key: a table's |, a tab (listed),
// a dash or a blank (spaced; on a .netrc line, which matchAssignment
// tells once the value looks like one, listed), "is" or "was" (stated).
func blankOperator(s string, l, b, p int) (int, form, bool) {
	switch c := s[p]; {
	case c == '|':
		if !cellStarts(s, l) {
			return 0, 0, false
		}
		return skipBlanks(s, p+1, 8), listed, true
	case strings.IndexByte(s[b:p], '\t') >= 0:
		return p, listed, true
	case c == '-' || c == 0xe2: // - – —
		for _, dash := range []string{"- ", "– ", "— "} {
			if strings.HasPrefix(s[p:], dash) {
				return skipBlanks(s, p+len(dash), 4), spaced, true
			}
		}
	case c == 'i' || c == 'I' || c == 'w' || c == 'W':
		for _, verb := range []string{"is ", "was ", "is: "} {
			if hasFoldPrefix(s[p:], verb) {
				return skipBlanks(s, p+len(verb), 4), stated, true // "my password is x"
			}
		}
	}
	return p, spaced, true
}

// cellStarts reports whether the key that starts at l ends a table's
// cell: between it and the | before it (or the line's start) are only
// the words of a label (DB password, **Token**).
func cellStarts(s string, l int) bool {
	i := l
	for i > 0 && l-i < maxIdent && labelChars[s[i-1]] {
		i--
	}
	return i == 0 || s[i-1] == '|' || s[i-1] == '\n'
}

var labelChars = chars(alnumChars, " _-.*")

// netrc reports whether the key that starts at l is on a .netrc line
// (machine host login user password value).
func netrc(s string, l int) bool {
	line := s[max(0, l-maxEnclosing):l]
	if nl := strings.LastIndexByte(line, '\n'); nl >= 0 {
		line = line[nl+1:]
	}
	return hasWord(line, "machine") || hasWord(line, "login")
}

// hasWord reports whether w is a word of line, between spaces or its
// ends.
func hasWord(line, w string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], w)
		if j < 0 {
			return false
		}
		j += i
		e := j + len(w)
		if (j == 0 || line[j-1] == ' ') && (e == len(line) || line[e] == ' ') {
			return true
		}
		i = e
	}
}

// shapedValue reports whether v, after a key and only a blank or a
// dash, is a secret of kind by its shape alone, as "password field" is
// not: a secret by gitleaks' rule, or a password of 8 bytes or more with
// three of lower-case letters, capitals, digits and symbols; never a
// flag, hex (a commit's hash, a UUID, 0xdeadbeef), a version or a
// constant's name.
func shapedValue(kind, v string) bool {
	if v[0] == '-' || run(v, 0, hexDash) == len(v) || version(v) || constant(v) {
		return false
	}
	if h := strings.TrimPrefix(v, "0x"); run(h, 0, hexDash) == len(h) {
		return false
	}
	if kind == "password" {
		return len(v) >= 8 && classes(v) >= 3 && entropy(v) > 3 && passwordValue(v) && !nameLike(v)
	}
	return hasDigit(v) && validValue(kind, v) && !nameLike(v)
}

// version reports whether v starts as a version does (1:4.8.1-2ubuntu2,
// 6.3-2, v1.2.3-beta).
func version(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	d := run(v, 0, digits)
	return d > 0 && d+1 < len(v) && (v[d] == '.' || v[d] == ':') && digits[v[d+1]]
}

// constant reports whether v is the name of a constant or a variable
// (TOKEN_NAME_V2): capitals, digits and underscores.
func constant(v string) bool {
	return strings.IndexByte(v, '_') >= 0 && run(v, 0, constChars) == len(v)
}

var constChars = chars(upperChars, digitChars, "_")

var hexDash = chars(digitChars, "abcdefABCDEF-")

// classes counts the classes of bytes in v: lower-case letters,
// capitals, digits, and symbols other than the - _ . that join the words
// of a name (server02-ipmi is of two).
func classes(v string) int {
	var has [4]bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isLowerByte(c):
			has[0] = true
		case isUpperByte(c):
			has[1] = true
		case '0' <= c && c <= '9':
			has[2] = true
		case c != '-' && c != '_' && c != '.':
			has[3] = true
		}
	}
	n := 0
	for _, h := range has {
		if h {
			n++
		}
	}
	return n
}

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
func closeQuote(s string, q quote) (int, int) {
	e := strings.Index(s, q.close)
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
		c[b] = !strings.ContainsRune("\"'`)]}*<\\&#;,=:", b)
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

// passwordValue reports whether v, given to a key that names a password,
// is one: not a placeholder, a name or an expression, a path or a URL.
func passwordValue(v string) bool {
	return len(v) >= minPass && len(v) <= 256 && !onlyWordish(v) && !expression(v) && !placeholder(v) && !pathOrURL(v)
}

// secretValue reports whether v, given to a key that names a secret, is
// one, by gitleaks' generic-api-key rule: long enough, not only letters
// (a digit, or + / = in a long base64 value), and of high entropy.
func secretValue(v string) bool {
	if len(v) < minSecret || onlyWordish(v) || expression(v) || placeholder(v) || pathOrURL(v) {
		return false
	}
	if !hasDigit(v) && (len(v) < 20 || !strings.ContainsAny(v, "+/=")) {
		return false
	}
	return entropy(v) > secretBits && !nameLike(v) && !coordinate(v)
}

// coordinate reports whether v is a package's coordinate, names and
// versions between colons (io.jsonwebtoken:jjwt-api:0.11.5).
func coordinate(v string) bool {
	if !strings.Contains(v, ":") {
		return false
	}
	for part := range strings.SplitSeq(v, ":") {
		if part == "" || !onlyWordish(part) && run(part, 0, versionChars) < len(part) {
			return false
		}
	}
	return true
}

var versionChars = chars(digitChars, ".")

// nameLike reports whether v is a name built of words, such as a cache
// key, an image tag or an artifact (setup-uv-1-x86_64-unknown-linux-gnu-
// 0.7.13-<sha256>): three or more lower-case words of two letters or
// more between - _ . or /. A random token is almost never cut so; a
// secret with a prefix of words has one or two (django-insecure-…).
func nameLike(v string) bool {
	words := 0
	for part := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' }) {
		if len(part) >= 2 && strings.Trim(part, lowerChars) == "" {
			words++
		}
	}
	return words >= 3
}

// headerValue finds the credentials of an Authorization header whose
// value starts at p: "Bearer x", "Basic x", "token x", or a bare "x".
func headerValue(s string, p int) (found, bool) {
	if quoteLen(s, p+1) > 0 && strings.IndexByte("fFrRbB", s[p]) >= 0 {
		p++ // a Python f"…" string
	}
	p = skipQuote(s, p)
	kind, start := "authorization", p
	if w := run(s, p, schemeChars); w > p && w < len(s) && s[w] == ' ' && isScheme(s[p:w]) {
		switch strings.ToLower(s[p:w]) {
		case "bearer":
			kind = "bearer token"
		case "basic":
			kind = "basic auth credentials"
		}
		start = skipBlanks(s, w, 4)
	}
	end := runMax(s, start, token68, maxValue+1)
	for end > start && s[end-1] == '.' {
		end--
	}
	v := s[start:end]
	if len(v) < 8 || len(v) > maxValue || onlyWordish(v) || placeholder(v) {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}

var schemeChars = chars(alnumChars, "-")

// isScheme reports whether w is an authentication scheme rather than the
// credentials themselves: one of the registered ones, or a short word.
func isScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest", "bot", "apikey", "api-key", "key", "sso-key",
		"negotiate", "ntlm", "dpop", "hoba", "mutual", "aws4-hmac-sha256", "splunk", "jwt":
		return true
	}
	return len(w) <= 16 && onlyWordish(w)
}

// matchBearer finds a Bearer token outside an Authorization header ("the
// API refused Bearer x"): a long token68 value with a digit, of some
// entropy.
func matchBearer(s string, hit int) (found, bool) {
	p := hit + len("bearer")
	if !boundaryBefore(s, hit) || p >= len(s) || s[p] != ' ' {
		return found{}, false
	}
	start := skipBlanks(s, p, 4)
	end := runMax(s, start, token68, maxValue+1)
	for end > start && s[end-1] == '.' {
		end--
	}
	v := s[start:end]
	if len(v) < 16 || len(v) > maxValue || !hasDigit(v) || entropy(v) <= 3 || placeholder(v) {
		return found{}, false
	}
	return found{Finding{start, end, "bearer token"}, context}, true
}

// matchURLPassword finds the password of scheme://user:password@host,
// the last @ of the authority ending it (an unescaped @ in a password
// is common). A password that holds what ends an authority (# / ? ( ) [
// ], which RFC 3986 wants percent-encoded and people paste as they are)
// is found by passwordBeyond.
func matchURLPassword(s string, hit int) (found, bool) {
	if hit == 0 || !alpha[s[hit-1]] && !digitOrPunct(s[hit-1]) {
		return found{}, false
	}
	a := hit + len("://")
	e := a
	for e < len(s) && !urlAuthorityEnd[s[e]] && e-a <= maxURL {
		e++
	}
	if e-a > maxURL {
		return found{}, false
	}
	colon := strings.IndexByte(s[a:e], ':')
	at := strings.LastIndexByte(s[a:e], '@')
	if at < 0 || !hostAt(s, a+at+1) {
		if colon < 0 || e == len(s) || strings.IndexByte("#/?()[]", s[e]) < 0 {
			return found{}, false
		}
		return passwordBeyond(s, a, a+colon, e)
	}
	if colon < 0 || colon > at {
		return found{}, false
	}
	return urlPassword(s, a+colon+1, a+at)
}

// passwordBeyond finds the password of a URL whose authority s[a:e]
// ended at one of # / ? ( ) [ ] after user:, c being the colon: the last
// @ before whitespace or a quote, followed by a host, ends it. A port
// (host:8080/path@x) is no password.
func passwordBeyond(s string, a, c, e int) (found, bool) {
	if run(s, a, userChars) != c || run(s, c+1, digits) == e {
		return found{}, false
	}
	w := e
	for w < len(s) && w-a <= maxURL && !passwordEnd[s[w]] && !strings.HasPrefix(s[w:], "://") {
		w++ // (another URL's :// ends it too, so that each is read once)
	}
	at := strings.LastIndexByte(s[e:w], '@')
	if at < 0 || !hostAt(s, e+at+1) {
		return found{}, false
	}
	return urlPassword(s, c+1, e+at)
}

// hostAt reports whether a URL's host starts at i: a name or an address
// ([::1]), then its end, a port, a path, a query or a fragment.
func hostAt(s string, i int) bool {
	if i < len(s) && s[i] == '[' {
		return true
	}
	h := run(s, i, hostChars)
	return h > i && alnum[s[i]] && (h == len(s) || s[h] != '@' && !isAlnum(s[h]))
}

func urlPassword(s string, start, end int) (found, bool) {
	if pw := s[start:end]; len(pw) < 3 || placeholder(pw) {
		return found{}, false
	}
	return found{Finding{start, end, "password"}, context}, true
}

var (
	// userChars make up a URL's user name.
	userChars = chars(alnumChars, "._~%+-")
	hostChars = chars(alnumChars, ".-_")
	// passwordEnd ends a password pasted into a URL as it is.
	passwordEnd = chars(" \t\r\n\x00\"'`<>\\")
)

// digitOrPunct reports whether c may end a URL scheme (mongodb+srv,
// git+ssh, s3).
func digitOrPunct(c byte) bool { return '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-' }

// matchCurlUsers finds the password of each -u user:password of a curl
// command, looked for along it (through backslash-continued lines).
func matchCurlUsers(s string, hit, from int) (found, int, bool) {
	p := max(from, hit+len("curl"))
	if !boundaryBefore(s, hit) || hit+4 < len(s) && isAlnum(s[hit+4]) {
		return found{}, 0, false
	}
	line := s[:commandEnd(s, p, min(len(s), hit+len("curl")+maxLine))]
	for p < len(line) {
		i := strings.Index(line[p:], "-u")
		if i < 0 {
			break
		}
		p += i
		if c := line[p-1]; c == ' ' || c == '\t' || c == '\n' || c == '-' && line[p-2] == ' ' {
			if f, ok := curlPassword(line, p-strings.Count(line[p-1:p], "-")); ok {
				return f, f.End, true
			}
		}
		p += 2
	}
	return found{}, 0, false
}

// commandEnd is where the command line that runs through p ends: at a
// newline not escaped by a backslash, or at limit.
func commandEnd(s string, p, limit int) int {
	for {
		i := strings.IndexByte(s[p:limit], '\n')
		if i < 0 {
			return limit
		}
		if p += i; s[p-1] != '\\' {
			return p
		}
		p++
	}
}

// curlPassword reads the password of -u or --user at p.
func curlPassword(s string, p int) (found, bool) {
	q, ok := userFlag(s, p)
	if !ok {
		return found{}, false
	}
	q = skipQuote(s, q)
	e := q
	for e < len(s) && !urlAuthorityEnd[s[e]] && s[e] != '/' && e-q < 256 {
		e++
	}
	colon := strings.IndexByte(s[q:e], ':')
	if colon < 0 {
		return found{}, false
	}
	start := q + colon + 1
	if pw := s[start:e]; len(pw) < 3 || placeholder(pw) || colon > 0 && strings.IndexByte("$<{%", s[q]) >= 0 {
		return found{}, false
	}
	return found{Finding{start, e, "password"}, context}, true
}

// userFlag returns where the value of curl's -u or --user flag at p
// starts: after a blank or =, or right after -u (-uuser:password).
func userFlag(s string, p int) (int, bool) {
	var q int
	switch {
	case strings.HasPrefix(s[p:], "--user"):
		q = p + len("--user")
	case strings.HasPrefix(s[p:], "-u"):
		q = p + len("-u")
		if q < len(s) && (alnum[s[q]] || quoteLen(s, q) > 0) {
			return q, true
		}
	default:
		return 0, false
	}
	if q == len(s) || s[q] != ' ' && s[q] != '=' {
		return 0, false // --user-agent
	}
	return skipBlanks(s, q+1, 4), true
}

// proseWord returns the word before a key's name when only a space
// separates them, as in prose ("cache key: …", "API key: …"), else "".
func proseWord(s string, l int) string {
	if l < 2 || s[l-1] != ' ' {
		return ""
	}
	k := l - 1
	for k > 0 && alpha[s[k-1]] && l-k < maxIdent {
		k--
	}
	if k > 0 && identChars[s[k-1]] {
		return "" // "x.y key": not a word of prose
	}
	return s[k : l-1]
}

// classify tells whether a key's name names a secret, and which kind: its
// words (split at _ . - and camelCase, after the word of prose before it)
// hold a secret word not followed by one saying it is not the secret
// itself, nor preceded by one saying the same.
func classify(prose, ident string) (kind, word string, ok bool) {
	var buf [12]string
	words := buf[:0]
	if prose != "" {
		words = append(words, strings.ToLower(prose))
	}
	words = joinPass(splitWords(ident, words))
	k := -1
	for i, w := range words {
		if secretWord(w) && (i > 0 || prose == "") {
			k = i
		}
	}
	if k < 0 {
		return "", "", false
	}
	for _, w := range words[k+1:] {
		if notSecretAfter[w] {
			return "", "", false
		}
	}
	w := words[k]
	if k > 0 && (w == "key" || w == "token" || w == "auth") && notSecretBefore[words[k-1]] {
		return "", "", false
	}
	switch {
	case w == "authorization" || strings.HasSuffix(w, "authorization"):
		return "authorization", w, true
	case w == "pass" || w == "pwd" || w == "pw" || strings.HasSuffix(w, "password") || strings.HasSuffix(w, "passwd") ||
		strings.HasSuffix(w, "passwort") || strings.HasSuffix(w, "passphrase"):
		return "password", w, true
	case awsSecret(words):
		return "AWS secret access key", w, true
	}
	return "secret", w, true
}

// labelWord reports whether the secret word of a key names a secret
// also as a label in a table or in prose, with no operator after it:
// pass (first-pass, "or pass X on the command line") and auth are verbs
// and prefixes there.
func labelWord(w string) bool { return w != "pass" && w != "auth" }

func awsSecret(words []string) bool {
	var buf [maxIdent * 2]byte // the words joined, on the stack
	aws, secret, joined := false, false, buf[:0]
	for _, w := range words {
		aws = aws || w == "aws"
		secret = secret || strings.Contains(w, "secret")
		joined = append(joined, w...)
	}
	return aws && secret || bytes.Contains(joined, []byte("secretaccesskey"))
}

// secretWord reports whether a word of a key's name names a secret: a
// short word exactly (key, not monkey), a long one also at the end of a
// compound (apikey, pgpassword, clientsecret).
func secretWord(w string) bool {
	switch w {
	case "key", "pass", "pwd", "pw", "auth", "creds":
		return true
	}
	for _, suffix := range []string{"token", "secret", "password", "passwd", "passwort", "passphrase", "credential", "credentials",
		"apikey", "accesskey", "secretkey", "privatekey", "authkey", "signingkey", "masterkey", "authorization"} {
		if strings.HasSuffix(w, suffix) {
			return true
		}
	}
	return false
}

// splitWords appends the lower-case words of a name to buf: split at
// anything but letters and digits, and where camelCase starts a word
// (apiKey, APIKey, OPENAI_API_KEY).
func splitWords(name string, buf []string) []string {
	start := 0
	for i := 0; i <= len(name); i++ {
		boundary := i == len(name) || !isAlnum(name[i])
		camel := !boundary && i > start && isUpperByte(name[i]) &&
			(isLowerByte(name[i-1]) || i+1 < len(name) && isLowerByte(name[i+1]) && isUpperByte(name[i-1]))
		if boundary || camel {
			if i > start && len(buf) < cap(buf) {
				buf = append(buf, strings.ToLower(name[start:i]))
			}
			start = i
			if boundary {
				start = i + 1
			}
		}
	}
	return buf
}

// joinPass joins the words that camelCase split out of one
// (PassWord, PassPhrase), so that the word after pass is not read as
// saying what the key is (password_word would be no secret).
func joinPass(words []string) []string {
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "pass" {
			continue
		}
		switch words[i+1] {
		case "word", "wort", "wd", "phrase":
			words[i] += words[i+1]
			words = append(words[:i+1], words[i+2:]...)
		}
	}
	return words
}

func isUpperByte(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLowerByte(c byte) bool { return 'a' <= c && c <= 'z' }

// notSecretAfter are words after a secret word that make the key name
// something else: its id, name, length, where it is kept, when it expires
// (gitleaks' generic-api-key allowlist: key_id, secret_name, token_url…).
var notSecretAfter = set("id", "ids", "name", "names", "length", "len", "size", "type", "types", "kind", "url", "uri",
	"urls", "endpoint", "file", "files", "filename", "path", "paths", "dir", "env", "var", "variable", "field", "fields",
	"column", "count", "limit", "limits", "max", "min", "prefix", "suffix", "format", "version", "hash", "hashed",
	"digest", "fingerprint", "checksum", "index", "idx", "label", "mode", "algorithm", "alg", "method", "expiry",
	"expires", "expiration", "expired", "ttl", "timeout", "at", "ref", "param", "params", "policy", "scope", "scopes",
	"provider", "source", "location", "region", "list", "map", "usage", "used", "budget", "rate", "regex", "pattern",
	"schema", "required", "enabled", "disabled", "exists", "present", "manager", "lifetime", "hint", "placeholder",
	"description", "desc", "title", "help", "event", "events", "code", "press", "pressed", "board", "up", "down",
	"left", "right", "word", "words", "pair", "ring", "frame", "chain", "binding", "bindings", "mapping", "error",
	"errors", "invalid", "missing", "valid", "validation", "status", "state", "info", "options", "spec", "input",
	"output", "store", "helper", "command", "cmd", "reset", "retries", "vault", "arn", "rev", "revision", "commit",
	"sha")

// notSecretBefore are words before key, token or auth (the words with
// other meanings) that make the name something else: a database key, a
// page or cache key, a CSRF token, a count of model tokens, a public key.
// Before password or secret they change nothing ("input password: …").
var notSecretBefore = set("public", "pub", "publishable", "primary", "foreign", "sort", "partition", "cache", "cached",
	"idempotency", "hot", "natural", "schema", "sequence", "bucket", "idx", "index", "unique", "composite", "lookup",
	"row", "routing", "shard", "next", "page", "continuation", "pagination", "cursor", "sync", "csrf", "xsrf", "max",
	"num", "total", "input", "output", "prompt", "completion", "reasoning", "thinking", "group", "dict", "range",
	"object", "s3", "message", "translation", "i18n", "column", "dedup", "dedupe", "event", "cancellation", "cancel",
	"special", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "hash", "map", "sorting")

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
