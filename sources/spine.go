package sources

import (
	"slices"
	"strings"
	"time"
)

// BuildSpine builds the spine of a session from the parse state of its
// transcript files, oldest first: the predecessors a session chain rolled
// over from, then the session's own file. It reads the state and does not
// change it.
//
// The spine is the records in file order, minus records repeated across
// files (the first copy wins), minus the branches a rewind abandoned
// (transcript-format.md §5, approach B), with split assistant messages
// regrouped by message id and steering messages resolved.
//
// Side-question transcripts among the files (see ChainFiles) are not laid
// end to end with the others: each adds its question and answer where
// they were asked (see addAsides).
func BuildSpine(sessionID string, files []*Transcript) *Spine {
	sp, _ := buildSpine(sessionID, files)
	return sp
}

// buildSpine is BuildSpine, which also returns what a SpineBuilder needs
// to extend the spine it built (see SpineBuilder.extend).
func buildSpine(sessionID string, files []*Transcript) (*Spine, *spineState) {
	var chain, asides []*Transcript
	for _, t := range files {
		if t.aside {
			asides = append(asides, t)
		} else {
			chain = append(chain, t)
		}
	}
	g := joinChain(chain)
	st := &spineState{nodeBase: g.lastNode, idBase: g.lastBase, lastNodes: len(g.nodes) - g.lastNode}
	st.abandoned, st.promptParents = g.abandonedBranches()
	abandoned := st.abandoned
	var steering map[int]steer
	steering, st.steerTail = g.steeringMessages()
	var copies map[int]bool
	copies, st.replay = g.replayedPrompts(abandoned)

	sp := spineHeader(sessionID, files)
	msgs := make(map[string]int, len(g.nodes)/4) // message id → index of its entry
	var blocks [][]*record                       // per assistant entry, its blocks
	var results map[string]uint8                 // tool_use id → what its result said
	lastStart := 0                               // node index of the last assistant entry's first block
	for i, n := range g.nodes {
		if n.firstOfFile {
			// Entries of a later file of the chain follow a roll-over.
			sp.addCompaction(Entry{Kind: EntryCompaction, Time: n.rec.time, Session: n.session})
		}
		if n.gid >= 0 && abandoned[n.gid] {
			continue
		}
		r := n.rec
		if r.kind == recUser && r.class == userCommand && !hasArgs(r.text) {
			answered, decided := g.commandAnswered(i, abandoned)
			st.undecided = st.undecided || !decided
			if !answered {
				continue // run by Claude Code itself, not a message to the model
			}
		}
		switch {
		case r.kind == recUser && (r.class == userGenuine || r.class == userCommand),
			r.kind == recQueued && r.class == userGenuine:
			if copies[i] {
				continue // a copy of an earlier turn, written again under a new uuid
			}
			sp.Entries = append(sp.Entries, userEntry(r, n.session))
		case (r.kind == recRemove || r.kind == recEnqueue) && steering[i].text != "":
			q := steering[i]
			sp.Entries = append(sp.Entries, Entry{Kind: EntryUser, Time: q.time, Text: q.text,
				Steering: true, Undelivered: q.undelivered, Session: n.session})
		case r.kind == recAssistant:
			if k, ok := msgs[r.msg]; ok {
				blocks[k] = append(blocks[k], r)
				continue
			}
			msgs[r.msg], lastStart = len(sp.Entries), i
			for len(blocks) <= len(sp.Entries) {
				blocks = append(blocks, nil)
			}
			blocks[len(sp.Entries)] = []*record{r}
			sp.Entries = append(sp.Entries, assistantEntry(r, n.session))
		case r.kind == recCompact:
			sp.addCompaction(Entry{Kind: EntryCompaction, Time: r.time, Trigger: r.trigger, Session: n.session})
		case r.kind == recNode && r.result != 0:
			addResult(&results, r)
		}
	}
	fillAssistants(sp.Entries, blocks, results)
	st.msgs, st.results, st.targets = msgs, results, map[string]bool{}
	added := markCreatedLast(sp.Entries, results, st.targets)
	if k := len(sp.Entries) - 1; k >= 0 && sp.Entries[k].Kind == EntryAssistant {
		st.last = &lastMessage{entry: k, added: added}
		msg := blocks[k][0].msg
		for i := lastStart; i < len(g.nodes); i++ {
			if n := g.nodes[i]; n.rec.kind == recAssistant && n.rec.msg == msg && (n.gid < 0 || !abandoned[n.gid]) {
				st.last.blocks = append(st.last.blocks, i)
			}
		}
	}
	for _, t := range asides {
		sp.addAside(t)
	}
	return sp, st
}

// spineHeader returns a spine of files with no entries yet: what it
// says of the files themselves.
func spineHeader(sessionID string, files []*Transcript) *Spine {
	sp := &Spine{SessionID: sessionID}
	for _, t := range files {
		sp.Files = append(sp.Files, t.State())
		sp.Malformed += t.malformed
		sp.Unknown.Add(&t.unknown)
		if sp.CWD == "" {
			sp.CWD = t.cwd
		}
		if sp.Started.IsZero() {
			sp.Started = t.started
		}
	}
	return sp
}

// fillAssistants fills the assistant entries from their blocks (blocks[k]
// those of entries[k], nil for an entry of another kind). Their deeds and
// tool_use ids are cut from one array each: growing a slice per entry
// cost a fifth of the spine's build in a long session
// (BenchmarkRender100MB's, by its profile).
func fillAssistants(entries []Entry, blocks [][]*record, results map[string]uint8) {
	calls := 0
	for _, bs := range blocks {
		for _, b := range bs {
			if b.toolUse != "" {
				calls++
			}
		}
	}
	fill := filler{deeds: make([]Deed, 0, calls), ids: make([]string, 0, calls), results: results}
	for k, bs := range blocks {
		if bs != nil {
			fill.assistant(&entries[k], bs)
		}
	}
}

// userEntry is the entry of a user message (typed, or a queued one
// delivered as steering), as the session's file session holds it; the
// spine's builds, whole or from appended records, make it alike.
func userEntry(r *record, session string) Entry {
	return Entry{Kind: EntryUser, Time: r.time, Text: r.text, Images: r.images, Steering: r.kind == recQueued, Session: session}
}

// assistantEntry is the entry that an assistant message begins; its
// blocks are read into it later (fillAssistants).
func assistantEntry(r *record, session string) Entry {
	return Entry{Kind: EntryAssistant, Time: r.time, Session: session}
}

// addResult adds what a tool result record says of its call to results,
// made if nil, by tool_use id.
func addResult(results *map[string]uint8, r *record) {
	if *results == nil {
		*results = map[string]uint8{}
	}
	(*results)[r.toolUse] |= r.result
}

// markCreatedLast is markCreated, which also returns the paths that the
// last entry's deeds were the first to touch.
func markCreatedLast(entries []Entry, results map[string]uint8, seen map[string]bool) (added []string) {
	n := len(entries)
	if n == 0 {
		return nil
	}
	markCreated(entries[:n-1], results, seen)
	return markCreated(entries[n-1:], results, seen)
}

// markCreated decides which Writes made a new file: the ones whose result
// says so, and, where no result says, the ones to a path no earlier tool
// call of the session read, edited or wrote (Claude Code refuses to
// write over a file it has not read). seen holds the paths of the deeds
// before entries, and gets theirs; it returns those it added, in order.
func markCreated(entries []Entry, results map[string]uint8, seen map[string]bool) (added []string) {
	for i := range entries {
		e := &entries[i]
		for j := range e.Deeds {
			d := &e.Deeds[j]
			if !fileDeed(d.Kind) || d.Target == "" {
				continue
			}
			if d.Kind == DeedWrite {
				res := results[e.ToolUseIDs[d.call]]
				if res&resultTyped != 0 {
					d.Created = res&resultCreated != 0
				} else {
					d.Created = !seen[d.Target] && !d.Failed
				}
			}
			if !seen[d.Target] {
				seen[d.Target] = true
				added = append(added, d.Target)
			}
		}
	}
	return added
}

// addAside adds the /btw side questions of a side-question transcript, each
// with its answer, where they were asked: after the last entry said no
// later than the question. Such a transcript opens with a copy of the
// conversation so far (the context the question was answered in), then
// holds the question, wrapped in Claude Code's side-question reminder, and
// the answer. The questions are the user messages that carry the reminder
// (or, if none does, the last user message); an answer is the assistant's
// text after its question.
func (sp *Spine) addAside(t *Transcript) {
	var questions []int
	last := -1
	for i := range t.recs {
		if r := &t.recs[i]; r.kind == recUser && r.class == userGenuine {
			last = i
			if r.aside {
				questions = append(questions, i)
			}
		}
	}
	if len(questions) == 0 && last >= 0 {
		questions = []int{last}
	}
	for _, q := range questions {
		sp.insertAside(t, q)
	}
}

// insertAside inserts the question t.recs[q] and the answer after it.
func (sp *Spine) insertAside(t *Transcript, q int) {
	question := &t.recs[q]
	var said []string
	var saidAt time.Time
	for i := q + 1; i < len(t.recs); i++ {
		r := &t.recs[i]
		if r.kind == recUser && r.class == userGenuine {
			break
		}
		if r.kind == recAssistant && r.text != "" && !slices.Contains(said, r.text) {
			if len(said) == 0 {
				saidAt = r.time
			}
			said = append(said, r.text)
		}
	}
	owner := t.owner
	at := len(sp.Entries)
	for at > 0 && sp.Entries[at-1].Time.After(question.time) {
		at--
	}
	if at > 0 {
		owner = sp.Entries[at-1].Session
	}
	add := []Entry{{Kind: EntryUser, Time: question.time, Text: question.text, Images: question.images, Aside: true, Session: owner}}
	if len(said) > 0 {
		add = append(add, Entry{Kind: EntryAssistant, Time: saidAt, Text: strings.Join(said, "\n\n"), Aside: true, Session: owner})
	}
	sp.Entries = slices.Insert(sp.Entries, at, add...)
}

// addCompaction appends a compaction marker, merging it into a marker that
// directly precedes it: a roll-over file usually starts with its own
// compact_boundary.
func (sp *Spine) addCompaction(e Entry) {
	if n := len(sp.Entries); n > 0 && sp.Entries[n-1].Kind == EntryCompaction {
		last := &sp.Entries[n-1]
		if last.Trigger == "" {
			last.Trigger = e.Trigger
		}
		if e.Session != last.Session {
			last.Session = e.Session
		}
		return
	}
	if len(sp.Entries) == 0 {
		return // nothing before it to separate from
	}
	sp.Entries = append(sp.Entries, e)
}

// filler fills assistant entries, appending their deeds and tool_use ids
// to arrays shared by all of them (each entry's part capped, so that
// nothing appended to one runs into the next).
type filler struct {
	deeds   []Deed
	ids     []string
	results map[string]uint8
}

// assistant joins the blocks of one assistant message into its entry, in
// apiBlockIndex order when every block has one, else file order, with
// the deeds of its tool calls and what their results said.
func (f *filler) assistant(e *Entry, bs []*record) {
	if !slices.ContainsFunc(bs, func(r *record) bool { return r.blockIndex < 0 }) {
		slices.SortStableFunc(bs, func(a, b *record) int { return a.blockIndex - b.blockIndex })
	}
	var buf [4]string
	texts := buf[:0]
	deeds, ids := len(f.deeds), len(f.ids)
	for _, b := range bs {
		// A block seen twice in one message is a replayed copy.
		if b.text != "" && !slices.Contains(texts, b.text) {
			texts = append(texts, b.text) // trimmed when parsed
		}
		if b.toolUse != "" {
			if b.deed != nil && !slices.Contains(f.ids[ids:], b.toolUse) {
				d := *b.deed
				d.call = len(f.ids) - ids
				d.Failed = f.results[b.toolUse]&resultFailed != 0
				f.deeds = append(f.deeds, d)
			}
			f.ids = append(f.ids, b.toolUse)
		}
	}
	if len(f.deeds) > deeds {
		e.Deeds = f.deeds[deeds:len(f.deeds):len(f.deeds)]
	}
	if len(f.ids) > ids {
		e.ToolUseIDs = f.ids[ids:len(f.ids):len(f.ids)]
	}
	e.Text = strings.Join(texts, "\n\n")
}

// replayedPrompts finds the prompts that are copies of earlier turns: some
// builds (2.0.x on a restart, older resumes) wrote a session's history into
// the file again under new uuids, the assistant records keeping their
// message ids. A prompt is such a copy when an earlier prompt said the same
// and the first assistant message after it is one already seen: its answer
// was given before. A prompt the user really sent again (after an API error,
// or twice in a row) is answered by a new message, or by none. It also
// returns where the search stopped, to be taken up again (replay.next).
func (g *chainGraph) replayedPrompts(abandoned map[int32]bool) (map[int]bool, replay) {
	var copies map[int]bool
	p := replay{said: map[uint64]bool{}, seen: map[string]bool{}, waiting: -1}
	for i, n := range g.nodes {
		if n.gid >= 0 && abandoned[n.gid] {
			continue
		}
		if k := p.next(n.rec, i); k >= 0 {
			if copies == nil {
				copies = map[int]bool{}
			}
			copies[k] = true
		}
	}
	return copies, p
}

// replay is the state of replayedPrompts' search.
type replay struct {
	said    map[uint64]bool // typed hashes of the prompts so far
	seen    map[string]bool // assistant message ids so far
	waiting int             // a prompt said before, not answered yet; -1 if none
}

// next takes record r, at node index i, into the search, and returns the
// index of the prompt it shows to be a copy, or -1.
func (p *replay) next(r *record, i int) int {
	copied := -1
	switch {
	case r.kind == recUser && r.class == userGenuine:
		p.waiting = -1
		if p.said[r.typed] {
			p.waiting = i
		}
		p.said[r.typed] = true
	case r.kind == recAssistant:
		if p.waiting >= 0 && p.seen[r.msg] {
			copied = p.waiting
		}
		p.waiting = -1
		p.seen[r.msg] = true
	}
	return copied
}

// chainGraph is the records of a chain of files in order, with uuids
// mapped to ids shared across the files.
type chainGraph struct {
	nodes []chainNode
	count int32 // number of distinct ids
	// lastNode is the index of the last file's first node, and lastBase
	// the chain id of its first uuid: a uuid of the last file no earlier
	// one has gets lastBase plus its id in the file.
	lastNode int
	lastBase int32
}

type chainNode struct {
	rec         *record // points into the Transcript's records; never modified
	gid, parent int32   // ids across the chain; -1 when absent
	session     string
	firstOfFile bool
}

// joinChain lays the files' records end to end. A record whose uuid was
// already seen in an earlier file is a replayed copy and is dropped.
func joinChain(chain []*Transcript) *chainGraph {
	total := 0
	for _, t := range chain {
		total += len(t.recs)
	}
	g := &chainGraph{nodes: make([]chainNode, 0, total)}
	var seen map[string]int32 // uuid → chain id, only needed past the first file
	for fi, t := range chain {
		g.lastNode, g.lastBase = len(g.nodes), g.count
		remap := make([]int32, len(t.uuids))
		for id, uuid := range t.uuids {
			switch {
			case fi == 0:
				remap[id] = int32(id)
			default:
				if gid, ok := seen[uuid]; ok {
					remap[id] = gid
					continue
				}
				remap[id] = g.count + int32(id)
			}
		}
		hadRec := make(map[int32]bool)
		if fi > 0 {
			for _, n := range g.nodes {
				if n.gid >= 0 {
					hadRec[n.gid] = true
				}
			}
		}
		first := true
		for i := range t.recs {
			r := &t.recs[i]
			n := chainNode{rec: r, gid: -1, parent: -1, session: t.SessionID}
			if r.id >= 0 {
				n.gid = remap[r.id]
				if hadRec[n.gid] {
					continue
				}
			}
			if r.parent >= 0 {
				n.parent = remap[r.parent]
			}
			n.firstOfFile, first = first, false
			g.nodes = append(g.nodes, n)
		}
		if fi+1 < len(chain) {
			if seen == nil {
				seen = map[string]int32{}
			}
			for id, uuid := range t.uuids {
				if _, ok := seen[uuid]; !ok {
					seen[uuid] = remap[id]
				}
			}
		}
		g.count += int32(len(t.uuids))
	}
	return g
}

// isPrompt reports whether a record is something the user sent: a message,
// or a slash command with arguments (commands without are often Claude
// Code's own business; rewinds are told by messages).
func isPrompt(r *record) bool {
	return r.kind == recUser && (r.class == userGenuine || r.class == userCommand && hasArgs(r.text))
}

// commandAnswered decides, from the records that follow a slash command
// (after(k) is the k-th one, nil for a record to skip), whether the model
// answered it: its expanded body (an isMeta prompt, as /init, /review,
// custom commands and skills write) or an assistant message comes before
// any local output. A command whose output is local (/cost, /login, a
// custom command whose shell step failed) and no model turn answers is
// Claude Code's own business. The records decide, not a list of names, so
// commands added in later releases are handled.
func commandAnswered(n int, after func(k int) *record) bool {
	answered, _ := commandDecision(n, after)
	return answered
}

// commandDecision is commandAnswered, which also reports whether a record
// decided it: if none did, records appended later may.
func commandDecision(n int, after func(k int) *record) (answered, decided bool) {
	for k := range n {
		r := after(k)
		switch {
		case r == nil:
		case r.kind == recAssistant, r.kind == recUser && r.class == userMeta:
			return true, true
		case r.kind == recLocalOutput, r.kind == recCompact, r.kind == recQueued && r.class == userGenuine,
			r.kind == recUser && r.class != userInjected:
			return false, true
		}
	}
	return false, false
}

// commandAnswered applies commandDecision to the records that follow node
// i, leaving out abandoned branches.
func (g *chainGraph) commandAnswered(i int, abandoned map[int32]bool) (answered, decided bool) {
	return commandDecision(len(g.nodes)-i-1, func(k int) *record {
		if m := g.nodes[i+1+k]; m.gid < 0 || !abandoned[m.gid] {
			return m.rec
		}
		return nil
	})
}

// abandonedBranches finds rewind fork points (a record with two or more
// genuine user prompts as children) and marks every prompt but the newest,
// with all its descendants, as abandoned. Unknown parents are roots; cycles
// are walked once. It also returns the parents of prompts, each with the
// node indexes of its prompt children.
func (g *chainGraph) abandonedBranches() (abandoned map[int32]bool, prompts map[int32][]int) {
	prompts = map[int32][]int{} // parent id → node indexes of prompt children
	for i, n := range g.nodes {
		if isPrompt(n.rec) && n.parent >= 0 {
			prompts[n.parent] = append(prompts[n.parent], i)
		}
	}
	var roots []int32
	for _, kids := range prompts {
		if len(kids) < 2 {
			continue
		}
		keep := kids[0]
		for _, k := range kids[1:] {
			if !g.nodes[k].rec.time.Before(g.nodes[keep].rec.time) {
				keep = k
			}
		}
		for _, k := range kids {
			if k != keep {
				roots = append(roots, g.nodes[k].gid)
			}
		}
	}
	if len(roots) == 0 {
		return nil, prompts
	}
	children := map[int32][]int32{}
	for _, n := range g.nodes {
		if n.gid >= 0 && n.parent >= 0 {
			children[n.parent] = append(children[n.parent], n.gid)
		}
	}
	abandoned = map[int32]bool{}
	for len(roots) > 0 {
		id := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if abandoned[id] {
			continue
		}
		abandoned[id] = true
		roots = append(roots, children[id]...)
	}
	return abandoned, prompts
}

// steer is a steering message: text the user typed while Claude worked,
// delivered mid-turn, or never delivered at all.
type steer struct {
	text        string
	time        time.Time // when it was typed
	undelivered bool      // nothing ever consumed it
}

// queueSwapSlack is how much later than a queue operation the enqueue it
// consumed can be stamped. Claude Code can write an enqueue and the
// dequeue that takes it in the other order (seen in bursts of some forty
// enqueue/dequeue pairs of one text within half a second, 2.1.41–2.1.44);
// both are stamped when they happen, to the millisecond, so the enqueue's
// time is at most the operation's, give or take clock rounding. An enqueue
// stamped later than that is another message, which no earlier operation
// may take.
const queueSwapSlack = 50 * time.Millisecond

// steeringMessages replays Claude Code's input queue to find the steering
// messages: what the user typed while Claude worked and Claude Code
// delivered mid-turn (a remove), and what it typed that nothing consumed
// (the turn ended in an API error, or the file ends). It returns them
// keyed by the node index of the remove that delivered them, or of the
// enqueue of one never delivered.
//
// The queue holds more than what the user typed, and not everything in it
// leaves through a queue operation (a task notification can reach the
// model as a user record of its own), so a remove is not paired with the
// oldest entry blindly; it takes what Claude Code would take (see take).
// Entries are paired by content and order, so that one operation written
// out of place cannot shift every later pairing: an operation consumes
// only what was enqueued no later than it (one that finds nothing waits
// for the enqueue written after it), and a user record or queued_command
// attachment consumes the queued copies of its text (it is that text,
// delivered). A delivered text is not a steering message when a
// queued_command attachment shows it (newer builds record steering that
// way), or when the next message the user sends has the same text (it was
// run as a prompt).
//
// It also reports whether a genuine user message appended to the records
// could change them (tail): one that consumes a message still pending, or
// follows one delivered after the last user message.
func (g *chainGraph) steeringMessages() (out map[int]steer, tail bool) {
	var q inputQueue
	delivered := map[int]steer{}
	deliver := func(at int, op, from *record) {
		msg := from
		if op.queue != queueNone && (from == nil || from.typed != op.typed) {
			msg = op // the remove's own text is what was delivered
		}
		if msg != nil && msg.queue == queueTyped {
			delivered[at] = steer{text: msg.text, time: msg.time}
		}
	}
	for i, n := range g.nodes {
		r := n.rec
		switch r.kind {
		case recEnqueue:
			if d, ok := q.owed(r); ok {
				if d.rec.kind == recRemove {
					deliver(d.at, d.rec, r)
				}
				continue
			}
			q.push(r, i)
		case recDequeue, recRemove:
			from := q.take(r)
			if from == nil && r.queue == queueNone {
				q.owe(r, i)
			}
			if r.kind == recRemove {
				deliver(i, r, from)
			}
		case recPopAll:
			q.popTyped()
		case recUser, recQueued:
			if r.class == userGenuine && r.typed != 0 {
				q.consume(r.typed)
			}
		}
	}
	for _, e := range q.pending {
		if e.rec.queue == queueTyped {
			delivered[e.at] = steer{text: e.rec.text, time: e.rec.time, undelivered: true}
		}
	}
	if len(delivered) == 0 {
		return nil, false
	}
	queued := map[uint64]bool{}
	for _, n := range g.nodes {
		if n.rec.kind == recQueued {
			queued[n.rec.typed] = true
		}
	}
	out = map[int]steer{}
	nextPrompt, prompted := uint64(0), false // typed hash of the next genuine user message
	for i := len(g.nodes) - 1; i >= 0; i-- {
		r := g.nodes[i].rec
		if r.kind == recUser && r.class == userGenuine {
			nextPrompt, prompted = r.typed, true
		}
		if s, ok := delivered[i]; ok {
			tail = tail || s.undelivered || !prompted
			if h := typedHash(s.text); !queued[h] && (s.undelivered || h != nextPrompt) {
				out[i] = s
			}
		}
	}
	return out, tail
}

// inputQueue is Claude Code's queue of input waiting for the model, as the
// transcript's queue operations replay it.
type inputQueue struct {
	pending []queued // enqueue records, oldest first
	// debts are operations that found nothing to consume, oldest first:
	// the enqueue they consumed may be written after them.
	debts []queued
}

// queued is a queue record with its node index.
type queued struct {
	rec *record
	at  int
}

func (q *inputQueue) push(r *record, at int) { q.pending = append(q.pending, queued{r, at}) }

// owe records an operation that found nothing to consume.
func (q *inputQueue) owe(op *record, at int) { q.debts = append(q.debts, queued{op, at}) }

// owed returns the oldest operation still owed an entry that the enqueue
// e pays: one stamped no earlier than e (within queueSwapSlack). Debts
// that e is too late for can never be paid and are forgotten.
func (q *inputQueue) owed(e *record) (queued, bool) {
	q.debts = slices.DeleteFunc(q.debts, func(d queued) bool {
		return d.rec.time.IsZero() || e.time.IsZero() || enqueuedAfter(e, d.rec)
	})
	if len(q.debts) == 0 {
		return queued{}, false
	}
	d := q.debts[0]
	q.debts = q.debts[1:]
	return d, true
}

// consume drops the pending entries with the typed text h: a user record
// or queued_command attachment with that text is what they delivered.
func (q *inputQueue) consume(h uint64) {
	q.pending = slices.DeleteFunc(q.pending, func(e queued) bool { return e.rec.typed == h })
}

// take removes and returns the entry a dequeue or remove consumed, or nil.
// An operation that carries its text takes the pending entry with that
// text, else the oldest of the same kind. Without text (most builds):
// a remove delivers mid-turn, which Claude Code does for what the user
// typed and for its notifications, never for a slash command unless
// nothing else waits; a dequeue starts the next turn with what the user
// typed or a command before any notification. Only entries enqueued no
// later than the operation (within queueSwapSlack) can be taken.
func (q *inputQueue) take(op *record) *record {
	var prefs [][]queueKind // kinds to look for, in turn; oldest first within each
	switch {
	case op.queue != queueNone:
		if i := slices.IndexFunc(q.pending, func(e queued) bool { return e.rec.typed == op.typed }); i >= 0 {
			return q.remove(i)
		}
		prefs = [][]queueKind{{op.queue}}
	case op.kind == recRemove:
		prefs = [][]queueKind{{queueTyped}, {queueNotice}, {queueCommand}}
	default:
		prefs = [][]queueKind{{queueTyped, queueCommand}, {queueNotice}}
	}
	for _, kinds := range prefs {
		if i := slices.IndexFunc(q.pending, func(e queued) bool {
			return slices.Contains(kinds, e.rec.queue) && !enqueuedAfter(e.rec, op)
		}); i >= 0 {
			return q.remove(i)
		}
	}
	return nil
}

// enqueuedAfter reports whether entry e was stamped too late for op to
// have consumed it.
func enqueuedAfter(e, op *record) bool {
	return !e.time.IsZero() && !op.time.IsZero() && e.time.Sub(op.time) > queueSwapSlack
}

func (q *inputQueue) remove(i int) *record {
	r := q.pending[i].rec
	q.pending = slices.Delete(q.pending, i, i+1)
	return r
}

// popTyped takes back what the user typed: popAll is Claude Code putting
// queued messages back into the prompt box to be edited.
func (q *inputQueue) popTyped() {
	q.pending = slices.DeleteFunc(q.pending, func(e queued) bool { return e.rec.queue == queueTyped })
}
