package render

import "strings"

// StripTags removes the elements claude-mem treats as never-to-be-stored
// from s and trims the result, as claude-mem's stripMemoryTags does
// (claude-mem.md §4.1): the same six tag names, case-sensitive, attributes
// allowed in the opening tag, an opening tag being "<name" followed by a
// character that cannot continue a word, then anything up to ">".
//
// It differs where claude-mem leaks private text:
//   - <private> elements nest: an inner <private> needs its own close
//     before the outer one can end;
//   - an unclosed <private> hides everything after it;
//   - <private> is removed before the other tags, so an element of another
//     tag that starts outside a private region and ends inside it cannot
//     carry the rest of the private region out.
//
// Unclosed tags other than <private> are kept, as claude-mem keeps them: they
// hide no secrets and may be the user's literal text.
func StripTags(s string) string {
	s = stripPrivate(s)
	s = stripElements(s, otherTags)
	return strings.TrimSpace(s)
}

const privateTag = "private"

// otherTags are the tags besides <private> that claude-mem strips: its own
// injected context and harness text that must not be stored or repeated.
var otherTags = []string{"claude-mem-context", "system_instruction", "system-instruction", "persisted-output", "system-reminder"}

// openingTag reports whether s[i:] starts an opening tag of name, and if so
// where it ends.
func openingTag(s string, i int, name string) (end int, ok bool) {
	if !strings.HasPrefix(s[i:], "<"+name) {
		return 0, false
	}
	j := i + 1 + len(name)
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

// nextOpening finds the first opening tag of name at or after i.
func nextOpening(s string, i int, name string) (start, end int, ok bool) {
	for {
		k := strings.Index(s[i:], "<"+name)
		if k < 0 {
			return 0, 0, false
		}
		start = i + k
		if end, ok = openingTag(s, start, name); ok {
			return start, end, true
		}
		i = start + 1
	}
}

// closeOf finds where the element of name whose opening tag ended at i is
// closed, counting nested elements of the same name. It returns the index
// just past the matching close tag, or false if the element never closes.
func closeOf(s string, i int, name string) (int, bool) {
	closeTag := "</" + name + ">"
	for depth := 1; ; {
		c := strings.Index(s[i:], closeTag)
		if c < 0 {
			return 0, false
		}
		c += i
		if o, oEnd, ok := nextOpening(s, i, name); ok && o < c {
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
func stripElements(s string, tags []string) string {
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
		for _, name := range tags {
			if unclosed[name] {
				continue
			}
			end, ok := openingTag(s, i, name)
			if !ok {
				continue
			}
			next, closed := closeOf(s, end, name)
			if !closed {
				if !strings.Contains(s[end:], "</"+name+">") {
					unclosed[name] = true
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
