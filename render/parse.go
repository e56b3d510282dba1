package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"strings"
	"time"
)

// This file reads a bottle back into its parts, for programs that work on
// bottles rather than sources (the search index, the MCP reader). It is
// the one place that knows the body's markers as the renderer writes them;
// TestParseCoversBody checks the two agree on every golden and real bottle.

// BlockKind says whose words a block of a bottle's body holds.
type BlockKind uint8

const (
	BlockUser        BlockKind = iota // a user message (steering ones included)
	BlockAssistant                    // the assistant's text of one turn
	BlockObservation                  // one claude-mem observation line
	BlockSummary                      // a claude-mem session summary (reconstructed mode)
	BlockDeed                         // one line of the trail of what the assistant did
)

func (k BlockKind) String() string {
	switch k {
	case BlockUser:
		return "user"
	case BlockAssistant:
		return "assistant"
	case BlockObservation:
		return "observation"
	case BlockSummary:
		return "summary"
	case BlockDeed:
		return "deed"
	}
	return "unknown"
}

// Block is one speaker's part of a bottle's body: a user message, the
// assistant's text of a turn (up to its trail, and from there on to the
// next), one observation line, one trail line or one summary.
type Block struct {
	Kind BlockKind
	// Line is the bottle line the block starts on (its heading, or the
	// observation line itself).
	Line int
	// Start and End delimit the block in the bottle's bytes, heading
	// included and trailing blank lines and turn rule excluded.
	Start, End int
	// Text is where the block's words start: after the heading line,
	// after the list marker of an observation or trail line, or at Start
	// for the assistant's text that goes on after a trail.
	Text int
	// Time is when the block was said, as far as its heading shows (to
	// the minute); zero when the heading shows no time.
	Time time.Time
}

// Parsed is a bottle read back into its parts.
type Parsed struct {
	State   *State
	Project string
	Started time.Time
	// FirstPrompt is the start of the session's first user message.
	FirstPrompt string
	// BodyStart is the byte offset of the body (the first leg); 0 if the
	// bottle has none.
	BodyStart int
	Blocks    []Block

	loc   *time.Location // the zone the times were read in
	marks []parseMark    // the parser's state at line starts in the body (by Reparse only)
}

// LastActive is the last time the bottle shows: its latest block's, else
// the session's start (zero if it shows neither).
func (p *Parsed) LastActive() time.Time {
	last := p.Started
	for _, b := range p.Blocks {
		if b.Time.After(last) {
			last = b.Time
		}
	}
	return last
}

// Turns counts the user's messages.
func (p *Parsed) Turns() int {
	n := 0
	for _, b := range p.Blocks {
		if b.Kind == BlockUser {
			n++
		}
	}
	return n
}

// ErrNotBottle reports bytes that do not parse as a bottle.
var ErrNotBottle = errors.New("not a bottle")

// firstPromptMax bounds Parsed.FirstPrompt.
const firstPromptMax = 100

// Parse reads a bottle's header and splits its body into blocks. Times in
// headings are read in loc, the zone the bottle was rendered in (bottles
// do not name it per turn).
func Parse(data []byte, loc *time.Location) (*Parsed, error) {
	ps, err := startParse(data, loc)
	if err != nil {
		return nil, err
	}
	ps.body(false)
	return ps.p, nil
}

// parser reads one bottle: its header (startParse), then its body line by
// line (body), in a state that a later parse of a bottle with the same
// first bytes of body can start from (see Reparse).
type parser struct {
	data  []byte
	loc   *time.Location
	p     *Parsed
	lines *lineReader
	s     bodyState
	// nextMark is the body offset from which the next line start is
	// marked (Parsed.marks).
	nextMark int
}

// bodyState is what the body read so far tells the parser about the
// lines to come.
type bodyState struct {
	cur          int  // index in p.Blocks of the open user, assistant or summary block
	observations bool // inside a "What happened" list
	trail        bool // inside a "Did" list
	resume       bool // after a trail: text without a heading continues the assistant's
	prevBlank    bool
	lastTime     time.Time
	date         day // the date last shown in the body
}

// startParse reads a bottle's state line and header, leaving the parser
// at the start of its body.
func startParse(data []byte, loc *time.Location) (*parser, error) {
	if loc == nil {
		loc = time.UTC
	}
	st, err := StateOf(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotBottle, err)
	}
	if len(st.Legs) == 0 || st.Legs[0] < 1 {
		return nil, fmt.Errorf("%w: no legs in its state", ErrNotBottle)
	}
	ps := &parser{data: data, loc: loc, p: &Parsed{State: st, loc: loc}, lines: newLineReader(data),
		s: bodyState{cur: -1, prevBlank: true}}
	p, lines := ps.p, ps.lines
	originalNext := false
	for lines.n+1 < st.Legs[0] && lines.next() {
		switch line := lines.bytes(); {
		case lines.n == 2:
			p.Project, p.Started = parseMeta(string(line), loc)
		case originalNext:
			p.FirstPrompt = firstWords(string(line), firstPromptMax)
			originalNext = false
		case string(line) == originalHeading:
			originalNext = true
		}
	}
	if lines.n+1 == st.Legs[0] && lines.nextStart < len(data) {
		p.BodyStart = lines.nextStart
		// A body that opens with the assistant continuing shows its
		// date in the outline only: start from the session's.
		if !p.Started.IsZero() {
			y, m, d := p.Started.In(loc).Date()
			ps.s.date = day{y, int(m), d}
		}
	}
	return ps, nil
}

// body reads the body's lines to the end of the bottle, marking the
// parser's state as it goes if mark (for Reparse).
func (ps *parser) body(mark bool) {
	if ps.p.BodyStart == 0 { // no body (the header is all there is)
		return
	}
	for ps.lines.next() {
		if off := ps.lines.start - ps.p.BodyStart; mark && off >= ps.nextMark {
			m := parseMark{off: off, line: ps.lines.n - ps.p.State.Legs[0], blocks: len(ps.p.Blocks), s: ps.s}
			if k := len(ps.p.marks); k > 0 {
				m.sum = maphash.Bytes(markSeed, ps.data[ps.p.BodyStart+ps.p.marks[k-1].off:ps.lines.start])
			}
			ps.p.marks = append(ps.p.marks, m)
			ps.nextMark = off + markEvery
		}
		ps.line()
	}
	ps.closeBlock(len(ps.data))
}

func (ps *parser) closeBlock(end int) {
	if s := &ps.s; s.cur >= 0 {
		ps.p.Blocks[s.cur].End = trimBlockEnd(ps.data, ps.p.Blocks[s.cur].Text, end)
		s.cur = -1
	}
}

// line reads the body line the line reader is at.
func (ps *parser) line() {
	p, lines, s := ps.p, ps.lines, &ps.s
	n, line := lines.n, lines.bytes()
	blank := len(line) == 0
	if s.observations {
		if len(line) > len(observationItem) && bytes.HasPrefix(line, []byte(observationItem)) {
			p.Blocks = append(p.Blocks, Block{Kind: BlockObservation, Line: n, Start: lines.start, End: lines.lineEnd(),
				Text: lines.start + len(observationItem)})
			s.prevBlank = false
			return
		}
		s.observations = false
	}
	if s.trail {
		if len(line) > len(trailItem) && bytes.HasPrefix(line, []byte(trailItem)) {
			p.Blocks = append(p.Blocks, Block{Kind: BlockDeed, Line: n, Start: lines.start, End: lines.lineEnd(),
				Text: lines.start + len(trailItem), Time: s.lastTime})
			s.prevBlank = false
			return
		}
		s.trail, s.resume = false, true
	}
	if s.prevBlank && mayBeMarker(line) {
		text := string(line)
		if kind, clock, ok := parseHeading(text); ok {
			ps.closeBlock(lines.start)
			b := Block{Kind: kind, Line: n, Start: lines.start, Text: lines.lineEnd(), Time: clockTime(&s.date, clock, ps.loc)}
			p.Blocks = append(p.Blocks, b)
			s.cur = len(p.Blocks) - 1
			s.prevBlank, s.resume, s.lastTime = false, false, b.Time
			return
		}
		switch {
		case text == whatHappened:
			ps.closeBlock(lines.start)
			s.observations, s.resume = true, false
		case text == trailHeading:
			ps.closeBlock(lines.start)
			s.trail, s.resume = true, false
		case strings.HasPrefix(text, legPrefix):
			if clock, ok := parseLeg(text); ok {
				ps.closeBlock(lines.start)
				clockTime(&s.date, clock, ps.loc) // carries its date forward
				s.resume = false
			}
		}
	}
	if s.resume && !blank {
		// The assistant's text goes on after what it did.
		s.resume = false
		if string(line) != turnRule {
			p.Blocks = append(p.Blocks, Block{Kind: BlockAssistant, Line: n, Start: lines.start, Text: lines.start, Time: s.lastTime})
			s.cur = len(p.Blocks) - 1
		}
	}
	s.prevBlank = blank
}

// markerMax bounds the length of a marker line: longer lines are message
// text, and are not copied to be looked at.
const markerMax = 256

// mayBeMarker is a cheap first test for a marker line.
func mayBeMarker(line []byte) bool {
	if len(line) < 3 || len(line) > markerMax {
		return false
	}
	switch line[0] {
	case '*', '#', '>':
		return true
	}
	return false
}

// parseHeading recognises "**User** (10:32)", "**Assistant**", a steering
// user heading and the summary heading, returning the time shown.
func parseHeading(line string) (BlockKind, string, bool) {
	if line == summaryHeading {
		return BlockSummary, "", true
	}
	rest, ok := strings.CutPrefix(line, "**")
	if !ok {
		return 0, "", false
	}
	who, clock, ok := strings.Cut(rest, "**")
	if !ok {
		return 0, "", false
	}
	if clock != "" {
		c, ok := strings.CutPrefix(clock, " (")
		if !ok {
			return 0, "", false
		}
		if clock, ok = strings.CutSuffix(c, ")"); !ok || !isClock(clock) {
			return 0, "", false
		}
	}
	switch who {
	case userWho, steeringWho, undeliveredWho, asideWho:
		return BlockUser, clock, true
	case assistantWho, asideAnswerWho:
		return BlockAssistant, clock, true
	}
	return 0, "", false
}

// parseLeg recognises "## Leg 2 — compacted (auto) at 10:31" and returns
// its time.
func parseLeg(line string) (string, bool) {
	rest := strings.TrimPrefix(line, legPrefix)
	num, how, ok := strings.Cut(rest, " — ")
	if !ok {
		return "", false
	}
	if n, err := strconv.Atoi(num); err != nil || n < 2 {
		return "", false
	}
	clock := ""
	if i := strings.LastIndex(how, " at "); i >= 0 && isClock(how[i+4:]) {
		clock = how[i+4:]
	}
	return clock, true
}

// isClock reports whether s is a time as timeFormatter writes it:
// "15:04" or "2006-01-02 15:04".
func isClock(s string) bool {
	_, _, _, _, _, ok := splitClock(s)
	return ok
}

// splitClock reads "15:04" (date zero) or "2006-01-02 15:04" by hand: it
// runs for every heading of every bottle indexed.
func splitClock(s string) (y, mo, d, h, mi int, ok bool) {
	if len(s) == len("2006-01-02 15:04") {
		if s[4] != '-' || s[7] != '-' || s[10] != ' ' {
			return 0, 0, 0, 0, 0, false
		}
		var ok1, ok2, ok3 bool
		y, ok1 = digits(s[0:4])
		mo, ok2 = digits(s[5:7])
		d, ok3 = digits(s[8:10])
		if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > 31 {
			return 0, 0, 0, 0, 0, false
		}
		s = s[11:]
	}
	if len(s) != len("15:04") || s[2] != ':' {
		return 0, 0, 0, 0, 0, false
	}
	h, ok1 := digits(s[0:2])
	mi, ok2 := digits(s[3:5])
	if !ok1 || !ok2 || h > 23 || mi > 59 {
		return 0, 0, 0, 0, 0, false
	}
	return y, mo, d, h, mi, true
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// day is a date as the body last showed it.
type day struct{ y, m, d int }

// clockTime turns a shown time into an instant, keeping track of the date
// last shown (timeFormatter shows the date only when it changes).
func clockTime(date *day, clock string, loc *time.Location) time.Time {
	y, mo, d, h, mi, ok := splitClock(clock)
	if !ok {
		return time.Time{}
	}
	if y != 0 {
		*date = day{y, mo, d}
	}
	if date.y == 0 {
		return time.Time{}
	}
	return time.Date(date.y, time.Month(date.m), date.d, h, mi, 0, 0, loc)
}

// parseMeta reads the header's second line:
// "project: <cwd> · started: <time> · rendered: <time>".
func parseMeta(line string, loc *time.Location) (project string, started time.Time) {
	rest, ok := strings.CutPrefix(line, "project: ")
	if !ok {
		return "", time.Time{}
	}
	i := strings.LastIndex(rest, " · started: ")
	if i < 0 {
		return rest, time.Time{}
	}
	project = rest[:i]
	if project == "—" {
		project = ""
	}
	when, _, _ := strings.Cut(rest[i+len(" · started: "):], " · ")
	started, _ = time.ParseInLocation("2006-01-02 15:04:05 MST", when, loc)
	return project, started
}

// trimBlockEnd moves a block's end back over trailing blank lines and the
// turn rule that closes a turn.
func trimBlockEnd(data []byte, text, end int) int {
	trimBlank := func(end int) int {
		for end > text && data[end-1] == '\n' {
			end--
		}
		return end
	}
	end = trimBlank(end)
	if bytes.HasSuffix(data[text:end], []byte("\n"+turnRule)) || string(data[text:end]) == turnRule {
		end = trimBlank(end - len(turnRule))
	}
	if end > text && end < len(data) && data[end] == '\n' {
		end++ // keep the block's own final newline
	}
	return end
}

// lineReader walks data line by line, counting lines from 1.
type lineReader struct {
	data       []byte
	n          int
	start, end int // the current line, its newline excluded
	nextStart  int
}

func newLineReader(data []byte) *lineReader { return &lineReader{data: data} }

func (r *lineReader) next() bool {
	if r.nextStart >= len(r.data) {
		return false
	}
	r.start = r.nextStart
	if i := bytes.IndexByte(r.data[r.start:], '\n'); i >= 0 {
		r.end = r.start + i
		r.nextStart = r.end + 1
	} else {
		r.end = len(r.data)
		r.nextStart = r.end
	}
	r.n++
	return true
}

func (r *lineReader) bytes() []byte { return r.data[r.start:r.end] }

// lineEnd is the offset just past the current line's newline.
func (r *lineReader) lineEnd() int { return r.nextStart }

// projectScanBytes bounds what ProjectOf reads: the header's first two
// lines, the second as long as a deep working directory makes it.
const projectScanBytes = 64 << 10

// ProjectOf returns the working directory the header of the bottle r
// reads names, "" when it names none or r is no bottle. It reads the
// header's first two lines only, for a list of many sessions.
func ProjectOf(r io.Reader) string {
	br := bufio.NewReader(io.LimitReader(r, projectScanBytes))
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, headerPrefix) {
		return ""
	}
	meta, _ := br.ReadString('\n')
	project, _ := parseMeta(strings.TrimSuffix(meta, "\n"), time.UTC)
	return project
}
