package render

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/redact"
)

// Resealing. A bottle made by other redaction rules is rendered again
// from its sources (bottles.WhyRules), but some bottles cannot be: an archived
// one (its session was cleared; it is the record of what it was) and a
// live one whose transcript is gone, which claude-mem's rows alone would
// only make a reconstructed bottle of (one that a full bottle never gives
// way to) or none. Such a bottle is redacted as it is (Reseal), and the
// bottle store writes it in place.
// (What an older bottle's outline clipped below the length that tells a
// credential stays; the messages themselves are whole.)
//
// The tag stripper changed too (the rules of version 1 stripped <private>
// in lower case only, so an older bottle may hold <PRIVATE>…</PRIVATE>),
// and its changes ride on redact.Version rather than a version of their
// own in the state line: a change to either calls for the same work
// (render again, or reseal, and purge the index of what the bottle held),
// and a bottle records one id that says what was hidden from it, so that
// every reader of that id (the freshness judge, status, the index) asks
// one question. Resealing strips with today's stripper whatever the rules
// id says, which costs nothing when only the user's patterns changed:
// text today's stripper made is left as it is by it. The price is that a
// change to the stripper must raise redact.Version.

// Reseal redacts the bottle data with rules, and strips its texts with
// today's tag stripper (see stripAsToday), keeping its lines: a span
// that held newlines (a private key block, a <private> element) is
// replaced by its placeholder (or by nothing) and as many newlines, so
// that the outline's and the legs' line numbers stay right. The state
// line records rules, its task is stripped and redacted and the names of
// what was unknown are redacted too (the names brought under today's
// rules first: see sources.Unknown.Renamed), and its byte count is made
// right again. A bottle already made by rules is returned as it is.
func Reseal(data []byte, rules *redact.Rules) ([]byte, *State, error) {
	st, err := StateOf(data)
	if err != nil {
		return nil, nil, err
	}
	if st.Redact == rules.ID() {
		return data, st, nil
	}
	lines := bytes.SplitN(stripAsToday(rules, data, st), []byte("\n"), stateLineN+1)
	if len(lines) <= stateLineN {
		return nil, nil, fmt.Errorf("%w: nothing after the state line", ErrNoState)
	}
	head := redactKeepingLines(rules, string(bytes.Join(lines[:stateLineN-1], []byte("\n"))), false)
	body := redactKeepingLines(rules, string(lines[stateLineN]), false)
	st.Redact, st.Task = rules.ID(), rules.Redact(stripOneLine(st.Task, st.Mode == ModeReconstructed))
	if st.Unknown != nil {
		st.Unknown = st.Unknown.Renamed(rules.Redact)
	}
	out, err := st.withStateLine([]byte(head+"\n"), []byte(body))
	if err != nil {
		return nil, nil, fmt.Errorf("reseal %s: %w", st.Session, err)
	}
	return out, st, nil
}

// redactKeepingLines is rules.Redact that keeps the newlines of each span
// it replaces, after the placeholder; redactBetweenTags's, if betweenTags.
func redactKeepingLines(rules *redact.Rules, s string, betweenTags bool) string {
	fs := rules.Find(s)
	if fs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range fs {
		if betweenTags && strings.ContainsAny(s[f.Start:f.End], "<>") {
			continue
		}
		b.WriteString(s[last:f.Start])
		b.WriteString(redact.Placeholder(f.Kind))
		b.WriteString(strings.Repeat("\n", strings.Count(s[f.Start:f.End], "\n")))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// stripAsToday is data, a bottle of state st, with today's tag stripper
// applied to each text it shows as the renderer applies it to the string
// the text came from: each message, observation, deed and summary field
// (Parse's blocks), the original request, each outline label, the
// project. An unclosed <private> hides the rest of its text only, and
// every text keeps its lines, so that the bottle's structure (headings,
// outline, legs, state line) stays as it is. A bottle whose body does not
// parse is stripped line by line. Text the stripper leaves as it is keeps
// its bytes.
func stripAsToday(rules *redact.Rules, data []byte, st *State) []byte {
	var out []byte
	last := 0
	for _, r := range textRegions(data, st) {
		s := string(data[r.start:r.end])
		t := stripRegion(rules, s, r)
		if t == s {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data))
		}
		out = append(append(out, data[last:r.start]...), t...)
		last = r.end
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// region is a span of a bottle's bytes that shows one source string, as
// the renderer laid it out.
type region struct {
	start, end int
	form       textForm
	// stored: the string is from claude-mem's database (StripStored's rule).
	stored bool
}

// textForm is how a region's text is laid out.
type textForm uint8

const (
	plainText    textForm = iota // as shown: the project, a list item's text
	labelText                    // an outline item's label: "—" if nothing is left
	verbatimText                 // quoted by verbatim (a message, the original request)
	summaryText                  // a summary's fields: "> **Name:** " then "> " lines
)

// textRegions lists the regions of data that show source strings, in the
// order they come.
func textRegions(data []byte, st *State) []region {
	stored := st.Mode == ModeReconstructed
	p, err := Parse(data, time.UTC)
	if err != nil {
		return lineRegions(data, stored)
	}
	rs := headerRegions(data, p)
	for _, b := range p.Blocks {
		r := region{start: b.Text, end: b.End, form: verbatimText, stored: stored}
		switch b.Kind {
		case BlockObservation:
			r.form, r.stored = plainText, true
		case BlockDeed:
			r.form = plainText
		case BlockSummary:
			r.form, r.stored = summaryText, true
		}
		if r.start < r.end {
			rs = append(rs, r)
		}
	}
	return rs
}

// headerRegions lists the regions of the header, the part of data before
// the body (parsed as p): the project, the outline's labels and the
// original request.
func headerRegions(data []byte, p *Parsed) []region {
	st, stored := p.State, p.State.Mode == ModeReconstructed
	var rs []region
	lines := newLineReader(data)
	for lines.next() && lines.n < st.Legs[0] {
		line := lines.bytes()
		switch n := lines.n; {
		case n == 2:
			if rest, ok := bytes.CutPrefix(line, []byte("project: ")); ok {
				if i := bytes.LastIndex(rest, []byte(" · started: ")); i >= 0 {
					start := lines.end - len(rest)
					rs = append(rs, region{start: start, end: start + i, stored: stored})
				}
			}
		case n >= st.Outline[0] && n <= st.Outline[1] && n > stateLineN:
			rs = append(rs, region{start: lines.end - len(itemLabel(line)), end: lines.end, form: labelText, stored: stored})
		case string(line) == originalHeading:
			end := p.BodyStart
			if end == 0 {
				end = len(data)
			}
			return append(rs, region{start: lines.nextStart, end: end, form: verbatimText, stored: stored})
		}
	}
	return rs
}

// itemLabel is the label of an outline item, after its "- ", the line
// it points at and its time (see assemble).
func itemLabel(item []byte) []byte {
	rest, _ := bytes.CutPrefix(item, []byte("- "))
	if after, ok := bytes.CutPrefix(rest, []byte("line ")); ok {
		if num, label, ok := bytes.Cut(after, []byte(" · ")); ok && len(num) > 0 {
			if _, ok := digits(string(num)); ok {
				rest = label
			}
		}
	}
	if clock, label, ok := bytes.Cut(rest, []byte(" · ")); ok && isClock(string(clock)) {
		rest = label
	}
	return rest
}

// lineRegions is each line after the state line as a region of its own.
func lineRegions(data []byte, stored bool) []region {
	var rs []region
	lines := newLineReader(data)
	for lines.next() {
		if lines.n > stateLineN && lines.start < lines.end {
			rs = append(rs, region{start: lines.start, end: lines.end, form: verbatimText, stored: stored})
		}
	}
	return rs
}

// stripRegion is s, the text of region r, through today's stripper.
func stripRegion(rules *redact.Rules, s string, r region) string {
	if firstTagName(s) == len(s) {
		return s // no tag name: nothing to strip
	}
	switch r.form {
	case summaryText:
		return stripSummary(rules, s)
	case verbatimText:
		said := Unquote(s)
		if t := stripText(rules, said, r.stored); t != said {
			return verbatim(t)
		}
		return s
	case labelText:
		if t := stripText(rules, s, r.stored); t != s {
			return orDash(strings.TrimSpace(t))
		}
		return s
	}
	return stripText(rules, s, r.stored)
}

// stripText is the stripper on s keeping its lines, with the redaction
// the renderer runs before it when it removes something (see shownFrom):
// a removal can join a credential to the word beside it.
func stripText(rules *redact.Rules, s string, stored bool) string {
	t := stripKeepingLines(s, stored)
	if t == s {
		return s
	}
	return stripKeepingLines(redactKeepingLines(rules, s, true), stored)
}

// stripSummary strips each field of a summary's text on its own, keeping
// each line's "> **Name:** " or "> " prefix.
func stripSummary(rules *redact.Rules, s string) string {
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && !summaryField(lines[j]) {
			j++
		}
		prefixes, values := make([]string, j-i), make([]string, j-i)
		for k, line := range lines[i:j] {
			n := 0
			if k == 0 && summaryField(line) {
				n = strings.Index(line, ":** ") + len(":** ")
			} else if strings.HasPrefix(line, "> ") {
				n = len("> ")
			}
			prefixes[k], values[k] = line[:n], line[n:]
		}
		got := strings.Split(stripText(rules, strings.Join(values, "\n"), true), "\n")
		for k := range prefixes {
			v := "" // (the stripper keeps lines: got has one for each)
			if k < len(got) {
				v = got[k]
			}
			lines[i+k] = prefixes[k] + v
		}
		i = j
	}
	return strings.Join(lines, "\n")
}

// summaryField reports whether a line of a summary starts a field.
func summaryField(line string) bool {
	return strings.HasPrefix(line, "> **") && strings.Contains(line, ":** ")
}

// stripOneLine is the stripper for a one-line string (the task).
func stripOneLine(s string, stored bool) string {
	if stored {
		return StripStored(s)
	}
	return StripTags(s)
}

// stripKeepingLines is StripTags (StripStored if stored) on s, keeping its
// lines: a removed span that held newlines leaves as many, after what is
// left of the line it started on, and nothing is trimmed. It marks the
// start of each line with its number between NUL bytes, which no bottle
// holds (the renderer drops them) and which neither make nor break a tag
// (a tag's name and its close hold no newline, and a mark holds no '<'
// or '>'), strips the marked text, and reads from the marks that are left
// which lines the stripper took.
func stripKeepingLines(s string, stored bool) string {
	if firstTagName(s) == len(s) {
		return s
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	var b strings.Builder
	b.Grow(len(s) + 8*strings.Count(s, "\n") + 8)
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(lineMark(n))
		b.WriteString(line)
		n++
	}
	b.WriteString(endMark) // nor is the last line trimmed
	if stored {
		return unmarkLines(StripStored(b.String()), n)
	}
	return unmarkLines(StripTags(b.String()), n)
}

const endMark = "\x00\x00"

func lineMark(n int) string { return "\x00" + strconv.Itoa(n) + "\x00" }

// unmarkLines makes the n lines of a text marked by stripKeepingLines
// from what the stripper left of it, out: the text after each mark left
// goes on that mark's line, and a line whose mark was taken is left
// empty. Text before every mark (StripStored hides the start of a text)
// goes on the line before the first mark left.
func unmarkLines(out string, n int) string {
	var b strings.Builder
	b.Grow(len(out))
	lead, rest, marked := strings.Cut(out, "\x00")
	cur := 0
	put := func(line int, text string) {
		if line > cur {
			b.WriteString(strings.Repeat("\n", line-cur))
			cur = line
		}
		b.WriteString(strings.TrimSuffix(text, "\n")) // each newline left is before a mark
	}
	if lead != "" {
		first := n - 1
		if num, _, _ := strings.Cut(rest, "\x00"); marked {
			if k, err := strconv.Atoi(num); err == nil {
				first = k - 1
			}
		}
		put(max(first, 0), lead)
	}
	for marked {
		num, after, _ := strings.Cut(rest, "\x00")
		var text string
		text, rest, marked = strings.Cut(after, "\x00")
		line, err := strconv.Atoi(num)
		if err != nil { // the end mark
			line = cur
		}
		put(line, text)
	}
	put(n-1, "")
	return b.String()
}
