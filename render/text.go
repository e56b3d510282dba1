package render

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/textcut"
)

// clean makes source text safe to put in a markdown file: invalid UTF-8
// becomes U+FFFD, NUL bytes are dropped, and a carriage return ends a line
// the way a newline does ("\r\n" and a lone "\r" become "\n"), so that
// every reader counts the bottle's lines alike. Everything else is
// verbatim.
func clean(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// shown prepares a source string for the bottle: cleaned, through the tag
// stripper, then through redaction by rules (nil: the built-in rules).
// Every string a bottle shows goes through here, before anything clips it
// or puts it on one line, so that a credential is never cut below the
// length that identifies it.
//
// Redaction runs after the stripper, which can join a credential that a
// removed element split; when the stripper removed an element, it runs
// before it too, because removing one can also join a credential to the
// word before or after it ("0<system-reminder>…</system-reminder>npm_…"),
// and a token touching a letter or digit is not taken for one. For the
// same reason it runs before clean on a string with a NUL byte, which
// clean drops. (A credential both split by a removed element and joined
// to a word by another removal is not found: each removal would have to
// be tried both ways.)
func shown(rules *redact.Rules, s string) string { return shownFrom(rules, s, false) }

// storedShown is shown for text claude-mem stored, through StripStored's
// rule: what comes before a stray close tag is hidden. A credential that
// the cut would split (a match of a user's pattern or a private key block
// around the close tag) is hidden with what comes before it, so that its
// tail is not left for redaction to miss.
func storedShown(rules *redact.Rules, s string) string { return shownFrom(rules, s, true) }

func shownFrom(rules *redact.Rules, s string, stored bool) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = redactBetweenTags(rules, s)
	}
	c := clean(s)
	st, ok := stripFixed(c)
	if len(st) != len(strings.TrimSpace(c)) {
		st, ok = stripFixed(redactBetweenTags(rules, c))
	}
	if stored {
		if !ok {
			return ""
		}
		st = afterStrayClose(rules, st)
	}
	return rules.Redact(st)
}

// afterStrayClose is what StripStored keeps of st, a stripped text, with
// the cut moved past a credential that it would split.
func afterStrayClose(rules *redact.Rules, st string) string {
	p := strayCloseEnd(st)
	if p == 0 {
		return st
	}
	for _, f := range rules.Find(st) {
		if f.Start < p && p < f.End {
			p = f.End
		}
	}
	return strings.TrimSpace(st[p:])
}

// redactBetweenTags is rules.Redact for the passes before the stripper,
// leaving alone a span that holds a '<' or '>': replacing it could take
// away one tag of an element and let out what the element hides (a
// private key's BEGIN line before a <private> tag, its END line inside
// the element). The pass after the stripper still sees such a span.
func redactBetweenTags(rules *redact.Rules, s string) string {
	var b strings.Builder
	last := 0
	for _, f := range rules.Find(s) {
		if strings.ContainsAny(s[f.Start:f.End], "<>") {
			continue
		}
		b.WriteString(s[last:f.Start])
		b.WriteString(redact.Placeholder(f.Kind))
		last = f.End
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// text is shown with the rules of the bottle being rendered.
func (r *renderer) text(s string) string { return shown(r.in.Rules, s) }

// storedText is storedShown with the rules of the bottle being rendered:
// for every string read from claude-mem's database.
func (r *renderer) storedText(s string) string { return storedShown(r.in.Rules, s) }

// stripped is a source string cleaned and through the tag stripper, not
// redacted: for tests of a string that the bottle does not show (is there
// anything to show, do two messages say the same).
func stripped(s string) string { return StripTags(clean(s)) }

// storedStripped is stripped for text claude-mem stored.
func storedStripped(s string) string { return StripStored(clean(s)) }

// oneLine collapses all whitespace runs (newlines included) to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n runes, ending it with "…" if cut, never
// inside a character (a grapheme cluster): the bound stays in runes, as
// the bottle's lines always were, so that only cuts that split a
// character move. A cut that would fall inside a placeholder falls
// before it, so that no half of one is shown.
func clip(s string, n int) string {
	c := textcut.Clip(s, n, textcut.Runes)
	if c == s {
		return s
	}
	i := len(c) - len(textcut.Ellipsis)
	if start, ok := placeholderAround(s, i); ok {
		return strings.TrimRightFunc(s[:start], unicode.IsSpace) + textcut.Ellipsis
	}
	return c
}

// placeholderAround returns where the placeholder starts that a cut of s
// at i would split, if one would.
func placeholderAround(s string, i int) (start int, ok bool) {
	const open = "[redacted: "
	start = strings.LastIndex(s[:min(len(s), i+len(open)-1)], open)
	if start < 0 || start >= i {
		return 0, false
	}
	e := strings.IndexByte(s[start:], ']')
	if e < 0 || start+e+1 <= i {
		return 0, false
	}
	return start, true
}

// firstWords is the start of s on one line, at most n runes. Only the
// start of s is looked at: messages can be megabytes.
func firstWords(s string, n int) string {
	if limit := 4*n + 64; len(s) > limit {
		s = textcut.Head(s, limit, textcut.Bytes)
	}
	return clip(oneLine(s), n)
}

// clauseMax bounds an observation line's clause; narratives are paragraphs.
const clauseMax = 160

// firstClause returns the first clause of a narrative: up to the first
// sentence end, semicolon or dash, on one line and clipped.
func firstClause(s string) string {
	s = oneLine(s)
	cut := len(s)
	for _, sep := range []string{". ", "! ", "? ", "; ", " — ", " – "} {
		if i := strings.Index(s, sep); i >= 0 && i < cut {
			cut = i
			if sep[0] != ' ' && sep[0] != ';' {
				cut++ // keep the sentence's own mark
			}
		}
	}
	c := strings.TrimSpace(s[:cut])
	c = strings.TrimSuffix(c, ".")
	return clip(c, clauseMax)
}
