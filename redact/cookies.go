package redact

import "strings"

// A session cookie is a bearer credential: whoever sends it is logged in.
// The cookies of a Cookie or Set-Cookie header and of curl's -b and
// --cookie are name=value pairs, and a value is taken for a session's
// when it is a secret by the generic rule (long, with a digit, of high
// entropy): theme=dark, lang=en-US and Path=/ stay.

func init() {
	register("cookie", matchCookieHeader)
	register("curl", matchCurlCookies)
}

// maxCookies bounds how far along a header or a flag's value its cookies
// are read.
const maxCookies = 4 << 10

var (
	// cookieName is RFC 6265's token: what a cookie's name is made of.
	cookieName = chars(alnumChars, "!#$%&'*+-.^_`|~")
	// cookieOctet is what a cookie's value is taken to be made of: RFC
	// 6265's printable ASCII but " , ; and \, less the quotes, brackets
	// and parentheses that close the text it stands in ((Cookie: sid=x),
	// 'x=Cookie: sid=x'), which no session's value holds.
	cookieOctet = chars(alnumChars, "!#$%&*+-./:=?@^_|~")
)

// matchCookieHeader finds the session values of a Cookie or Set-Cookie
// header, hit being its "cookie": in plain text, in curl -H '…', and as
// a JSON or YAML key ("Cookie": "sid=…").
func matchCookieHeader(s string, hit, from int) (found, int, bool) {
	l, e := hit, hit+len("cookie")
	if l >= 4 && hasFoldPrefix(s[l-4:], "set-") {
		l -= 4
	}
	if !boundaryBefore(s, l) || l > 0 && strings.IndexByte("_-.", s[l-1]) >= 0 || e < len(s) && identChars[s[e]] {
		return found{}, 0, false // cookies, cookie_jar, x-cookie-name
	}
	p := skipBlanks(s, skipQuote(s, e), 2)
	if p == len(s) || s[p] != ':' {
		return found{}, 0, false
	}
	p = skipBlanks(s, p+1, 4)
	end := p + strings.IndexByte(s[p:min(len(s), p+maxCookies)]+"\n", '\n')
	if n, q := quoteAt(s, p); n > 0 {
		p += n // "Cookie": "sid=…"
		if c, _ := closeQuote(s[p:end], q); c >= 0 {
			end = p + c
		}
	} else if l > 0 && strings.IndexByte("'\"`", s[l-1]) >= 0 {
		if c := strings.IndexByte(s[p:end], s[l-1]); c >= 0 {
			end = p + c // -H 'Cookie: sid=…'
		}
	}
	return cookieValues(s[:end], p, from)
}

// cookieValues finds the first session value at or after from among the
// name=value pairs that start at p and run, separated by ; and blanks,
// to the end of s or to what is not a pair (the prose after a header).
func cookieValues(s string, p, from int) (found, int, bool) {
	for p < len(s) {
		n := run(s, p, cookieName)
		if n == p || n == len(s) || s[n] != '=' {
			break
		}
		v := n + 1
		quoted := v < len(s) && s[v] == '"'
		if quoted {
			v++
		}
		ve := run(s, v, cookieOctet)
		if v >= from && secretValue(s[v:ve]) {
			return found{Finding{v, ve, "cookie"}, context}, ve, true
		}
		p = ve
		if quoted && p < len(s) && s[p] == '"' {
			p++
		}
		if p == len(s) || s[p] != ';' {
			break
		}
		p = skipBlanks(s, p+1, 4)
	}
	return found{}, 0, false
}

// matchCurlCookies finds the session values of the cookies of a curl
// command's -b and --cookie (a file's name, which holds no =, is none),
// looked for along it (through backslash-continued lines).
func matchCurlCookies(s string, hit, from int) (found, int, bool) {
	p := hit + len("curl")
	if !boundaryBefore(s, hit) || p < len(s) && isAlnum(s[p]) {
		return found{}, 0, false
	}
	line := s[:commandEnd(s, p, min(len(s), p+maxLine))]
	for p < len(line) {
		i := strings.Index(line[p:], "-")
		if i < 0 {
			break
		}
		p += i
		if q, ok := cookieFlag(line, p); ok {
			if f, next, ok := curlCookies(line, q, from); ok {
				return f, next, true
			}
		}
		p = run(line, p, toolChars)
	}
	return found{}, 0, false
}

// cookieFlag returns where the value of curl's -b or --cookie at p
// starts, after a blank (or an =, for --cookie).
func cookieFlag(line string, p int) (int, bool) {
	if c := line[p-1]; c != ' ' && c != '\t' && c != '\n' {
		return 0, false
	}
	var q int
	switch {
	case strings.HasPrefix(line[p:], "--cookie"):
		q = p + len("--cookie")
		if q < len(line) && line[q] == '=' {
			return q + 1, true
		}
	case strings.HasPrefix(line[p:], "-b"):
		q = p + len("-b")
	default:
		return 0, false
	}
	if q == len(line) || line[q] != ' ' && line[q] != '\t' {
		return 0, false // --cookie-jar
	}
	return skipBlanks(line, q, 4), true
}

// curlCookies reads the cookies of a flag's value that starts at q:
// quoted, to its closing quote, or to the next whitespace.
func curlCookies(line string, q, from int) (found, int, bool) {
	end := q + run(line[q:], 0, cookieOctet)
	if n, quote := quoteAt(line, q); n > 0 {
		q += n
		end = len(line)
		if c, _ := closeQuote(line[q:min(len(line), q+maxCookies)], quote); c >= 0 {
			end = q + c
		}
	}
	if strings.IndexByte(line[q:end], '=') < 0 {
		return found{}, 0, false // -b cookies.txt
	}
	return cookieValues(line[:end], q, from)
}
