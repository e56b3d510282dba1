package sources

import (
	"bytes"
	"strings"
	"time"
)

// Record application: each parsed line of a transcript changes the parse
// state (the records kept, rewinds, queued prompts, split assistant
// messages) as Claude Code's own reader would.

// addLine parses one complete line into the state.
func (t *Transcript) addLine(line []byte) {
	// Claude Code's own reader skips NUL padding left by preallocation.
	line = bytes.TrimLeft(line, "\x00 \t\r")
	if len(line) == 0 {
		return
	}
	var r rawRecord
	if !parseRecord(line, &r) {
		t.malformed++
		return
	}
	t.apply(&r)
}

func (t *Transcript) apply(r *rawRecord) {
	if r.sidechain && !t.aside {
		return
	}
	if len(r.uuid) > 0 {
		if id, ok := t.ids[string(r.uuid)]; ok && t.hasRec[id] {
			return // a replayed copy; the first occurrence wins
		}
	}
	ts := parseTime(r.timestamp)
	if t.cwd == "" {
		t.cwd = string(r.cwd)
	}
	if t.started.IsZero() {
		t.started = ts
	}
	base := record{id: -1, parent: -1, blockIndex: -1, time: ts}
	t.noteUnknown(r)
	switch r.typ {
	case "queue-operation":
		t.applyQueue(r, base)
		return
	case "continued-in":
		t.continuedIn = r.continuedIn
		return
	}
	if len(r.uuid) == 0 {
		return // metadata: summary, file-history-snapshot, last-prompt…
	}
	base.id = t.intern(r.uuid)
	base.parent = t.intern(r.parent)
	t.hasRec[base.id] = true
	switch r.typ {
	case "user":
		t.applyUser(r, base)
	case "assistant":
		t.applyAssistant(r, base)
	case "system":
		switch {
		case r.subtype == "compact_boundary":
			base.kind, base.trigger = recCompact, r.trigger
		case r.subtype == "local_command" && r.queueContent.isString && isLocalOutput(strings.TrimSpace(unescape(r.queueContent.raw))):
			base.kind = recLocalOutput
		}
		t.recs = append(t.recs, base)
	case "attachment":
		if r.attachType == "queued_command" {
			t.applyQueued(r, base)
			return
		}
		t.recs = append(t.recs, base)
	default:
		t.recs = append(t.recs, base)
	}
}

// localEchoWindow is how close to its caveat a command's output is
// written: Claude Code writes both at once, while a message the user types
// after a caveat takes seconds at least.
const localEchoWindow = 2 * time.Second

func (t *Transcript) applyUser(r *rawRecord, rec record) {
	u := classifyUser(r)
	class, text, typed, images := u.class, u.text, u.typed, u.images
	if class == userGenuine {
		if tag := wrapperTag(text); tag != "" && !knownTags[tag] {
			count(&t.unknown.UserShapes, "tag:"+unknownTagName(tag, text), 1)
		}
	}
	if u.caveat {
		if t.caveats == nil {
			t.caveats = map[int32]time.Time{}
		}
		t.caveats[rec.id] = rec.time
	}
	if at, ok := t.caveats[rec.parent]; ok && class == userGenuine && rec.time.Sub(at).Abs() <= localEchoWindow {
		// A plain record written with a caveat is its command's output
		// (2.1.6x wrote "Unknown skill: btw" so, without a wrapper).
		class, text = userLocalOutput, ""
	}
	rec.kind, rec.class, rec.text, rec.images = recUser, class, text, images
	rec.aside = t.aside && class == userGenuine && r.content.contains(sideQuestionMark)
	if typed != "" {
		rec.typed = typedHash(typed)
	}
	t.recs = append(t.recs, rec)
	t.applyResults(r)
}

// applyResults records what a deed needs of the tool results a user
// record carries: which call each answers, whether it failed, whether a
// Write made a new file. The output itself is never kept. Results are
// records without a uuid of their own, so the graph is not changed.
func (t *Transcript) applyResults(r *rawRecord) {
	results := 0
	for _, b := range r.content.blocks {
		if b.typ == "tool_result" {
			results++
		}
	}
	for _, b := range r.content.blocks {
		if b.typ != "tool_result" || b.toolUseID == "" {
			continue
		}
		var flags uint8
		if b.isError {
			flags |= resultFailed
		}
		if results == 1 && r.resultType != "" {
			// toolUseResult describes the only result.
			flags |= resultTyped
			if r.resultType == "create" {
				flags |= resultCreated
			}
		}
		if flags == 0 {
			continue
		}
		t.recs = append(t.recs, record{id: -1, parent: -1, blockIndex: -1, kind: recNode, toolUse: b.toolUseID, result: flags})
	}
}

// applyQueued handles a queued_command attachment (≈2.1.101+): text the
// user typed while Claude worked, delivered into the conversation, unless
// its origin or command mode says the harness queued it (a task
// notification). Its typed text is recorded either way, so that the queue
// operations carrying the same text are not taken for a second copy.
func (t *Transcript) applyQueued(r *rawRecord, rec record) {
	raw, images := r.attachPrompt.userText()
	rec.kind = recQueued
	rec.typed = typedHash(raw)
	human := (r.attachOrigin == "" || r.attachOrigin == "human") && (r.attachCmd == "" || r.attachCmd == "prompt")
	if class, text, _ := classifyText(raw, images); human && class == userGenuine {
		rec.class, rec.text, rec.images = userGenuine, text, images
	}
	t.recs = append(t.recs, rec)
}

func (t *Transcript) applyAssistant(r *rawRecord, rec record) {
	if r.apiErr || r.model == "<synthetic>" {
		t.recs = append(t.recs, rec) // harness text, not the model's
		return
	}
	rec.kind, rec.blockIndex = recAssistant, r.blockIndex
	rec.msg = r.msgID
	if rec.msg == "" {
		rec.msg = string(r.uuid)
	}
	kept := false
	for _, b := range r.content.blocks {
		out := rec
		switch b.typ {
		case "text":
			out.text = strings.TrimSpace(unescape(b.text))
			if out.text == "" {
				continue
			}
		case "tool_use", "server_tool_use", "mcp_tool_use":
			out.toolUse = b.id
			if b.name != "" {
				out.deed = makeDeed(b.name, b.input)
			}
		default:
			if !knownName(b.typ, knownAssistantBlocks, nil, knownAssistantBlockSuffx) {
				count(&t.unknown.AssistantBlocks, orNone(b.typ), 1)
			}
			continue
		}
		t.recs = append(t.recs, out)
		kept = true
	}
	if !kept {
		rec.kind = recNode
		t.recs = append(t.recs, rec)
	}
}

func (t *Transcript) applyQueue(r *rawRecord, rec record) {
	switch r.operation {
	case "enqueue":
		rec.kind = recEnqueue
	case "dequeue":
		rec.kind = recDequeue
	case "remove":
		rec.kind = recRemove
	case "popAll":
		rec.kind = recPopAll
	default:
		return
	}
	c := r.queueContent
	switch {
	case c.isString:
		raw := strings.TrimSpace(unescape(c.raw))
		if raw != "" {
			rec.queue, rec.text = classifyQueued(raw)
			rec.typed = typedHash(raw)
		}
	case len(c.blocks) > 0:
		// 2.0.x queued block lists and wrote the same text again as a
		// normal user record when it ran; such an entry is never a
		// steering message, but it still holds a place in the queue.
		rec.queue = queueNotice
	}
	if rec.kind == recEnqueue && rec.queue == queueNone {
		return // nothing queued
	}
	t.recs = append(t.recs, rec)
}

// intern returns the id of a uuid, assigning the next one on first sight.
func (t *Transcript) intern(uuid []byte) int32 {
	if len(uuid) == 0 {
		return -1
	}
	if id, ok := t.ids[string(uuid)]; ok {
		return id
	}
	id := int32(len(t.uuids))
	u := string(uuid)
	t.uuids = append(t.uuids, u)
	t.hasRec = append(t.hasRec, false)
	t.ids[u] = id
	return id
}

// parseTime reads a transcript timestamp. Claude Code always writes
// 2006-01-02T15:04:05.000Z, which is parsed by hand; anything else goes to
// time.Parse, and an unparsable value reads as the zero time.
func parseTime(b []byte) time.Time {
	if len(b) == 24 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[23] == 'Z' {
		n := func(i, w int) int {
			v := 0
			for _, c := range b[i : i+w] {
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, d, h, mi, sec, ms := n(0, 4), n(5, 2), n(8, 2), n(11, 2), n(14, 2), n(17, 2), n(20, 3)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && sec >= 0 && sec < 61 && ms >= 0 {
			return time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC)
		}
	}
	ts, _ := time.Parse(time.RFC3339Nano, string(b))
	return ts
}
