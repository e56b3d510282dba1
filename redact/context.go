package redact

import (
	"bytes"
	"strings"
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
		for _, w := range t.keywords() {
			register(w, matchToolPassword)
		}
	}
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
// flag, hex (a commit's hash, a UUID, 0xdeadbeef), a version, a
// constant's name, or a word with the JSON around it (key
// directories"},"id":"…", or escaped, directories\"}).
func shapedValue(kind, v string) bool {
	if v[0] == '-' || run(v, 0, hexDash) == len(v) || version(v) || constant(v) || closesJSON(v) {
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

// closesJSON reports whether v holds a double quote that closes a JSON
// string: one followed by what follows a string in JSON (, : } ]). A
// quote or a backslash anywhere else can be a password's.
func closesJSON(v string) bool {
	for i := 0; i+1 < len(v); i++ {
		if v[i] == '"' && strings.IndexByte(",:}]", v[i+1]) >= 0 {
			return true
		}
	}
	return false
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
// value starts at p: "Bearer x", "Basic x", "token x", or a bare "x",
// however long (an opaque token can outgrow any bound a value has; the
// span is bounded by token68, what credentials are made of instead).
func headerValue(s string, p int) (found, bool) {
	if quoteLen(s, p+1) > 0 && strings.IndexByte("fFrRbB", s[p]) >= 0 {
		p++ // a Python f"…" string
	}
	p = skipQuote(s, p)
	kind, start := "authorization", p
	w := run(s, p, schemeChars)
	scheme := w > p && isScheme(s[p:w])
	if scheme && lineBreakAt(s, skipBlanks(s, w, 4)) {
		return found{}, false // the credentials, if any, are on a line of their own (AWS4-HMAC-SHA256\nCredential=…)
	}
	if scheme && w < len(s) && s[w] == ' ' {
		switch strings.ToLower(s[p:w]) {
		case "bearer":
			kind = "bearer token"
		case "basic":
			kind = "basic auth credentials"
		}
		start = skipBlanks(s, w, 4)
	}
	end := run(s, start, token68) // however long: the header says they are credentials
	for end > start && s[end-1] == '.' {
		end--
	}
	v := s[start:end]
	if len(v) < 8 || onlyWordish(v) || placeholder(v) {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}

var schemeChars = chars(alnumChars, "-")

// lineBreakAt reports whether a line break, raw or escaped, is at i in s.
func lineBreakAt(s string, i int) bool {
	return i < len(s) && (s[i] == '\n' || s[i] == '\r' || s[i] == '\\' && i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r'))
}

// isScheme reports whether w is an authentication scheme rather than the
// credentials themselves: one of the registered ones, or a short word.
func isScheme(w string) bool {
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "digest", "bot", "apikey", "api-key", "key", "sso-key",
		"negotiate", "ntlm", "dpop", "hoba", "mutual", "aws4-hmac-sha256", "goog4-hmac-sha256", "splunk", "jwt":
		return true
	}
	return len(w) <= 16 && onlyWordish(w)
}

// matchBearer finds a Bearer token outside an Authorization header ("the
// API refused Bearer x"): a token68 value of 16 bytes or more, however
// long, with a digit, of some entropy.
func matchBearer(s string, hit int) (found, bool) {
	p := hit + len("bearer")
	if !boundaryBefore(s, hit) || p >= len(s) || s[p] != ' ' {
		return found{}, false
	}
	start := skipBlanks(s, p, 4)
	end := run(s, start, token68)
	for end > start && s[end-1] == '.' {
		end--
	}
	v := s[start:end]
	if len(v) < 16 || !hasDigit(v) || entropy(v) <= 3 || placeholder(v) {
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
	if pw := s[start:e]; len(pw) < 3 || quoteLen(pw, 0) == len(pw) || placeholder(pw) || colon > 0 && strings.IndexByte("$<{%", s[q]) >= 0 {
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
