package view

import (
	"bytes"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
)

// A bottle is shown as a readable page: its header, its outline as
// navigation, and its body turn by turn, each speaker's text rendered
// from its markdown, legs (compactions) marked, the lines that list what
// happened in a turn (claude-mem's observations, the deed trail) folded
// under it. The page is built from render.Parse's blocks, so it reads the
// bottle as every other reader does.

// bottlePage is a bottle made ready for a template.
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
	Items         []item
}

// outlineItem is one line of the bottle's outline: a turn or a compaction.
type outlineItem struct {
	Line       int
	When       string
	Text       string
	Compaction bool
}

// item is one part of the body: a speaker's block, a leg marker, or a fold
// of listed lines (observations, deeds).
type item struct {
	Kind  string // user, steering, assistant, summary, leg, fold
	Line  int    // the bottle line it starts on
	Last  int    // the last bottle line it covers
	Label string
	When  string
	HTML  template.HTML
	Fold  []foldLine
}

type foldLine struct {
	Line int
	Text string
}

// lineIndex finds the lines of a bottle.
type lineIndex struct {
	data   []byte
	starts []int // starts[n-1] is where line n starts
}

func newLineIndex(data []byte) *lineIndex {
	return &lineIndex{data: data, starts: lineStarts(data)}
}

// line is line n (1-based) without its newline, "" past the end.
func (l *lineIndex) line(n int) string {
	if n < 1 || n > len(l.starts) {
		return ""
	}
	end := len(l.data)
	if n < len(l.starts) {
		end = l.starts[n] - 1
	}
	if l.starts[n-1] > end {
		return ""
	}
	return string(l.data[l.starts[n-1]:end])
}

// at is the 1-based line holding byte off.
func (l *lineIndex) at(off int) int { return lineOf(l.starts, off) + 1 }

// buildPage reads a bottle into a page. loc is the zone the bottle was
// rendered in.
func buildPage(md *markdown, id string, cur *bottles.Current, loc *time.Location) (*bottlePage, error) {
	p, err := render.Parse(cur.Data, loc)
	if err != nil {
		return nil, fmt.Errorf("read the bottle of %s: %w", id, err)
	}
	lines := newLineIndex(cur.Data)
	pg := &bottlePage{ID: id, Project: p.Project, Mode: string(p.State.Mode), Archived: cur.Archived,
		Reconstructed: p.State.Mode == render.ModeReconstructed, Lines: p.State.Lines}
	if !p.Started.IsZero() {
		pg.Started = p.Started.In(loc).Format("2006-01-02 15:04")
	}
	if !p.State.Rendered.IsZero() {
		pg.Rendered = p.State.Rendered.In(loc).Format("2006-01-02 15:04:05")
	}
	for n := p.State.Outline[0]; n > 0 && n <= p.State.Outline[1]; n++ {
		if o, ok := parseOutline(lines.line(n)); ok {
			pg.Outline = append(pg.Outline, o)
		}
	}
	var buf bytes.Buffer
	prevEnd := p.BodyStart
	var fold *item
	for _, b := range p.Blocks {
		label := gapItems(pg, lines, prevEnd, b.Start)
		if b.Kind == render.BlockObservation || !speaker(b.Kind) {
			if fold == nil || label != "" {
				if label == "" {
					label = "What happened"
				}
				pg.Items = append(pg.Items, item{Kind: "fold", Line: b.Line, Label: label})
				fold = &pg.Items[len(pg.Items)-1]
			}
			fold.Fold = append(fold.Fold, foldLine{Line: b.Line, Text: strings.TrimSpace(string(cur.Data[b.Text:b.End]))})
			fold.Last = b.Line
			prevEnd = b.End
			continue
		}
		fold = nil
		it := item{Kind: kindName(b.Kind), Line: b.Line, Last: lines.at(max(b.End-1, b.Start))}
		it.Label = headingLabel(lines.line(b.Line))
		if it.Label == "User, while Claude was working" {
			it.Kind = "steering"
		}
		if !b.Time.IsZero() {
			it.When = b.Time.In(loc).Format("2006-01-02 15:04")
		}
		buf.Reset()
		src := []byte(render.Unquote(string(cur.Data[b.Text:b.End])))
		if err := md.render(&buf, src, b.Line+1, b.Kind == render.BlockUser); err != nil {
			return nil, fmt.Errorf("render the bottle of %s: %w", id, err)
		}
		it.HTML = template.HTML(buf.String()) // goldmark without raw HTML, links checked (markdown.go)
		pg.Items = append(pg.Items, it)
		prevEnd = b.End
	}
	gapItems(pg, lines, prevEnd, len(cur.Data))
	if pg.Items != nil {
		pg.Items = pg.Items[:len(pg.Items):len(pg.Items)]
	}
	return pg, nil
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

// gapItems adds what the structure lines between two blocks (bytes from
// to to) mark: a leg marker for each leg heading. It returns the label of
// the list heading there ("*What happened:*" gives "What happened"), ""
// if none.
func gapItems(pg *bottlePage, lines *lineIndex, from, to int) string {
	if from >= to {
		return ""
	}
	label := ""
	for n := lines.at(from); n <= len(lines.starts) && lines.starts[n-1] < to; n++ {
		l := lines.line(n)
		switch {
		case strings.HasPrefix(l, "## Leg "):
			pg.Items = append(pg.Items, item{Kind: "leg", Line: n, Last: n, Label: strings.TrimPrefix(l, "## ")})
		case len(l) > 3 && strings.HasPrefix(l, "*") && strings.HasSuffix(l, ":*") && !strings.HasPrefix(l, "**"):
			label = strings.TrimSuffix(strings.TrimPrefix(l, "*"), ":*")
		}
	}
	return label
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
