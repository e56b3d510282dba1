package render

import "strings"

// StripTags removes the elements claude-mem treats as never-to-be-stored
// from s and trims the result, as claude-mem's stripMemoryTags does
// (claude-mem.md §4.1): the same six tag names, attributes allowed in the
// opening tag, an opening tag being "<name" followed by a character that
// cannot continue a word, then anything up to ">".
//
// It differs where claude-mem leaks private text:
//   - <private> elements nest: an inner <private> needs its own close
//     before the outer one can end;
//   - an unclosed <private> hides everything after it;
//   - <private> is removed before the other tags, so an element of another
//     tag that starts outside a private region and ends inside it cannot
//     carry the rest of the private region out;
//   - the private tag's name is matched in any case (<PRIVATE>,
//     <Private>…), since a user who types it means it; the other five,
//     which programs write, are matched exactly;
//   - removing an element cannot leave a new one behind
//     ("<priv<system-reminder>x</system-reminder>ate>"): stripping goes on
//     until nothing more is removed, so that StripTags(StripTags(s)) ==
//     StripTags(s).
//
// Unclosed tags other than <private> are kept, as claude-mem keeps them: they
// hide no secrets and may be the user's literal text.
func StripTags(s string) string {
	out, _ := stripFixed(s)
	return out
}

// maxStripPasses bounds the passes of stripFixed, so that the work stays a
// few times the text's length. A text needs a second pass only when the
// first removed an element, and a third only when removals in the first
// made a new element out of the text around them, which only a text made
// to do so does (none of the real transcripts needs it); each further
// pass undoes one more level of such a construction.
const maxStripPasses = 8

// stripFixed strips s until a pass removes nothing. A text that still
// changes after maxStripPasses is cut before the first "<name" or
// "</name" of a stripped tag: what is left has no tag to strip, and what
// the passes would still have removed all lies after the cut. ok is false
// when the text was cut so.
func stripFixed(s string) (out string, ok bool) {
	for range maxStripPasses {
		next := stripElements(stripPrivate(s), otherTags)
		if len(next) == len(s) { // nothing removed: trimming makes no tag
			return strings.TrimSpace(s), true
		}
		s = strings.TrimSpace(next)
	}
	if next := stripElements(stripPrivate(s), otherTags); len(next) == len(s) {
		return s, true
	}
	return strings.TrimSpace(s[:firstTagName(s)]), false
}

// firstTagName is the index of the first opening or close of a stripped
// tag's name in s ("<name" or "</name", complete or not), or len(s).
func firstTagName(s string) int {
	first := len(s)
	for _, t := range allTags {
		for _, lit := range []string{"<" + t.name, "</" + t.name} {
			if i := indexTag(s[:first], lit, t.fold); i >= 0 {
				first = i
			}
		}
	}
	return first
}

// tagName is a tag the stripper removes: fold says its name is matched in
// any case.
type tagName struct {
	name string
	fold bool
}

var privateTag = tagName{"private", true}

// otherTags are the tags besides <private> that claude-mem strips: its own
// injected context and harness text that must not be stored or repeated.
var otherTags = []tagName{{"claude-mem-context", false}, {"system_instruction", false},
	{"system-instruction", false}, {"persisted-output", false}, {"system-reminder", false}}

var allTags = append([]tagName{privateTag}, otherTags...)

// hasTagAt reports whether s[i:] starts with lit (in any ASCII case if
// fold).
func hasTagAt(s string, i int, lit string, fold bool) bool {
	if fold {
		return len(s)-i >= len(lit) && strings.EqualFold(s[i:i+len(lit)], lit)
	}
	return strings.HasPrefix(s[i:], lit)
}

// indexTag is strings.Index(s, lit), in any ASCII case if fold; lit starts
// with '<'.
func indexTag(s, lit string, fold bool) int {
	if !fold {
		return strings.Index(s, lit)
	}
	for i := 0; ; {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			return -1
		}
		if i += k; hasTagAt(s, i, lit, true) {
			return i
		}
		i++
	}
}

func (t tagName) closeTag() string { return "</" + t.name + ">" }

// openingTag reports whether s[i:] starts an opening tag of t, and if so
// where it ends.
func openingTag(s string, i int, t tagName) (end int, ok bool) {
	if !hasTagAt(s, i, "<"+t.name, t.fold) {
		return 0, false
	}
	j := i + 1 + len(t.name)
	if j < len(s) && isWordByte(s[j]) {
		return 0, false // <privatefoo> is another tag
	}
	k := strings.IndexByte(s[j:], '>')
	if k < 0 {
		return 0, false
	}
	return j + k + 1, true
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// nextOpening finds the first opening tag of t at or after i.
func nextOpening(s string, i int, t tagName) (start, end int, ok bool) {
	for {
		k := indexTag(s[i:], "<"+t.name, t.fold)
		if k < 0 {
			return 0, 0, false
		}
		start = i + k
		if end, ok = openingTag(s, start, t); ok {
			return start, end, true
		}
		i = start + 1
	}
}

// closeOf finds where the element of t whose opening tag ended at i is
// closed, counting nested elements of the same name. It returns the index
// just past the matching close tag, or false if the element never closes.
func closeOf(s string, i int, t tagName) (int, bool) {
	closeTag := t.closeTag()
	for depth := 1; ; {
		c := indexTag(s[i:], closeTag, t.fold)
		if c < 0 {
			return 0, false
		}
		c += i
		if o, oEnd, ok := nextOpening(s, i, t); ok && o < c {
			depth++
			i = oEnd
			continue
		}
		depth--
		i = c + len(closeTag)
		if depth == 0 {
			return i, true
		}
	}
}

// stripPrivate removes <private> elements; an unclosed one removes the rest
// of s.
func stripPrivate(s string) string {
	var b strings.Builder
	i := 0
	for {
		start, end, ok := nextOpening(s, i, privateTag)
		if !ok {
			if i == 0 {
				return s
			}
			b.WriteString(s[i:])
			return b.String()
		}
		b.WriteString(s[i:start])
		next, closed := closeOf(s, end, privateTag)
		if !closed {
			return b.String()
		}
		i = next
	}
}

// stripElements removes elements of the given tags, leftmost first. An
// opening tag without a close is left as text.
func stripElements(s string, tags []tagName) string {
	var b strings.Builder
	unclosed := map[string]bool{} // no close tag exists past this point
	written := 0
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			break
		}
		i += k
		removed := false
		for _, t := range tags {
			if unclosed[t.name] {
				continue
			}
			end, ok := openingTag(s, i, t)
			if !ok {
				continue
			}
			next, closed := closeOf(s, end, t)
			if !closed {
				if indexTag(s[end:], t.closeTag(), t.fold) < 0 {
					unclosed[t.name] = true
				}
				continue
			}
			b.WriteString(s[written:i])
			written, i, removed = next, next, true
			break
		}
		if !removed {
			i++
		}
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// StripStored is StripTags for text claude-mem stored (prompts,
// observations, summaries: everything from its database), which its own
// stripper may have cut early: its element ends at the first close tag of
// the name it opened with, so the tail of a nested <private>, or of a
// <private> that another tag's element crossed, is stored after the cut
// with the close tag that ended it ("a  LEAK</private> b"). A close tag of
// a stripped name with no opening before it is the sign of that cut, and
// everything up to and including it may be private: it is hidden, from the
// start of the text. A text cut before the first tag name by stripFixed
// is hidden whole, since a close tag may have been among what was cut.
func StripStored(s string) string {
	out, ok := stripFixed(s)
	if !ok {
		return ""
	}
	return strings.TrimSpace(out[strayCloseEnd(out):])
}

// strayCloseEnd is the index just past the last close tag of a stripped
// name in s, a text that stripping leaves as it is (so every such close
// tag in it has no opening before it), or 0 if it has none.
func strayCloseEnd(s string) int {
	for i := len(s); ; {
		k := strings.LastIndex(s[:i], "</")
		if k < 0 {
			return 0
		}
		for _, t := range allTags {
			if hasTagAt(s, k, t.closeTag(), t.fold) {
				return k + len(t.closeTag())
			}
		}
		i = k
	}
}
