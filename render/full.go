package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/sources"
)

// turn is a user message with what followed it up to the next one, or the
// assistant continuing on its own (after a compaction) when user is nil.
// inserts are the user's words said during the turn that are not a turn of
// their own: shown where they were said, between the assistant's texts,
// they do not take the texts after them as their answer.
type turn struct {
	user      *sources.Entry
	assistant []*sources.Entry
	inserts   []insert
	obs       []sources.Observation
}

// insert is a message shown inside a turn, after its first at assistant
// messages: one typed while Claude worked that never reached it, or a
// /btw side question with its answer.
type insert struct {
	at     int
	user   *sources.Entry
	answer *sources.Entry // a side question's; nil if none is recorded
}

// isInsert reports whether a spine entry is shown inside the turn it was
// said in rather than starting one.
func isInsert(e *sources.Entry) bool {
	return e.Kind == sources.EntryUser && (e.Undelivered || e.Aside)
}

func (t *turn) start() time.Time {
	if t.user != nil {
		return t.user.Time
	}
	if len(t.assistant) > 0 {
		return t.assistant[0].Time
	}
	return time.Time{}
}

// segment is a turn or a compaction marker, in spine order. rollover
// marks a compaction that moved the conversation into a new session file.
type segment struct {
	turn     *turn
	compact  *sources.Entry
	rollover bool
}

func segments(sp *sources.Spine) []segment {
	var segs []segment
	var cur *turn
	for i := range sp.Entries {
		e := &sp.Entries[i]
		switch {
		case isInsert(e):
			if cur == nil {
				cur = &turn{}
				segs = append(segs, segment{turn: cur})
			}
			cur.inserts = append(cur.inserts, insert{at: len(cur.assistant), user: e})
		case e.Kind == sources.EntryAssistant && e.Aside:
			if cur != nil && len(cur.inserts) > 0 {
				if last := &cur.inserts[len(cur.inserts)-1]; last.user.Aside && last.answer == nil {
					last.answer = e
				}
			}
		case e.Kind == sources.EntryUser:
			cur = &turn{user: e}
			segs = append(segs, segment{turn: cur})
		case e.Kind == sources.EntryAssistant:
			if cur == nil {
				cur = &turn{}
				segs = append(segs, segment{turn: cur})
			}
			cur.assistant = append(cur.assistant, e)
		case e.Kind == sources.EntryCompaction:
			rollover := i > 0 && sp.Entries[i-1].Session != e.Session
			segs = append(segs, segment{compact: e, rollover: rollover})
			cur = nil
		}
	}
	return segs
}

// full renders from the transcript, with observations placed under the
// turns they belong to.
func (r *renderer) full() (pre, body *doc) {
	sp := r.in.Spine
	r.project = oneLine(r.text(sp.CWD))
	r.started = sp.Started
	r.when = timeFormatter{loc: r.in.Location}
	r.state.Transcripts = sp.Files
	// The names come from the transcript: like every string the bottle
	// holds, they are redacted.
	r.state.Unknown = sp.Unknown.Renamed(r.in.Rules.Redact)
	if r.in.ClaudeMem != nil {
		c := r.in.ClaudeMem.Cursor
		r.state.ClaudeMem = &c
	}
	segs := segments(sp)
	var turns []*turn
	for _, s := range segs {
		if s.turn != nil {
			turns = append(turns, s.turn)
		}
	}
	if m := r.in.ClaudeMem; m != nil {
		placeObservations(turns, m)
	}

	first := ""
	for _, t := range turns {
		if t.user != nil {
			first = r.userText(t.user)
			break
		}
	}
	pre = originalRequest(first)

	// With a cache, the turns are spliced in (doc.splice) and the body's
	// own buffer holds only the compaction markers.
	body = &doc{}
	if r.in.Cache == nil {
		body = newBody(spineSize(sp))
	}
	leg := 1
	r.legs = append(r.legs, 1)
	ruled := false // a rule was written and nothing since
	if c := r.in.Cache; c != nil {
		c.begin(r.in.Rules, r.in.Location, r.project)
		defer c.end(len(turns))
	}
	ti := 0 // the turn's index among turns
	for _, s := range segs {
		if s.compact != nil {
			leg++
			if !ruled {
				body.line(turnRule)
				body.blank()
			}
			r.legs = append(r.legs, body.next())
			r.compactionMarker(body, s, leg)
			ruled = true
			continue
		}
		if r.cachedTurn(body, ti, s.turn, !ruled) {
			ruled = false
		}
		ti++
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].user != nil {
			if msg := r.userText(turns[i].user); msg != "" {
				r.state.Task = firstWords(msg, taskMax)
				break
			}
		}
	}
	return pre, body
}

// originalRequest is the section that repeats the session's first user
// message, which frames everything after it (empty when there is none).
func originalRequest(msg string) *doc {
	d := &doc{}
	if msg != "" {
		d.line(originalHeading)
		d.line(verbatim(msg))
		d.blank()
	}
	return d
}

// spineSize estimates the body's size, so its buffer is allocated once.
func spineSize(sp *sources.Spine) int {
	n := 0
	for _, e := range sp.Entries {
		n += len(e.Text) + 64 + 48*len(e.Deeds)
	}
	return n
}

// taskMax bounds the one-line statement of the current task.
const taskMax = 200

// triggerMax bounds the compaction trigger shown on a leg's heading:
// Claude Code writes "auto" or "manual"; a longer one was not written by
// it, and is shown only in part.
const triggerMax = 80

func (r *renderer) compactionMarker(body *doc, s segment, leg int) {
	e := s.compact
	how := "compacted"
	if trigger := clip(oneLine(r.text(e.Trigger)), triggerMax); trigger != "" {
		how += " (" + trigger + ")"
	}
	if s.rollover {
		how += ", continued in session " + e.Session
	}
	clock := r.when.format(e.Time)
	h := fmt.Sprintf("%s%d — %s", legPrefix, leg, how)
	if clock != "" {
		h += " at " + clock
	}
	r.outline = append(r.outline, outlineItem{line: body.next(), label: "— " + how + " —", clock: clock, compact: true})
	body.line(h)
	body.blank()
}

// userText is a user message as the bottle shows it: stripped, with a
// placeholder per image.
func (r *renderer) userText(e *sources.Entry) string { return withImages(r.text(e.Text), e.Images) }

func withImages(msg string, images int) string {
	if images > 0 {
		msg = strings.TrimSpace(strings.Repeat("[image] ", images) + "\n\n" + msg)
	}
	return msg
}

// turn writes one turn, preceded by a rule unless rule is false (a leg
// heading already separates it). It reports whether it wrote anything.
func (r *renderer) turn(body *doc, t *turn, rule bool) bool {
	parts := r.turnParts(t)
	msg, stripped := "", ""
	if t.user != nil {
		stripped = r.text(t.user.Text)
		msg = withImages(stripped, t.user.Images)
		if msg == "" {
			msg = "*(private)*"
		}
	}
	if t.user == nil && len(parts) == 0 && len(t.obs) == 0 {
		return false
	}
	if rule {
		body.line(turnRule)
		body.blank()
	}
	if t.user != nil {
		clock := r.when.format(t.user.Time)
		who := userWho
		if t.user.Steering {
			who = steeringWho
		}
		r.outline = append(r.outline, outlineItem{line: body.next(), clock: clock, user: stripped, images: t.user.Images})
		body.line(heading(who, clock))
		body.line(verbatim(msg))
		body.blank()
	} else if len(r.outline) == 0 && len(parts) > 0 && parts[0].insert == nil {
		r.outline = append(r.outline, outlineItem{line: body.next(), clock: r.when.format(t.start()), label: "— Claude continues —"})
	}
	r.observations(body, t.obs)
	headed := false
	for _, p := range parts {
		if p.insert != nil {
			r.insert(body, p.insert)
			headed = false
			continue
		}
		if len(p.trail) > 0 {
			body.line(trailHeading)
			for _, l := range p.trail {
				body.line(trailItem + l)
			}
			body.blank()
			continue
		}
		if !headed {
			body.line(heading(assistantWho, r.when.format(p.at)))
			headed = true
		}
		body.line(verbatim(p.said))
		body.blank()
	}
	return true
}

// turnPart is a text of the assistant's, the trail of what it did between
// two texts, or an insert: a message of the user's said during the turn.
type turnPart struct {
	said   string
	at     time.Time
	trail  []string
	insert *insert
}

// turnParts lays out what the assistant said and did in a turn, in order:
// each message's text, then its deeds; the deeds of messages without text
// between them make one trail. Inserts stand after the messages before
// them, their deeds included.
func (r *renderer) turnParts(t *turn) []turnPart {
	var parts []turnPart
	var deeds []sources.Deed
	flush := func() {
		if lines := r.trailLines(deeds); len(lines) > 0 {
			parts = append(parts, turnPart{trail: lines})
		}
		deeds = deeds[:0]
	}
	next := 0 // the next insert
	flushInserts := func(upTo int) {
		for ; next < len(t.inserts) && t.inserts[next].at <= upTo; next++ {
			flush()
			parts = append(parts, turnPart{insert: &t.inserts[next]})
		}
	}
	for k, a := range t.assistant {
		flushInserts(k)
		if msg := r.text(a.Text); msg != "" {
			flush()
			parts = append(parts, turnPart{said: msg, at: a.Time})
		}
		deeds = append(deeds, a.Deeds...)
	}
	flushInserts(len(t.assistant))
	flush()
	return parts
}

// insert writes a message shown inside a turn, and lists it in the outline.
func (r *renderer) insert(body *doc, in *insert) {
	e := in.user
	who, tag := undeliveredWho, "(not delivered) "
	if e.Aside {
		who, tag = asideWho, "(aside) "
	}
	clock := r.when.format(e.Time)
	stripped := r.text(e.Text)
	msg := withImages(stripped, e.Images)
	if msg == "" {
		msg = "*(private)*"
	}
	r.outline = append(r.outline, outlineItem{line: body.next(), clock: clock, label: tag + outlineLabel(stripped, e.Images)})
	body.line(heading(who, clock))
	body.line(verbatim(msg))
	body.blank()
	if in.answer != nil {
		if answer := r.text(in.answer.Text); answer != "" {
			body.line(heading(asideAnswerWho, r.when.format(in.answer.Time)))
			body.line(verbatim(answer))
			body.blank()
		}
	}
}

func (r *renderer) observations(body *doc, obs []sources.Observation) {
	var lines []string
	for _, o := range obs {
		if l := r.observationLine(o); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	body.line(whatHappened)
	for _, l := range lines {
		body.line(observationItem + l)
	}
	body.blank()
}

// observationLine is "[#id] title — first clause of narrative".
func (r *renderer) observationLine(o sources.Observation) string {
	title := oneLine(r.storedText(o.Title))
	narrative := r.storedText(o.Narrative)
	if title == "" && narrative == "" {
		// A legacy row keeps everything in text: its first line is the title.
		legacy := r.storedText(o.Text)
		first, rest, _ := strings.Cut(legacy, "\n")
		title, narrative = oneLine(first), rest
	}
	if title == "" {
		title = oneLine(r.storedText(o.Subtitle))
	}
	clause := firstClause(narrative)
	switch {
	case title == "" && clause == "":
		return ""
	case title == "":
		return fmt.Sprintf("[#%d] %s", o.ID, clause)
	case clause == "":
		return fmt.Sprintf("[#%d] %s", o.ID, clip(title, clauseMax))
	}
	return fmt.Sprintf("[#%d] %s — %s", o.ID, clip(title, clauseMax), clause)
}
