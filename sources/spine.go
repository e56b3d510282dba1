package sources

import (
	"slices"
	"strings"
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
func BuildSpine(sessionID string, chain []*Transcript) *Spine {
	g := joinChain(chain)
	abandoned := g.abandonedBranches()
	steering := g.steeringMessages()

	sp := &Spine{SessionID: sessionID}
	for _, t := range chain {
		sp.Files = append(sp.Files, t.State())
		sp.Malformed += t.malformed
		if sp.CWD == "" {
			sp.CWD = t.cwd
		}
		if sp.Started.IsZero() {
			sp.Started = t.started
		}
	}

	msgs := make(map[string]int, len(g.nodes)/4) // message id → index of its entry
	var blocks [][]*record                       // per assistant entry, its blocks
	for i, n := range g.nodes {
		if n.firstOfFile {
			// Entries of a later file of the chain follow a roll-over.
			sp.addCompaction(Entry{Kind: EntryCompaction, Time: n.rec.time, Session: n.session})
		}
		if n.gid >= 0 && abandoned[n.gid] {
			continue
		}
		r := n.rec
		switch {
		case r.kind == recUser && r.class == userGenuine,
			r.kind == recQueued && r.class == userGenuine:
			if sp.repeats(r) {
				continue // a copy replayed under a new uuid (older resumes did that)
			}
			sp.Entries = append(sp.Entries, Entry{Kind: EntryUser, Time: r.time, Text: r.text,
				Images: r.images, Steering: r.kind == recQueued, Session: n.session})
		case r.kind == recRemove && steering[i] != nil:
			q := steering[i]
			sp.Entries = append(sp.Entries, Entry{Kind: EntryUser, Time: q.time, Text: q.text,
				Steering: true, Session: n.session})
		case r.kind == recAssistant:
			if k, ok := msgs[r.msg]; ok {
				blocks[k] = append(blocks[k], r)
				continue
			}
			msgs[r.msg] = len(sp.Entries)
			for len(blocks) <= len(sp.Entries) {
				blocks = append(blocks, nil)
			}
			blocks[len(sp.Entries)] = []*record{r}
			sp.Entries = append(sp.Entries, Entry{Kind: EntryAssistant, Time: r.time, Session: n.session})
		case r.kind == recCompact:
			sp.addCompaction(Entry{Kind: EntryCompaction, Time: r.time, Trigger: r.trigger, Session: n.session})
		}
	}
	for k, bs := range blocks {
		if bs != nil {
			fillAssistant(&sp.Entries[k], bs)
		}
	}
	return sp
}

// repeats reports whether a user record says exactly what the entry just
// before it said: nothing can come between a message and its copy.
func (sp *Spine) repeats(r *record) bool {
	n := len(sp.Entries)
	return n > 0 && sp.Entries[n-1].Kind == EntryUser && sp.Entries[n-1].Text == r.text && sp.Entries[n-1].Images == r.images
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

// fillAssistant joins the blocks of one assistant message into its entry,
// in apiBlockIndex order when every block has one, else file order.
func fillAssistant(e *Entry, bs []*record) {
	if !slices.ContainsFunc(bs, func(r *record) bool { return r.blockIndex < 0 }) {
		slices.SortStableFunc(bs, func(a, b *record) int { return a.blockIndex - b.blockIndex })
	}
	var texts []string
	for _, b := range bs {
		// A block seen twice in one message is a replayed copy.
		if b.text != "" && !slices.Contains(texts, b.text) {
			texts = append(texts, b.text) // trimmed when parsed
		}
		if b.toolUse != "" {
			e.ToolUseIDs = append(e.ToolUseIDs, b.toolUse)
		}
	}
	e.Text = strings.Join(texts, "\n\n")
}

// chainGraph is the records of a chain of files in order, with uuids
// mapped to ids shared across the files.
type chainGraph struct {
	nodes []chainNode
	count int32 // number of distinct ids
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

// abandonedBranches finds rewind fork points (a record with two or more
// genuine user prompts as children) and marks every prompt but the newest,
// with all its descendants, as abandoned. Unknown parents are roots; cycles
// are walked once.
func (g *chainGraph) abandonedBranches() map[int32]bool {
	prompts := map[int32][]int{} // parent id → node indexes of prompt children
	for i, n := range g.nodes {
		if n.rec.kind == recUser && n.rec.class == userGenuine && n.parent >= 0 {
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
		return nil
	}
	children := map[int32][]int32{}
	for _, n := range g.nodes {
		if n.gid >= 0 && n.parent >= 0 {
			children[n.parent] = append(children[n.parent], n.gid)
		}
	}
	abandoned := map[int32]bool{}
	for len(roots) > 0 {
		id := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if abandoned[id] {
			continue
		}
		abandoned[id] = true
		roots = append(roots, children[id]...)
	}
	return abandoned
}

// steeringMessages pairs queue-operation records (2.1.3x): an enqueue
// consumed by a remove is a message the user typed while Claude worked,
// unless the same text later arrives as a user record (it was run as a
// normal prompt or command) or as a queued_command attachment (newer builds
// record steering that way). It returns the enqueue record for each remove
// that delivered a steering message, keyed by the remove's node index.
func (g *chainGraph) steeringMessages() map[int]*record {
	var pending []int // enqueue node indexes, oldest first
	pairs := map[int]int{}
	for i, n := range g.nodes {
		switch n.rec.kind {
		case recEnqueue:
			pending = append(pending, i)
		case recDequeue, recRemove:
			if len(pending) == 0 {
				continue
			}
			if n.rec.kind == recRemove {
				pairs[i] = pending[0]
			}
			pending = pending[1:]
		case recPopAll:
			pending = nil
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	later := map[uint64]bool{} // typed texts of user records after the walk's position
	out := map[int]*record{}
	enqueueOf := map[int][]int{} // enqueue index → removes it fed
	for rm, enq := range pairs {
		enqueueOf[enq] = append(enqueueOf[enq], rm)
	}
	queued := map[uint64]bool{}
	for _, n := range g.nodes {
		if n.rec.kind == recQueued {
			queued[n.rec.typed] = true
		}
	}
	for i := len(g.nodes) - 1; i >= 0; i-- {
		r := g.nodes[i].rec
		if r.kind == recUser && r.typed != 0 {
			later[r.typed] = true
		}
		for _, rm := range enqueueOf[i] {
			if r.class == userGenuine && !later[r.typed] && !queued[r.typed] {
				out[rm] = r
			}
		}
	}
	return out
}
