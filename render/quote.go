package render

import (
	"strings"
	"unicode"
)

// Verbatim text can hold lines that look like the bottle's own structure:
// a pasted log with a "---" line or a "**User**" line would read as a turn
// boundary or a speaker, and a model (or a program) reading the bottle
// would take a quote for something said. Inside verbatim text such lines
// are escaped with a backslash at the start of the line; see the package
// documentation for the exact rule.

// structuralLine reports whether a line, read leniently (leading
// whitespace, Unicode's included, and backslashes ignored), looks like one
// of the lines the bottle's structure is made of.
func structuralLine(line string) bool {
	t := strings.TrimLeftFunc(line, func(r rune) bool { return r == '\\' || unicode.IsSpace(r) })
	if t == "" {
		return false
	}
	for _, p := range structuralPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return thematicBreak(t)
}

// thematicBreak reports whether t is a markdown thematic break (the
// bottle's "---" rule and its variants): three or more of the same '-',
// '*' or '_', with nothing but whitespace between.
func thematicBreak(t string) bool {
	var mark rune
	n := 0
	for _, c := range t {
		switch {
		case unicode.IsSpace(c):
		case c == '-' || c == '*' || c == '_':
			if mark != 0 && c != mark {
				return false
			}
			mark = c
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// verbatim escapes the lines of verbatim text that look like the bottle's
// structure by putting a backslash in front of them. Lines keep their
// count, so line numbers into the bottle stay right.
func verbatim(s string) string {
	if !strings.ContainsAny(s, "#<-*_>") {
		return s // nothing structural can be in it
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if structuralLine(line) {
			b.WriteByte('\\')
		}
		b.WriteString(line)
	}
	return b.String()
}

// Unquote undoes verbatim on a block's text as read from a bottle: a line
// that starts with a backslash and looks like structure loses its first
// character. Readers that show a message (the web view, an export) use it
// to show what was said.
func Unquote(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if strings.HasPrefix(line, "\\") && structuralLine(line) {
			line = line[1:]
		}
		b.WriteString(line)
	}
	return b.String()
}
