package sources

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a small JSON reader over one transcript line. It decodes only
// what the spine needs and skips everything else without allocating:
// nearly all of a transcript's bytes are tool inputs, tool results and
// thinking, which a bottle never shows, and skipping a string costs one
// bytes.IndexByte per quote.
//
// Errors are sticky: after the first syntax error every method is a no-op
// and ok reports false, so callers read a whole record and check once.
type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) ok() bool { return !s.bad }

func (s *scanner) fail() { s.bad = true; s.i = len(s.b) }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end of input.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// object calls field for every member of the object at the cursor, at the
// start of the member's value; a value field leaves is skipped.
func (s *scanner) object(field func(key []byte)) { s.list('{', '}', field) }

// objectOrSkip is object for a value that may be of another type, which
// it skips (transcripts are tolerated, not validated); it reports whether
// the value was an object.
func (s *scanner) objectOrSkip(field func(key []byte)) bool {
	if s.peek() != '{' {
		s.skip()
		return false
	}
	s.object(field)
	return true
}

// member reads, with read, the member name of the object at the cursor,
// skipping its other members (and a value of another type); it reports
// whether the value was an object.
func (s *scanner) member(name string, read func()) bool {
	return s.objectOrSkip(func(k []byte) {
		if string(k) == name {
			read()
		}
	})
}

// array calls elem for every element of the array at the cursor; an
// element elem leaves is skipped.
func (s *scanner) array(elem func()) { s.list('[', ']', func([]byte) { elem() }) }

// list reads the object ('{', '}') or array ('[', ']') at the cursor,
// calling item at the start of each member's value (with the member's
// key) or element (with a nil key), the white space before it consumed.
// A value item did not consume is skipped, so that an item may peek at a
// value of a type it has no use for and leave it.
func (s *scanner) list(open, close byte, item func(key []byte)) {
	if s.peek() != open {
		s.fail()
		return
	}
	s.i++
	if s.peek() == close {
		s.i++
		return
	}
	for !s.bad {
		var key []byte
		if open == '{' {
			if s.peek() != '"' {
				s.fail()
				return
			}
			key = s.rawString()
			if s.peek() != ':' {
				s.fail()
				return
			}
			s.i++
		}
		s.ws()
		start := s.i
		item(key)
		if s.i == start && !s.bad {
			s.skip()
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return
		default:
			s.fail()
			return
		}
	}
}

// rawString returns the bytes between the quotes of the string at the
// cursor, escapes undecoded. The result aliases the line.
func (s *scanner) rawString() []byte {
	if s.peek() != '"' {
		s.fail()
		return nil
	}
	s.i++
	start := s.i
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			s.fail()
			return nil
		}
		end := s.i + j
		// The quote is escaped if an odd number of backslashes precede it.
		n := 0
		for k := end - 1; k >= start && s.b[k] == '\\'; k-- {
			n++
		}
		s.i = end + 1
		if n%2 == 0 {
			return s.b[start:end]
		}
	}
}

// str decodes the string at the cursor. A value of another type is skipped
// and reported as "" (transcripts are tolerated, not validated).
func (s *scanner) str() string {
	if s.peek() != '"' {
		s.skip()
		return ""
	}
	return unescape(s.rawString())
}

// bytesVal decodes the string at the cursor into bytes that alias the line
// when the string has no escapes (ids and timestamps never do). A value of
// another type is skipped and reads as nil.
func (s *scanner) bytesVal() []byte {
	if s.peek() != '"' {
		s.skip()
		return nil
	}
	raw := s.rawString()
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	return []byte(unescape(raw))
}

// known decodes a string that is usually one of vals, returning the
// constant (no allocation) when it is.
func (s *scanner) known(vals ...string) string {
	b := s.bytesVal()
	for _, v := range vals {
		if string(b) == v {
			return v
		}
	}
	return string(b)
}

// boolean decodes true/false; any other value is skipped and reads as false.
func (s *scanner) boolean() bool {
	if s.peek() == 't' && bytes.HasPrefix(s.b[s.i:], []byte("true")) {
		s.i += 4
		return true
	}
	s.skip()
	return false
}

// int decodes an integer; any other value is skipped and reads as -1.
func (s *scanner) int() int {
	s.ws()
	start := s.i
	s.skip()
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil {
		return -1
	}
	return n
}

// skip consumes one value of any type, checking its structure.
func (s *scanner) skip() {
	switch s.peek() {
	case '"':
		s.rawString()
	case '{':
		s.list('{', '}', func([]byte) { s.skip() })
	case '[':
		s.list('[', ']', func([]byte) { s.skip() })
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		s.number()
	default:
		s.fail()
	}
}

func (s *scanner) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.fail()
		return
	}
	s.i += len(lit)
}

func (s *scanner) number() {
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
		default:
			if s.i == start {
				s.fail()
			}
			return
		}
	}
}

// unescape decodes the body of a JSON string. Invalid escapes are kept as
// written; lone surrogates become U+FFFD. Invalid UTF-8 is left for the
// renderer to replace.
func unescape(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'u':
			r, n := decodeU(raw[i+1:])
			if n == 0 {
				out = append(out, '\\', 'u')
				continue
			}
			out = utf8.AppendRune(out, r)
			i += n
		default:
			out = append(out, '\\', raw[i])
		}
	}
	return string(out)
}

// decodeU decodes the hex digits after `\u`, joining a surrogate pair when
// one follows. It returns the rune and the number of bytes consumed after
// the `u`, or 0 if the escape is malformed.
func decodeU(b []byte) (rune, int) {
	r1, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r1) && len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
		if r2, ok := hex4(b[6:]); ok {
			if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
				return r, 10
			}
		}
	}
	if utf16.IsSurrogate(r1) {
		return utf8.RuneError, 4
	}
	return r1, 4
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
