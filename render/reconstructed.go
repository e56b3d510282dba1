package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/textcut"
)

// reconstructed renders from the database alone: the transcript is gone,
// so the user's prompts (as claude-mem stored them) and the observations
// are all that is verbatim; summaries are shown, quoted and labelled as
// generated, never as the assistant's words.
func (r *renderer) reconstructed() (pre, body *doc) {
	m := r.in.ClaudeMem
	r.project = oneLine(r.text(m.Project))
	r.started = m.Started
	r.when = timeFormatter{loc: r.in.Location}
	c := m.Cursor
	r.state.ClaudeMem = &c

	type group struct {
		prompt    *sources.Prompt
		obs       []sources.Observation
		summaries []sources.Summary
	}
	groups := []*group{}
	byNumber := map[int64]*group{}
	for i := range m.Prompts {
		p := &m.Prompts[i]
		g := &group{prompt: p}
		groups = append(groups, g)
		// Numbers are not unique (claude-mem has no constraint on them);
		// rows that name a repeated number go with its first prompt.
		if _, dup := byNumber[p.Number]; !dup && p.Number > 0 {
			byNumber[p.Number] = g
		}
	}
	// Rows without a prompt to hang on go under the last prompt stored
	// before them, or into a leading group of their own.
	var lead group
	at := func(number int64, created func(*group) bool) *group {
		if g, ok := byNumber[number]; ok && number > 0 {
			return g
		}
		var last *group
		for _, g := range groups {
			if created(g) {
				last = g
			}
		}
		if last == nil {
			return &lead
		}
		return last
	}
	for _, o := range m.Observations {
		g := at(o.PromptNumber, func(g *group) bool { return !g.prompt.Created.After(o.Created) })
		g.obs = append(g.obs, o)
	}
	for _, s := range m.Summaries {
		g := at(s.PromptNumber, func(g *group) bool { return !g.prompt.Created.After(s.Created) })
		g.summaries = append(g.summaries, s)
	}
	if len(lead.obs) > 0 || len(lead.summaries) > 0 {
		groups = slices.Insert(groups, 0, &lead)
	}

	first := ""
	for _, g := range groups {
		if g.prompt != nil {
			first = promptText(g.prompt, r.storedText(g.prompt.Text))
			break
		}
	}
	pre = originalRequest(first)

	body = newBody(0)
	r.legs = append(r.legs, 1)
	for _, g := range groups {
		if g.prompt == nil && len(g.obs) == 0 && len(g.summaries) == 0 {
			continue
		}
		body.line(turnRule)
		body.blank()
		if p := g.prompt; p != nil {
			clock := r.when.format(p.Created)
			shown := r.storedText(p.Text)
			msg := promptText(p, shown)
			r.outline = append(r.outline, outlineItem{line: body.next(), clock: clock, user: shown})
			if msg == "" {
				msg = "*(private)*"
			}
			body.line(heading(userWho, clock))
			body.line(verbatim(msg))
			body.blank()
		}
		r.observations(body, g.obs)
		for _, s := range g.summaries {
			if q := r.summaryQuote(s); q != "" {
				body.line(q)
				body.blank()
			}
		}
	}
	r.state.Task = r.reconstructedTask(m)
	return pre, body
}

// promptText is a stored prompt as the bottle shows it, from its text as
// text made it (msg), marking where claude-mem (or bottled's own read cap)
// cut it.
func promptText(p *sources.Prompt, msg string) string {
	switch {
	case msg == "":
		return ""
	case p.Clipped:
		msg += fmt.Sprintf("\n\n[truncated at %d chars]", textcut.Len(p.Text, textcut.UTF16))
	case p.CutByClaudeMem:
		msg += "\n\n[truncated at 4000 chars]"
	}
	return msg
}

// summaryQuote is a summary as a quoted block under summaryHeading, which
// says plainly that the text is claude-mem's, not the assistant's.
func (r *renderer) summaryQuote(s sources.Summary) string {
	fields := []struct{ name, value string }{
		{"Request", s.Request}, {"Investigated", s.Investigated}, {"Learned", s.Learned},
		{"Completed", s.Completed}, {"Next steps", s.NextSteps}, {"Notes", s.Notes},
	}
	var b strings.Builder
	for _, f := range fields {
		v := r.storedText(f.value)
		if v == "" {
			continue
		}
		b.WriteString("\n> **" + f.name + ":** " + strings.ReplaceAll(v, "\n", "\n> "))
	}
	if b.Len() == 0 {
		return ""
	}
	return summaryHeading + b.String()
}

// reconstructedTask is the latest summary's request when it covers the
// last prompt, else the last prompt.
func (r *renderer) reconstructedTask(m *sources.ClaudeMem) string {
	var last *sources.Prompt
	for i := range m.Prompts {
		if storedStripped(m.Prompts[i].Text) != "" {
			last = &m.Prompts[i]
		}
	}
	for i := len(m.Summaries) - 1; i >= 0; i-- {
		s := m.Summaries[i]
		if req := r.storedText(s.Request); req != "" && (last == nil || s.PromptNumber >= last.Number) {
			return firstWords(req, taskMax)
		}
	}
	if last != nil {
		return firstWords(r.storedText(last.Text), taskMax)
	}
	return ""
}
