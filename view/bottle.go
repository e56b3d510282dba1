package view

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/render"
)

// A bottle is shown as a readable page: its header, its outline as
// navigation, and its body turn by turn, each speaker's text rendered
// from its markdown, legs (compactions) marked, the lines that list what
// happened in a turn (claude-mem's observations, the deed trail) folded
// under it. The page is built from render.Parse's blocks, so it reads the
// bottle as every other reader does.

// bottlePage is a bottle made ready for a template: its header and
// outline as data, its body already HTML (written here rather than by a
// template, which cost a 2 MB bottle's page a fifth of its time).
type bottlePage struct {
	ID            string
	Project       string
	Started       string
	Rendered      string
	Mode          string
	Reconstructed bool
	Archived      bool
	Lines         int
	Outline       []outlineItem
	Turns         template.HTML
}

// outlineItem is one line of the bottle's outline: a turn or a compaction.
type outlineItem struct {
	Line       int
	When       string
	Text       string
	Compaction bool
}

// lineText is line n of a bottle without its newline, "" past the end.
func lineText(lines render.Lines, n int) string {
	return strings.TrimSuffix(string(lines.Line(n)), "\n")
}

// buildPage reads a bottle into a page, rendering its messages through
// cache. loc is the zone the bottle was rendered in.
func buildPage(md *markdown, cache *renderCache, id string, cur *bottles.Current, loc *time.Location) (*bottlePage, error) {
	p, err := render.Parse(cur.Data, loc)
	if err != nil {
		return nil, fmt.Errorf("read the bottle of %s: %w", id, err)
	}
	lines := render.LinesOf(cur.Data)
	pg := &bottlePage{ID: id, Project: p.Project, Mode: string(p.State.Mode), Archived: cur.Archived,
		Reconstructed: p.State.Mode == render.ModeReconstructed, Lines: p.State.Lines}
	if !p.Started.IsZero() {
		pg.Started = p.Started.In(loc).Format(index.TimeLayout)
	}
	if !p.State.Rendered.IsZero() {
		pg.Rendered = p.State.Rendered.In(loc).Format("2006-01-02 15:04:05")
	}
	for n := p.State.Outline[0]; n > 0 && n <= p.State.Outline[1]; n++ {
		if o, ok := parseOutline(lineText(lines, n)); ok {
			pg.Outline = append(pg.Outline, o)
		}
	}
	w := &bodyWriter{lines: lines}
	w.out.Grow(len(cur.Data) * 3) // the HTML of a bottle is 2–3 times its size
	prevEnd := p.BodyStart
	for _, b := range p.Blocks {
		label := w.gap(prevEnd, b.Start)
		prevEnd = b.End
		if !speaker(b.Kind) {
			if label != "" || w.foldLabel == "" {
				w.closeFold()
				w.foldLabel = cmp.Or(label, "What happened")
				w.foldFirst = b.Line
			}
			w.fold = append(w.fold, foldLine{Line: b.Line, Text: strings.TrimSpace(string(cur.Data[b.Text:b.End]))})
			continue
		}
		w.closeFold()
		r, err := cache.get(md, []byte(render.Unquote(string(cur.Data[b.Text:b.End]))), b.Kind == render.BlockUser)
		if err != nil {
			return nil, fmt.Errorf("render the bottle of %s: %w", id, err)
		}
		when := ""
		if !b.Time.IsZero() {
			when = b.Time.In(loc).Format(index.TimeLayout)
		}
		if b.Text > b.Start {
			w.message(b, headingLabel(lineText(lines, b.Line)), when, b.Line+1, r)
		} else { // the assistant's text going on after a trail of what it did: no heading
			w.message(b, "", "", b.Line, r)
		}
	}
	w.gap(prevEnd, len(cur.Data))
	w.closeFold()
	pg.Turns = template.HTML(w.out.String()) // escaped here; messages through markdown.go's safe renderer
	return pg, nil
}

type foldLine struct {
	Line int
	Text string
}

// bodyWriter writes a bottle's body as HTML: messages, leg markers, and
// folds of listed lines (observations, deeds), each under the bottle
// line it starts on as its id.
type bodyWriter struct {
	lines     render.Lines
	out       bytes.Buffer
	foldLabel string // the open fold's, "" when none is open
	foldFirst int
	fold      []foldLine
}

// message writes a speaker's block, headed by label and when (none for
// a block that goes on from the one before), its text starting on bottle
// line first.
func (w *bodyWriter) message(b render.Block, label, when string, first int, r *rendered) {
	kind := kindName(b.Kind)
	switch label {
	case "User, while Claude was working":
		kind = "steering"
	case "":
		kind += " cont"
	}
	last := w.lines.At(max(b.End-1, b.Start))
	fmt.Fprintf(&w.out, `<section class="msg %s" id="L%d" data-first="%d" data-last="%d">`, kind, b.Line, b.Line, last)
	if label != "" {
		fmt.Fprintf(&w.out, `<h3 class="who">%s`, template.HTMLEscapeString(label))
		if when != "" {
			fmt.Fprintf(&w.out, ` <time>%s</time>`, when)
		}
		w.out.WriteString(`</h3>`)
	}
	w.out.WriteString(`<div class="text" dir="auto">`) // its direction is its writer's (Arabic, Hebrew: right to left)
	r.writeTo(&w.out, first, b.Line)
	w.out.WriteString("</div></section>\n")
}

func (w *bodyWriter) closeFold() {
	if w.foldLabel == "" {
		return
	}
	fmt.Fprintf(&w.out, `<details class="fold" data-first="%d"><summary>%s · %d</summary><ul>`,
		w.foldFirst, template.HTMLEscapeString(w.foldLabel), len(w.fold))
	for _, l := range w.fold {
		fmt.Fprintf(&w.out, `<li id="L%d" dir="auto">%s</li>`, l.Line, template.HTMLEscapeString(l.Text))
	}
	w.out.WriteString("</ul></details>\n")
	w.foldLabel, w.fold = "", w.fold[:0]
}

// gap writes what the structure lines between two blocks (bytes from to
// to) mark: a leg marker for each leg heading. It returns the label of a
// list heading there ("*What happened:*" gives "What happened"), "" if
// none.
func (w *bodyWriter) gap(from, to int) string {
	if from >= to {
		return ""
	}
	label := ""
	lines := w.lines
	for n := lines.At(from); n <= lines.Count() && lines.Start(n) < to; n++ {
		l := lineText(lines, n)
		switch {
		case strings.HasPrefix(l, "## Leg "):
			w.closeFold()
			fmt.Fprintf(&w.out, `<h2 class="leg" id="L%d" data-first="%d">%s</h2>`+"\n", n, n, template.HTMLEscapeString(strings.TrimPrefix(l, "## ")))
		case len(l) > 3 && strings.HasPrefix(l, "*") && strings.HasSuffix(l, ":*") && !strings.HasPrefix(l, "**"):
			label = strings.TrimSuffix(strings.TrimPrefix(l, "*"), ":*")
		}
	}
	return label
}

// speaker reports whether blocks of kind k are someone's words, shown
// whole; the others are list lines, folded.
func speaker(k render.BlockKind) bool {
	switch k {
	case render.BlockUser, render.BlockAssistant, render.BlockSummary:
		return true
	}
	return false
}

func kindName(k render.BlockKind) string {
	switch k {
	case render.BlockUser:
		return "user"
	case render.BlockAssistant:
		return "assistant"
	case render.BlockSummary:
		return "summary"
	}
	return "fold"
}

// headingLabel is who a block's heading line names: "User",
// "Assistant", "User, while Claude was working"; the summary heading as
// it is.
func headingLabel(line string) string {
	if rest, ok := strings.CutPrefix(line, "**"); ok {
		if who, _, ok := strings.Cut(rest, "**"); ok {
			return who
		}
	}
	return strings.TrimPrefix(line, "> ")
}

// parseOutline reads an outline line: "- line 14 · 10:32 · Refactor…".
func parseOutline(l string) (outlineItem, bool) {
	rest, ok := strings.CutPrefix(l, "- line ")
	if !ok {
		return outlineItem{}, false
	}
	parts := strings.SplitN(rest, " · ", 3)
	n, err := strconv.Atoi(parts[0])
	if err != nil {
		return outlineItem{}, false
	}
	o := outlineItem{Line: n}
	switch len(parts) {
	case 3:
		o.When, o.Text = parts[1], parts[2]
	case 2:
		o.Text = parts[1]
	}
	o.Compaction = strings.HasPrefix(o.Text, "— compacted")
	return o, true
}
