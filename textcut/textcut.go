// Package textcut owns shortening text for display: a start, an end, or a
// window around a match, at most so many bytes, code points, terminal
// columns, characters or UTF-16 units, cut only between grapheme clusters (UAX #29),
// the characters a reader sees. A cut by code point or byte splits a
// family emoji at a zero-width joiner, leaves a skin tone or a combining
// accent alone, halves a flag, parts a Hangul syllable's jamo or drops a
// Thai tone mark or a Devanagari vowel sign, which changes the word.
// The cluster rules are uniseg's; this package only measures and cuts.
package textcut

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Unit is what a length counts.
type Unit int

const (
	Bytes     Unit = iota // UTF-8 bytes: a hard bound on size
	Runes                 // code points: what the bottle's format bounds its lines by
	Columns               // terminal columns: two for East Asian wide characters and emoji
	Graphemes             // grapheme clusters: characters as a reader counts them
	UTF16                 // UTF-16 code units: what JavaScript's length counts, and claude-mem's cap
)

// Ellipsis marks the side of a text that was cut.
const Ellipsis = "…"

// ellipsisLens holds Ellipsis's length in each unit. Every cut asks for
// it, and measuring it anew asked uniseg each time: most of what clipping
// ASCII text cost.
var ellipsisLens = func() (n [UTF16 + 1]int) {
	for u := range n {
		n[u] = Len(Ellipsis, Unit(u))
	}
	return n
}()

func ellipsisLen(u Unit) int {
	if u >= 0 && int(u) < len(ellipsisLens) {
		return ellipsisLens[u]
	}
	return Len(Ellipsis, u)
}

func (u Unit) String() string {
	switch u {
	case Bytes:
		return "bytes"
	case Runes:
		return "runes"
	case Columns:
		return "columns"
	case Graphemes:
		return "graphemes"
	case UTF16:
		return "UTF-16 units"
	}
	return "unit?"
}

// clusters yields the size in bytes and the length in u of each grapheme
// cluster of s, from its start.
func clusters(s string, u Unit) iter.Seq2[int, int] {
	return func(yield func(size, length int) bool) {
		state := -1
		for i := 0; i < len(s); {
			if c := s[i]; asciiAlone(s, i) {
				if !yield(1, asciiLength(c, u)) {
					return
				}
				i, state = i+1, -1
				continue
			}
			var cluster string
			var width int
			cluster, _, width, state = uniseg.FirstGraphemeClusterInString(s[i:], state)
			if !yield(len(cluster), clusterLength(cluster, width, u)) {
				return
			}
			i += len(cluster)
		}
	}
}

// asciiAlone reports whether s[i] is an ASCII character in a cluster of
// its own: two ASCII bytes always have a boundary between them, but for
// CR LF, so most text needs no look-up.
func asciiAlone(s string, i int) bool {
	c := s[i]
	return c < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf && (c != '\r' || s[i+1] != '\n'))
}

// asciiLength is the length in u of an ASCII character alone in its
// cluster: uniseg gives control characters no column.
func asciiLength(c byte, u Unit) int {
	if u == Columns && (c < ' ' || c == 0x7f) {
		return 0
	}
	return 1
}

func clusterLength(cluster string, width int, u Unit) int {
	switch u {
	case Bytes:
		return len(cluster)
	case Runes:
		return utf8.RuneCountInString(cluster)
	case Columns:
		return width
	case UTF16:
		n := 0
		for _, r := range cluster {
			n += utf16.RuneLen(r)
		}
		return n
	}
	return 1
}

// Len is the length of s in u.
func Len(s string, u Unit) int {
	n := asciiRun(s, len(s))
	for _, length := range clusters(s[n:], u) {
		n += length
	}
	return n
}

// asciiRun is how many of the first bytes of s, at most limit, are each a
// printable ASCII character in a cluster of its own: one long in every
// unit. Most text is, and is measured so without the cluster iterator,
// which costs several times as much a byte. The run ends before a byte
// the next may join (a combining mark after a letter).
func asciiRun(s string, limit int) int {
	limit = min(limit, len(s))
	i := 0
	for i < limit && ' ' <= s[i] && s[i] < 0x7f && asciiAlone(s, i) {
		i++
	}
	return i
}

// Width is how many terminal columns s takes.
func Width(s string) int { return Len(s, Columns) }

// Head is the longest start of s that is at most n long in u and ends
// between two clusters. It reads only as much of s as it keeps.
func Head(s string, n int, u Unit) string {
	end, _ := head(s, n, n, u)
	return s[:end]
}

// head returns the end of the longest start of s at most n long, and
// whether all of s is at most whole long (n ≤ whole). It stops reading s
// past whole.
func head(s string, n, whole int, u Unit) (end int, fits bool) {
	at := asciiRun(s, whole)
	end, used := min(at, max(n, 0)), at
	for size, length := range clusters(s[at:], u) {
		if used+length > whole {
			return end, false
		}
		at, used = at+size, used+length
		if used <= n {
			end = at
		}
	}
	return end, true
}

// Tail is the longest end of s that is at most n long in u and starts
// between two clusters. It reads all of s.
func Tail(s string, n int, u Unit) string {
	start, left := 0, Len(s, u)
	for size, length := range clusters(s, u) {
		if left <= n {
			break
		}
		start, left = start+size, left-length
	}
	if left > n {
		return ""
	}
	return s[start:]
}

// Clip is s if it is at most n long in u, else its start ended with an
// Ellipsis, the two at most n long (Head when n leaves no room for the
// Ellipsis); the white space before the Ellipsis is dropped. It reads
// only as much of s as it keeps.
func Clip(s string, n int, u Unit) string {
	if n < ellipsisLen(u) {
		return Head(s, n, u) // no room for the ellipsis
	}
	end, fits := head(s, n-ellipsisLen(u), n, u)
	if fits {
		return s
	}
	return strings.TrimRightFunc(s[:end], unicode.IsSpace) + Ellipsis
}

// ClipStart is s if it is at most n long in u, else its end started with
// an Ellipsis, the two at most n long; the white space after the Ellipsis
// is dropped.
func ClipStart(s string, n int, u Unit) string {
	if Len(s, u) <= n {
		return s
	}
	if n < ellipsisLen(u) {
		return Tail(s, n, u) // no room for the ellipsis
	}
	return Ellipsis + strings.TrimLeftFunc(Tail(s, n-ellipsisLen(u), u), unicode.IsSpace)
}

// WholeWords is s, the start of a longer text, ended with an Ellipsis
// after its last whole word: when split (the text went on without a blank
// after s), the word the cut split is dropped, and with it the blanks
// before. A cut whose text goes on elsewhere unseen (a field capped in a
// database) must not show the head of a word: it may be a credential's,
// which no redaction rule knows without its tail.
func WholeWords(s string, split bool) string {
	if split {
		s = strings.TrimRightFunc(s, func(r rune) bool { return !unicode.IsSpace(r) })
	}
	return strings.TrimRightFunc(s, unicode.IsSpace) + Ellipsis
}

// Window is s if it is at most n long in u, else the part of it around
// s[start:end] (a match) that is at most n long, the match in its middle
// as far as the text on either side allows, with an Ellipsis on each side
// cut. A match too long for n is kept from its start. start and end are
// moved out to the clusters they fall in.
func Window(s string, start, end, n int, u Unit) string {
	if Len(s, u) <= n {
		return s
	}
	start, end = around(s, start, end)
	before, match, after := s[:start], s[start:end], s[end:]
	room := n - Len(match, u) // for both sides, their Ellipses included
	if room < 2*ellipsisLen(u) {
		lead := ""
		if before != "" && n >= 2*ellipsisLen(u)+1 {
			lead = Ellipsis // else its room goes to the match
		}
		return lead + Clip(match+after, n-Len(lead, u), u)
	}
	half := room / 2
	switch lb, la := Len(before, u), Len(after, u); {
	case lb <= half:
		return before + match + Clip(after, room-lb, u)
	case la <= room-half:
		return ClipStart(before, room-la, u) + match + after
	}
	lead := ClipStart(before, half, u) // wide characters can leave a column of half
	return lead + match + Clip(after, room-Len(lead, u), u)
}

// around moves start back and end on to the boundaries of the clusters of
// s they fall in, within s.
func around(s string, start, end int) (int, int) {
	start = min(max(start, 0), len(s))
	end = min(max(end, start), len(s))
	at := 0
	from, to := 0, len(s)
	for size := range clusters(s, Bytes) {
		if at <= start {
			from = at
		}
		if at >= end {
			to = at
			break
		}
		at += size
	}
	return from, to
}
