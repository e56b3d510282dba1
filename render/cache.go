package render

import (
	"bytes"
	"slices"
	"time"
	"unsafe"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// Cache keeps, from one render of a session's full bottle to the next,
// each turn's rendered bytes with everything they were rendered from, so
// that a render after an append renders again only the turns whose inputs
// changed (in the common case the last one) and copies the others. The
// output is byte for byte a render without the cache.
//
// A turn's bytes are reused only when every input of that turn is equal
// to the one it was rendered from: its user message, assistant messages,
// inserts and observations (compared field by field, text included), the
// turn's place in the bottle (a rule before it, the outline still empty,
// the date last shown) and the render's redaction rules, time zone and
// project directory. A change of any of these renders the turn again; a
// change of the rules (another value), the time zone or the project drops
// the whole cache. A `<private>` tag that an appended block closes changes the
// text of the message it is in, which renders that message's turn again.
//
// The caller owns the Cache (the daemon keeps one per session, beside
// the session's parse state) and passes it in Input.Cache; Render updates
// it in place, so one Cache is used by one render at a time. The zero
// value is an empty cache.
type Cache struct {
	rules   *redact.Rules
	loc     *time.Location
	project string
	turns   []cachedTurn // by the turn's index among the bottle's turns
	// size is the sum of the turns' sizes, kept as they change (a turn
	// kept or dropped, an outline label made), so that a render after an
	// append measures the turns it rendered, not all it holds.
	size int64
}

// cachedTurn is a turn as rendered, with what it was rendered from.
type cachedTurn struct {
	in      turnInput
	bytes   []byte
	lines   int
	wrote   bool
	outline []outlineItem // lines relative to the turn's first line
	last    string        // the timeFormatter's date after the turn
}

// turnInput is everything a turn's rendering reads besides the render's
// rules, location and project: the turn's sources, copied (a spine is
// built afresh for each render, and its slices must not alias the ones
// kept here), and its place in the bottle.
type turnInput struct {
	rule, outlineEmpty bool
	when               string // the date last shown before the turn
	hasUser            bool
	user               sources.Entry
	assistant          []sources.Entry
	inserts            []insertInput
	obs                []sources.Observation
}

type insertInput struct {
	at        int
	user      sources.Entry
	hasAnswer bool
	answer    sources.Entry
}

// Size estimates the memory the cache holds: the rendered bytes, the
// inputs kept and the structs that hold them (strings the spine shares
// with the parse state are counted again, which errs on the high side).
func (c *Cache) Size() int64 {
	if c == nil {
		return 0
	}
	return c.size
}

// begin readies the cache for a render by rules, loc and project: a
// cache made with any other is dropped. Rules are the same only as the
// same value (a value's rules never change): rules loaded again drop the
// cache even when they say the same.
func (c *Cache) begin(rules *redact.Rules, loc *time.Location, project string) {
	if c.rules != rules || c.loc != loc || c.project != project {
		*c = Cache{rules: rules, loc: loc, project: project}
	}
}

// end drops what is kept of turns past the n the render had.
func (c *Cache) end(n int) {
	if len(c.turns) > n {
		for i := range c.turns[n:] {
			c.size -= c.turns[n+i].size()
		}
		clear(c.turns[n:])
		c.turns = c.turns[:n]
	}
}

// keep makes ct the kept rendering of turn i.
func (c *Cache) keep(i int, ct cachedTurn) {
	for len(c.turns) <= i {
		c.turns = append(c.turns, cachedTurn{})
		c.size += c.turns[len(c.turns)-1].size()
	}
	c.size += ct.size() - c.turns[i].size()
	c.turns[i] = ct
}

// label keeps the label made for the kept outline item it.
func (c *Cache) label(it *outlineItem, label string) {
	c.size += int64(len(label) - len(it.label))
	it.label = label
}

// inputOf is what rendering t reads, beside the renderer's constants.
func (r *renderer) inputOf(t *turn, rule bool) turnInput {
	in := turnInput{rule: rule, outlineEmpty: len(r.outline) == 0, when: r.when.last}
	if t.user != nil {
		in.hasUser, in.user = true, cloneEntry(t.user)
	}
	in.assistant = make([]sources.Entry, len(t.assistant))
	for i, a := range t.assistant {
		in.assistant[i] = cloneEntry(a)
	}
	for _, ins := range t.inserts {
		ii := insertInput{at: ins.at, user: cloneEntry(ins.user)}
		if ins.answer != nil {
			ii.hasAnswer, ii.answer = true, cloneEntry(ins.answer)
		}
		in.inserts = append(in.inserts, ii)
	}
	in.obs = slices.Clone(t.obs)
	return in
}

// matches reports whether rendering t now would read exactly in.
func (r *renderer) matches(in *turnInput, t *turn, rule bool) bool {
	if in.rule != rule || in.outlineEmpty != (len(r.outline) == 0) || in.when != r.when.last ||
		in.hasUser != (t.user != nil) || len(in.assistant) != len(t.assistant) ||
		len(in.inserts) != len(t.inserts) || !slices.Equal(in.obs, t.obs) {
		return false
	}
	if t.user != nil && !sameEntry(&in.user, t.user) {
		return false
	}
	for i, a := range t.assistant {
		if !sameEntry(&in.assistant[i], a) {
			return false
		}
	}
	for i, ins := range t.inserts {
		k := &in.inserts[i]
		if k.at != ins.at || k.hasAnswer != (ins.answer != nil) || !sameEntry(&k.user, ins.user) ||
			ins.answer != nil && !sameEntry(&k.answer, ins.answer) {
			return false
		}
	}
	return true
}

// sameEntry reports whether two entries are equal in every field.
func sameEntry(a, b *sources.Entry) bool {
	return scalarsOf(a) == scalarsOf(b) && slices.Equal(a.ToolUseIDs, b.ToolUseIDs) && slices.Equal(a.Deeds, b.Deeds)
}

// entryScalars is sources.Entry without its slices, which sameEntry
// compares apart. TestSameEntrySeesEveryField fails when Entry gains a
// field that this or scalarsOf leaves out.
type entryScalars struct {
	Kind                         sources.EntryKind
	Time                         time.Time
	Text                         string
	Images                       int
	Steering, Aside, Undelivered bool
	Trigger, Session             string
}

func scalarsOf(e *sources.Entry) entryScalars {
	return entryScalars{Kind: e.Kind, Time: e.Time, Text: e.Text, Images: e.Images, Steering: e.Steering,
		Aside: e.Aside, Undelivered: e.Undelivered, Trigger: e.Trigger, Session: e.Session}
}

func cloneEntry(e *sources.Entry) sources.Entry {
	c := *e
	c.ToolUseIDs, c.Deeds = slices.Clone(e.ToolUseIDs), slices.Clone(e.Deeds)
	return c
}

// Sizes of what a cache keeps per turn besides text: in a session of
// short turns they are most of its memory (TestCacheSizeCoversHeap).
const (
	cachedTurnBytes  = int64(unsafe.Sizeof(cachedTurn{}))
	entryBytes       = int64(unsafe.Sizeof(sources.Entry{}))
	insertBytes      = int64(unsafe.Sizeof(insertInput{}))
	deedBytes        = int64(unsafe.Sizeof(sources.Deed{}))
	stringBytes      = int64(unsafe.Sizeof(""))
	observationBytes = int64(unsafe.Sizeof(sources.Observation{}))
	outlineItemBytes = int64(unsafe.Sizeof(outlineItem{}))
)

// size estimates the memory of a turn as kept: its bytes, its outline
// items and its inputs.
func (ct *cachedTurn) size() int64 {
	n := cachedTurnBytes + int64(cap(ct.bytes)) + int64(len(ct.last))
	for _, it := range ct.outline {
		n += outlineItemBytes + int64(len(it.clock)+len(it.label))
	}
	return n + ct.in.size()
}

// size estimates the memory of a turn's kept inputs.
func (in *turnInput) size() int64 {
	n := int64(len(in.when)) + entrySize(&in.user)
	for i := range in.assistant {
		n += entryBytes + entrySize(&in.assistant[i])
	}
	for i := range in.inserts {
		n += insertBytes + entrySize(&in.inserts[i].user) + entrySize(&in.inserts[i].answer)
	}
	for _, o := range in.obs {
		n += observationBytes + int64(len(o.Type)+len(o.Title)+len(o.Subtitle)+len(o.Narrative)+len(o.Text))
	}
	return n
}

// entrySize is the memory an entry refers to, beside its own struct. The
// strings of its deeds and tool_use ids are the parse state's, always
// (an assistant's text is joined from its blocks, a new string), so only
// the arrays that the cache copies count.
func entrySize(e *sources.Entry) int64 {
	return int64(len(e.Text)) + deedBytes*int64(len(e.Deeds)) + stringBytes*int64(len(e.ToolUseIDs))
}

// cachedTurn writes turn t (the bottle's turn number i) as turn would,
// from the cache when it holds t as rendered from the same inputs, and
// keeps what it rendered otherwise. Without a cache it is turn.
func (r *renderer) cachedTurn(body *doc, i int, t *turn, rule bool) bool {
	c := r.in.Cache
	if c == nil {
		return r.turn(body, t, rule)
	}
	start := body.next()
	if i < len(c.turns) && r.matches(&c.turns[i].in, t, rule) {
		ct := &c.turns[i]
		body.splice(ct.bytes, ct.lines)
		for k := range ct.outline {
			it := ct.outline[k]
			it.line += start
			it.kept = &ct.outline[k]
			r.outline = append(r.outline, it)
		}
		r.when.last = ct.last
		return ct.wrote
	}
	in := r.inputOf(t, rule)
	// The turn is rendered into the renderer's scratch buffer and kept
	// in a slice of its own size.
	fresh, items := &r.scratch, len(r.outline)
	fresh.b.Reset()
	fresh.lines = body.lines
	wrote := r.turn(fresh, t, rule)
	ct := cachedTurn{in: in, bytes: bytes.Clone(fresh.b.Bytes()), lines: fresh.lines - body.lines, wrote: wrote, last: r.when.last}
	body.splice(ct.bytes, ct.lines)
	for k := items; k < len(r.outline); k++ {
		it := r.outline[k]
		it.line -= start
		ct.outline = append(ct.outline, it)
	}
	c.keep(i, ct)
	return wrote
}
