package sources

import (
	"bytes"
	"fmt"
)

const (
	// keepString is the longest string value a compacted line keeps; a
	// longer one (a tool result, an inline image: what makes a line huge)
	// is replaced by a short note saying how long it was. No message a
	// person typed or the model wrote comes near it.
	keepString = 1 << 20
	// maxCompact bounds a compacted line. A line that is still longer
	// (millions of short values) is skipped and counted as malformed.
	maxCompact = 16 << 20
)

// compactor streams one JSON line of any length and keeps a copy of it in
// which every string longer than keepString is replaced by a note, so that
// a line of hundreds of megabytes is parsed in a few megabytes of memory.
// It follows strings and escapes across writes; it does not validate the
// rest, which the parser does on the compacted line.
type compactor struct {
	out      []byte
	inString bool
	escaped  bool  // the previous byte in the string was a backslash
	strStart int   // where the current string's content starts in out
	strLen   int64 // bytes of the current string's content (escaped)
	dropping bool  // the current string is too long: its bytes are not kept
	over     bool  // out passed maxCompact
}

func newCompactor() *compactor { return &compactor{} }

// write feeds the next bytes of the line (without its newline).
func (c *compactor) write(p []byte) {
	for len(p) > 0 {
		if !c.inString {
			i := bytes.IndexByte(p, '"')
			if i < 0 {
				c.keep(p)
				return
			}
			c.keep(p[:i+1])
			c.inString, c.escaped, c.strStart, c.strLen, c.dropping = true, false, len(c.out), 0, false
			p = p[i+1:]
			continue
		}
		// In a string: find its closing quote, minding escapes.
		end := c.closingQuote(p)
		body := p
		if end >= 0 {
			body = p[:end]
		}
		c.strLen += int64(len(body))
		if !c.dropping && c.strLen > keepString {
			c.dropping = true
			if !c.over {
				c.out = c.out[:c.strStart]
			}
		}
		if !c.dropping {
			c.keep(body)
		}
		if end < 0 {
			return
		}
		if c.dropping {
			c.keep(fmt.Appendf(nil, "[bottled: %.1f MB of text not kept]", float64(c.strLen)/(1<<20)))
		}
		c.keep([]byte{'"'})
		c.inString = false
		p = p[end+1:]
	}
}

// closingQuote returns the index in p of the quote that ends the current
// string, or -1 if it does not end in p (then c.escaped says whether p
// ended in the middle of an escape).
func (c *compactor) closingQuote(p []byte) int {
	for pos := 0; pos < len(p); {
		if c.escaped {
			c.escaped = false
			pos++
			continue
		}
		q := bytes.IndexByte(p[pos:], '"')
		if q < 0 {
			c.escaped = backslashesBefore(p, len(p), pos)%2 == 1
			return -1
		}
		if backslashesBefore(p, pos+q, pos)%2 == 1 {
			pos += q + 1 // an escaped quote
			continue
		}
		return pos + q
	}
	return -1
}

// backslashesBefore counts the backslashes just before p[i], not looking
// before p[from].
func backslashesBefore(p []byte, i, from int) int {
	n := 0
	for k := i - 1; k >= from && p[k] == '\\'; k-- {
		n++
	}
	return n
}

func (c *compactor) keep(p []byte) {
	if c.over {
		return
	}
	if len(c.out)+len(p) > maxCompact {
		c.over, c.out = true, nil
		return
	}
	c.out = append(c.out, p...)
}

// line returns the compacted line, and false if it could not be kept.
func (c *compactor) line() ([]byte, bool) {
	return c.out, !c.over
}
