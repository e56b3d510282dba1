// Package render owns the bottle: the pure function from a session's
// transcript spine and claude-mem records to the bottle's bytes, the tag
// stripper every rendered string goes through, and the atomic, monotonic
// writing of bottles to disk. It does not watch, schedule or read sources.
package render

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"bottled/sources"
)

// ErrNothing reports a session with neither a transcript with content nor
// any prompt or observation in the database: there is no bottle to make,
// and the caller falls back to whatever it would do without bottled.
var ErrNothing = errors.New("nothing to render")

// Input is everything a bottle is made from.
type Input struct {
	SessionID string
	// Spine is the transcript's spine; nil when the transcript is gone.
	Spine *sources.Spine
	// Memory is claude-mem's record of the session; nil when it has none.
	Memory *sources.Memory
	// Now is the render time written in the header.
	Now time.Time
	// Location is the time zone times are shown in (UTC if nil).
	Location *time.Location
}

// Bottle is a rendered bottle.
type Bottle struct {
	Bytes []byte
	State State
	// Malformed counts the transcript lines that could not be read and
	// were left out.
	Malformed int
}

// Render makes the bottle of a session: from the transcript when there is
// one (full mode), else from the database alone (reconstructed mode).
func Render(in Input) (*Bottle, error) {
	if in.Location == nil {
		in.Location = time.UTC
	}
	r := &renderer{in: in}
	var (
		pre, body *doc
		err       error
	)
	switch {
	case in.Spine != nil && hasContent(in.Spine):
		r.state.Mode = ModeFull
		pre, body = r.full()
	case !in.Memory.Empty():
		r.state.Mode = ModeReconstructed
		pre, body = r.reconstructed()
	default:
		return nil, ErrNothing
	}
	b, err := r.assemble(pre, body)
	body.release()
	if err != nil {
		return nil, err
	}
	bottle := &Bottle{Bytes: b, State: r.state}
	if in.Spine != nil {
		bottle.Malformed = in.Spine.Malformed
	}
	return bottle, nil
}

// hasContent reports whether a spine has a message to show.
func hasContent(sp *sources.Spine) bool {
	for _, e := range sp.Entries {
		if e.Kind != sources.EntryCompaction && (text(e.Text) != "" || e.Images > 0) {
			return true
		}
	}
	return false
}

type renderer struct {
	in      Input
	state   State
	outline []outlineItem
	legs    []int // body-relative line of each leg's start
	when    timeFormatter
	project string
	started time.Time
}

// outlineItem is one line of the outline: a user turn or a compaction.
type outlineItem struct {
	line    int // body-relative
	clock   string
	label   string
	compact bool
}

// The outline must fit one Read with room for the rest, so a long
// session's outline lists every compaction but only its first and latest
// turns, and says what it left out.
const (
	outlineMax   = 150
	outlineFirst = 10
)

// shortenOutline keeps every compaction, the first outlineFirst turns and
// as many of the latest turns as fit in outlineMax lines, replacing the
// others by one line that says how many were left out.
func shortenOutline(items []outlineItem) []outlineItem {
	if len(items) <= outlineMax {
		return items
	}
	compactions := 0
	for _, it := range items {
		if it.compact {
			compactions++
		}
	}
	// Each compaction among the left-out turns splits their elision line
	// in two: budget one elision line per compaction, plus one.
	keepLast := max(outlineMax-outlineFirst-2*compactions-1, 20)
	turn := 0
	turns := len(items) - compactions
	var out []outlineItem
	elided := 0
	for _, it := range items {
		if !it.compact {
			turn++
		}
		if it.compact || turn <= outlineFirst || turn > turns-keepLast {
			if elided > 0 {
				out = append(out, outlineItem{line: -1, label: fmt.Sprintf("… %d turns not listed …", elided)})
				elided = 0
			}
			out = append(out, it)
			continue
		}
		elided++
	}
	return out
}

// assemble lays out header, outline, the pre-body section and the body,
// turning body-relative line numbers into absolute ones, and computes the
// state line (whose byte count includes itself).
func (r *renderer) assemble(pre, body *doc) ([]byte, error) {
	head := &doc{}
	head.line("# Session bottle — " + r.in.SessionID)
	meta := []string{"project: " + orDash(r.project), "started: " + r.stamp(r.started), "rendered: " + r.stamp(r.in.Now)}
	head.line(strings.Join(meta, " · "))
	switch r.state.Mode {
	case ModeFull:
		head.line("mode: full")
	default:
		head.line("mode: reconstructed — assistant messages not preserved")
	}
	// Line 4 is the state line, written last.
	top := &doc{lines: stateLineN}
	top.blank()
	top.line("## Outline")
	outlineStart := top.next()
	outline := shortenOutline(r.outline)
	offset := top.lines + len(outline) + 1 + pre.lines // absolute line of body line 0
	for _, it := range outline {
		if it.line < 0 {
			top.line("- " + it.label)
			continue
		}
		parts := []string{fmt.Sprintf("line %d", offset+it.line)}
		if it.clock != "" {
			parts = append(parts, it.clock)
		}
		top.line("- " + strings.Join(append(parts, it.label), " · "))
	}
	top.blank()
	r.state.Outline = [2]int{outlineStart, outlineStart + len(outline) - 1}
	for _, l := range r.legs {
		r.state.Legs = append(r.state.Legs, offset+l)
	}
	r.state.Format = Format
	r.state.Session = r.in.SessionID
	r.state.Rendered = r.in.Now.UTC()
	r.state.Lines = top.lines + pre.lines + body.lines
	// The state line holds the file's byte count, itself included: iterate
	// until the count's own digits stop changing it.
	rest := top.b.Len() + pre.b.Len() + body.b.Len()
	size := head.b.Len() + rest
	for range 4 {
		r.state.Bytes = size
		sl, err := r.state.line()
		if err != nil {
			return nil, err
		}
		if n := head.b.Len() + len(sl) + rest; n != size {
			size = n
			continue
		}
		out := make([]byte, 0, size)
		for _, part := range [][]byte{head.b.Bytes(), sl, top.b.Bytes(), pre.b.Bytes(), body.b.Bytes()} {
			out = append(out, part...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("render %s: bottle size did not settle", r.in.SessionID)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// stamp formats a header time.
func (r *renderer) stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(r.in.Location).Format("2006-01-02 15:04:05 MST")
}

// doc accumulates markdown and counts its lines.
type doc struct {
	b     bytes.Buffer
	lines int
}

// bodyBuffers recycles body buffers between renders. A daemon re-renders
// big bottles several times a second; fresh multi-megabyte buffers each
// time cost more in page faults and zeroing than the rendering itself.
var bodyBuffers sync.Pool

// newBody returns an empty doc whose buffer holds at least size bytes.
func newBody(size int) *doc {
	d := &doc{}
	if b, ok := bodyBuffers.Get().(*bytes.Buffer); ok {
		d.b = *b
		d.b.Reset()
	}
	d.b.Grow(size)
	return d
}

// release returns the doc's buffer for reuse; the doc must not be used
// after.
func (d *doc) release() {
	b := d.b
	bodyBuffers.Put(&b)
	d.b = bytes.Buffer{}
}

// line writes s and a newline; s may span several lines.
func (d *doc) line(s string) {
	d.b.WriteString(s)
	d.b.WriteByte('\n')
	d.lines += strings.Count(s, "\n") + 1
}

func (d *doc) blank() { d.line("") }

// next is the number of the line about to be written.
func (d *doc) next() int { return d.lines + 1 }

// timeFormatter shows a time as HH:MM, with the date whenever it differs
// from the last date shown, so that a session spanning days stays readable.
type timeFormatter struct {
	loc  *time.Location
	last string
}

func (f *timeFormatter) format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.In(f.loc)
	if d := t.Format("2006-01-02"); d != f.last {
		f.last = d
		return t.Format("2006-01-02 15:04")
	}
	return t.Format("15:04")
}

// heading writes "**Who** (time)".
func heading(who, clock string) string {
	if clock == "" {
		return "**" + who + "**"
	}
	return "**" + who + "** (" + clock + ")"
}

// outlineLabelMax bounds the first words of a turn in the outline.
const outlineLabelMax = 72

func outlineLabel(s string, images int) string {
	l := firstWords(s, outlineLabelMax)
	if l == "" && images > 0 {
		return "[image]"
	}
	return orDash(l)
}
