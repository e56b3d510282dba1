package sources

import (
	"slices"
	"unsafe"
)

// SpineBuilder builds a session's spine again and again as its transcript
// grows: after an append to the newest file of the chain that only
// extends the conversation, from the records appended alone (extend);
// after anything else, and whenever a side question's transcript is
// among the files, with BuildSpine.
// Both give the same spine, to the last field.
//
// Its owner keeps it beside the parse state it builds from (the daemon's
// session, beside its Transcripts and render cache) and uses it from one
// goroutine at a time. The zero value is ready. A Spine it returns is its
// owner's until the next Build, which may change its last entry (an
// assistant message that the records appended add to) and share its
// entries' array.
type SpineBuilder struct {
	// files are the files the spine was built from, the chain's newest
	// last (the one extend reads the records appended to), and marks what
	// each held then.
	files []*Transcript
	marks []fileMark
	sp    *Spine      // the spine built last, of sp.SessionID
	st    *spineState // nil: the next Build builds from every record
	// held is what sp's entries hold in arrays of their own
	// (entriesHeld), kept as extend changes them, so that Size does not
	// walk every entry after each append.
	held int64

	// fallback says why the last Build did not extend the spine ("" if
	// it did): for this package's tests, which check each reason.
	fallback string
}

// fileMark is how much of a file a spine was built from.
type fileMark struct{ rewrites, recs, uuids int }

func markOf(t *Transcript) fileMark { return fileMark{t.Rewrites(), len(t.recs), len(t.uuids)} }

// spineState is what a build learned of the records beyond the spine
// itself, kept to decide whether, and how, records appended later change
// it. Each field is the full build's, kept up to date by extend.
type spineState struct {
	// The chain's graph numbers the newest file's records nodeBase on
	// and its uuids (those no earlier file has) idBase on; lastNodes is
	// how many nodes its records made (fewer than its records when
	// some were copies of an earlier file's, which the chain drops).
	nodeBase, lastNodes int
	idBase              int32
	abandoned           map[int32]bool   // ids of abandoned branches' records
	promptParents       map[int32][]int  // parent id → node indexes of its prompt children
	steerTail           bool             // a new user message could change a steering message
	replay              replay           // replayedPrompts' search, where it stopped
	undecided           bool             // a command waits for a later record to decide it
	msgs                map[string]int   // message id → index of its assistant entry
	results             map[string]uint8 // tool_use id → what its results said
	targets             map[string]bool  // paths the deeds so far touched (markCreated)
	// issued maps a tool_use id to the index of the entry that issued it
	// (-1 if several did); made when a result first needs it.
	issued map[string]int
	// last is the spine's last entry when it is an assistant message, to
	// which the records appended may add blocks or results.
	last *lastMessage
}

// lastMessage is an assistant entry that extend fills again from its
// blocks.
type lastMessage struct {
	entry  int      // its index in the spine
	blocks []int    // the node indexes of its blocks
	added  []string // the paths its deeds were the first of the spine to touch
}

// Build returns the spine of files, as BuildSpine(sessionID, files)
// would.
func (b *SpineBuilder) Build(sessionID string, files []*Transcript) *Spine {
	if sp := b.extend(sessionID, files); sp != nil {
		b.fallback = ""
		return sp
	}
	sp, st := buildSpine(sessionID, files)
	if len(files) == 0 || !extensible(files, st) {
		*b = SpineBuilder{fallback: b.fallback}
	} else {
		*b = SpineBuilder{files: slices.Clone(files), sp: sp, st: st, held: entriesHeld(sp.Entries), fallback: b.fallback}
		for _, f := range files {
			b.marks = append(b.marks, markOf(f))
		}
		if st.last != nil && st.last.blocks[0] < st.nodeBase {
			// Begun in an earlier file, which cannot be today (a later
			// file opens with a compaction marker): let a block
			// appended to it build in full.
			st.last = nil
		}
	}
	return sp
}

// extensible reports whether a spine of files that buildSpine built (st)
// can be extended by the records appended to the newest: one with
// records, each of which made a node, and no side question among the
// files.
func extensible(files []*Transcript, st *spineState) bool {
	t := files[len(files)-1]
	return !slices.ContainsFunc(files, func(f *Transcript) bool { return f.aside }) &&
		len(t.recs) > 0 && st.lastNodes == len(t.recs)
}

// Size estimates the memory the builder keeps beside the parse state: the
// spine's entries and what it learned of the records.
func (b *SpineBuilder) Size() int64 {
	if b.st == nil {
		return 0
	}
	const entry, mapEntry = int64(unsafe.Sizeof(Entry{})), 48
	st := b.st
	maps := len(st.abandoned) + len(st.promptParents) + len(st.replay.said) + len(st.replay.seen) +
		len(st.msgs) + len(st.results) + len(st.targets) + len(st.issued)
	return entry*int64(cap(b.sp.Entries)) + b.held + mapEntry*int64(maps)
}

// entriesHeld is the memory entries refer to in arrays of their own. The
// entries' texts are mostly the records' own strings, which the parse
// state counts; their deeds and tool_use ids are arrays of their own.
func entriesHeld(entries []Entry) int64 {
	var n int64
	for i := range entries {
		e := &entries[i]
		n += deedBytes*int64(len(e.Deeds)) + int64(unsafe.Sizeof(""))*int64(len(e.ToolUseIDs))
	}
	return n
}

// newest is the newest file the spine was built from, with what it held
// then.
func (b *SpineBuilder) newest() (*Transcript, fileMark) {
	n := len(b.files) - 1
	return b.files[n], b.marks[n]
}

// extend returns the spine of files built from the last one and the
// records appended to the newest file since (the only one of them that
// may have grown), or nil when it cannot be sure that
// those records change nothing the last spine holds (b.fallback says
// why). The records must only add to the conversation's end: each a new
// record whose parent is known, no rewind, no compaction, no queue
// operation or queued message, no slash command, no block of a message
// the spine already holds, no tool result that changes what a tool call
// of the spine did.
func (b *SpineBuilder) extend(sessionID string, files []*Transcript) *Spine {
	switch {
	case b.st == nil:
		b.fallback = "no state"
	case sessionID != b.sp.SessionID || !slices.Equal(files, b.files):
		b.fallback = "other files"
	case b.changed():
		b.fallback = "rewritten"
	case b.st.undecided && len(files[len(files)-1].recs) > b.marks[len(b.marks)-1].recs:
		b.fallback = "command undecided"
	default:
		b.fallback = ""
	}
	if b.fallback != "" {
		return nil
	}
	t, was := b.newest()
	st := b.st
	// Records are numbered as the chain's graph numbers them: the
	// newest file's record i is node nodeBase+i, its id id is idBase+id.
	from, prior := was.recs, len(b.sp.Entries)
	if why := b.graph(); why != "" {
		b.fallback = why
		return nil
	}
	abandoned := func(r *record) bool { return r.id >= 0 && st.abandoned[st.idBase+r.id] }
	sp := spineHeader(sessionID, files)
	sp.Entries = b.sp.Entries
	var copies map[int]bool // node indexes
	for i := from; i < len(t.recs); i++ {
		r := &t.recs[i]
		if abandoned(r) {
			continue
		}
		if k := st.replay.next(r, st.nodeBase+i); k >= 0 {
			if k < st.nodeBase+from {
				b.fallback = "replayed prompt"
				return nil
			}
			if copies == nil {
				copies = map[int]bool{}
			}
			copies[k] = true
		}
	}
	// The entries from lo on are built again: the new ones, and the last
	// one when it is an assistant message, which the records appended
	// may add blocks to, or results that change its deeds.
	// dropped is what the entries built again held.
	lo, dropped := prior, int64(0)
	var blocks [][]int // per entry from lo, the node indexes of its blocks
	if st.last != nil {
		lo = st.last.entry
		dropped = entriesHeld(sp.Entries[lo:])
		old := sp.Entries[lo]
		sp.Entries = append(sp.Entries[:lo], Entry{Kind: EntryAssistant, Time: old.Time, Session: old.Session})
		blocks = append(blocks, slices.Clone(st.last.blocks))
	}
	var late []string // tool_use ids of results to calls the spine has
	for i := from; i < len(t.recs); i++ {
		r := &t.recs[i]
		if abandoned(r) {
			continue
		}
		switch {
		case r.kind == recUser && r.class == userGenuine:
			if !copies[st.nodeBase+i] {
				sp.Entries = append(sp.Entries, userEntry(r, t.SessionID))
				blocks = append(blocks, nil)
			}
		case r.kind == recAssistant:
			if k, ok := st.msgs[r.msg]; ok {
				if k < lo {
					b.fallback = "message split across the append"
					return nil
				}
				blocks[k-lo] = append(blocks[k-lo], st.nodeBase+i)
				continue
			}
			st.msgs[r.msg] = len(sp.Entries)
			sp.Entries = append(sp.Entries, assistantEntry(r, t.SessionID))
			blocks = append(blocks, []int{st.nodeBase + i})
		case r.kind == recNode && r.result != 0:
			addResult(&st.results, r)
			late = append(late, r.toolUse)
		}
	}
	recs := make([][]*record, len(blocks))
	for k, bs := range blocks {
		for _, n := range bs {
			recs[k] = append(recs[k], &t.recs[n-st.nodeBase])
		}
	}
	fillAssistants(sp.Entries[lo:], recs, st.results)
	if why := st.lateResults(sp.Entries, lo, late); why != "" {
		b.fallback = why
		return nil
	}
	if st.last != nil {
		for _, p := range st.last.added {
			delete(st.targets, p)
		}
	}
	added := markCreatedLast(sp.Entries[lo:], st.results, st.targets)
	st.last = nil
	if k := len(sp.Entries) - 1; k >= 0 && sp.Entries[k].Kind == EntryAssistant {
		st.last = &lastMessage{entry: k, blocks: blocks[k-lo], added: added}
	}
	b.sp, b.held = sp, b.held-dropped+entriesHeld(sp.Entries[lo:])
	b.marks[len(b.marks)-1] = markOf(t)
	st.lastNodes = len(t.recs)
	return sp
}

// changed reports whether the files hold other records than the spine
// was built from, beyond records appended to the newest: a file read
// again from the start, an older one grown.
func (b *SpineBuilder) changed() bool {
	for i, f := range b.files {
		m, was := markOf(f), b.marks[i]
		if m.rewrites != was.rewrites || m.recs < was.recs || i < len(b.files)-1 && m != was {
			return true
		}
	}
	return false
}

// graph checks that the records of t from index from on add nothing but
// new records at the conversation's end, and marks those that continue
// an abandoned branch as abandoned. It returns why not, or "".
//
// A record's uuid must be new (interned past the last build: no earlier
// record names it as its parent, so it has no children the last build
// placed) and its parent one already known (so that whether it is
// abandoned is its parent's), and no prompt may be a second prompt child
// of its parent (a rewind, which may abandon what the spine holds). The
// records no later build of the graph could treat otherwise (queue
// operations, queued messages, slash commands, compactions, a prompt that
// may consume or follow a steering message) are refused too.
//
// In a chain of files, a uuid of the newest file that an earlier file
// holds too is refused, as a record's or as a parent's: the chain gives it
// the earlier file's id, or drops its record as a copy.
func (b *SpineBuilder) graph() string {
	t, was := b.newest()
	st, from, uuids := b.st, was.recs, was.uuids
	earlier := b.files[:len(b.files)-1]
	inEarlier := func(id int32) bool {
		return slices.ContainsFunc(earlier, func(f *Transcript) bool { _, ok := f.ids[t.uuids[id]]; return ok })
	}
	// known: which new ids were seen as records so far. The reader keeps
	// the first record of a uuid only, so a uuid comes back only in the
	// blocks of one assistant line, which follow each other.
	known := make([]bool, len(t.uuids)-uuids)
	for i := from; i < len(t.recs); i++ {
		r := &t.recs[i]
		switch {
		case r.kind == recEnqueue || r.kind == recDequeue || r.kind == recRemove || r.kind == recPopAll || r.kind == recQueued:
			return "queue"
		case r.kind == recCompact:
			return "compaction"
		case r.kind == recUser && r.class == userCommand:
			return "command"
		case r.kind == recUser && r.class == userGenuine && r.typed != 0 && st.steerTail:
			return "steering tail"
		}
		if r.id < 0 {
			continue
		}
		switch {
		case int(r.id) < uuids:
			return "uuid seen before"
		case r.parent >= int32(uuids) && !known[int(r.parent)-uuids]:
			return "parent not yet seen"
		case len(earlier) > 0 && (inEarlier(r.id) || r.parent >= 0 && inEarlier(r.parent)):
			return "uuid of an earlier file"
		}
		known[int(r.id)-uuids] = true
		id, parent := st.idBase+r.id, st.idBase+r.parent
		if isPrompt(r) && r.parent >= 0 {
			if len(st.promptParents[parent]) > 0 {
				return "rewind"
			}
			st.promptParents[parent] = append(st.promptParents[parent], st.nodeBase+i)
		}
		if r.parent >= 0 && st.abandoned[parent] {
			st.abandoned[id] = true
		}
	}
	return ""
}

// lateResults checks that the results of calls in late (tool_use ids)
// leave the deeds of entries[:lo] as they were (those from lo on were
// filled with them), and records the calls of entries[lo:]. It returns
// why not, or "".
func (st *spineState) lateResults(entries []Entry, lo int, late []string) string {
	if st.issued == nil {
		if len(late) == 0 {
			return ""
		}
		st.issued = map[string]int{}
		st.issue(entries[:lo], 0)
	}
	for _, id := range late {
		k, ok := st.issued[id]
		switch {
		case !ok, k >= lo:
		case k < 0:
			return "result of a call issued twice"
		case deedsChange(&entries[k], id, st.results[id]):
			return "result changes a deed"
		}
	}
	st.issue(entries[lo:], lo)
	return ""
}

// issue records in st.issued the calls of entries, entries[0] being the
// spine's entry at index at.
func (st *spineState) issue(entries []Entry, at int) {
	for k := range entries {
		for _, id := range entries[k].ToolUseIDs {
			if j, ok := st.issued[id]; ok && j != at+k {
				st.issued[id] = -1
			} else {
				st.issued[id] = at + k
			}
		}
	}
}

// deedsChange reports whether the result res of call id would make the
// deeds of e other than they are: failed, or, for a Write a result says
// whether it made, created or not (see markCreated; one without such a
// result is decided by the paths before it, which do not change).
func deedsChange(e *Entry, id string, res uint8) bool {
	for _, d := range e.Deeds {
		if e.ToolUseIDs[d.call] != id {
			continue
		}
		if d.Failed != (res&resultFailed != 0) {
			return true
		}
		if fileDeed(d.Kind) && d.Target != "" && d.Kind == DeedWrite && res&resultTyped != 0 && d.Created != (res&resultCreated != 0) {
			return true
		}
	}
	return false
}
