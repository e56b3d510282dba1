package sources

import (
	"bytes"
	"hash/fnv"
	"strings"
	"time"
	"unicode"
)

// recKind classifies a transcript line by what the spine can use of it.
type recKind uint8

const (
	// recNode is a conversation record that carries nothing for the spine
	// (tool result, progress, hook attachment, system record…) but is part of
	// the parentUuid graph that rewind pruning walks.
	recNode recKind = iota
	// recUser is a user record. userClass says whether it is genuine.
	recUser
	// recAssistant is one assistant content block.
	recAssistant
	// recCompact is a compact_boundary system record.
	recCompact
	// recLocalOutput is a system record holding a local command's output.
	recLocalOutput
	// recQueued is a queued_command attachment: a steering message.
	recQueued
	// recEnqueue is a queue-operation enqueue whose text may turn out to be a
	// steering message; recDequeue and recRemove consume it, recPopAll
	// takes back what the user typed.
	recEnqueue
	recDequeue
	recRemove
	recPopAll
)

// queueKind says what a text in Claude Code's input queue is, which decides
// how Claude Code consumes it.
type queueKind uint8

const (
	queueNone    queueKind = iota // the record carries no text
	queueTyped                    // a message the user typed
	queueCommand                  // a slash command: it waits for the turn to end
	queueNotice                   // Claude Code's own: a task notification, another session's message
)

// userClass says what a user record is.
type userClass uint8

const (
	userInjected    userClass = iota // tool result, caveat, hook output…
	userGenuine                      // a message the user wrote
	userCommand                      // a slash command the user ran; text is "/name args"
	userLocalOutput                  // the output of a command Claude Code ran locally
	userMeta                         // isMeta text for the model: an expanded command or skill body…
)

// record is what the spine keeps of one transcript line. Records without a
// uuid (queue operations) have id -1 and take no part in the graph.
type record struct {
	id, parent int32 // interned uuids; -1 when absent
	kind       recKind
	class      userClass // recUser only
	queue      queueKind // queue records: what their text is
	time       time.Time
	text       string // genuine user text, assistant block text, queued text
	images     int    // user: image blocks
	typed      uint64 // user and queue records: hash of the text as typed
	msg        string // assistant: message.id (or uuid)
	blockIndex int    // assistant: apiBlockIndex, -1 if absent
	toolUse    string // assistant: tool_use id; tool result: the tool_use it answers
	trigger    string // compaction trigger
	deed       *Deed  // assistant tool_use: what it did
	result     uint8  // tool result: resultFailed, resultCreated
	aside      bool   // user, in a side question's file: the question (sideQuestionMark)
}

// rawRecord collects the fields of one line before it is classified; the
// keys of a JSON object can come in any order, so nothing is decided until
// the whole line has been read.
type rawRecord struct {
	uuid, parent, timestamp, cwd         []byte // alias the line
	typ, subtype, operation, continuedIn string
	promptSource, originKind, trigger    string
	sidechain, meta, compactSummary      bool
	transcriptOnly, toolResult, apiErr   bool
	resultType                           string // toolUseResult.type
	blockIndex                           int
	msgID, model                         string
	content                              content // message.content
	queueContent                         content // queue-operation content
	attachType, attachOrigin, attachCmd  string
	attachPrompt                         content
}

// content is a message content value: a string or a list of blocks. Text
// is kept raw (escaped) until the record's type says it is needed.
type content struct {
	isString bool
	raw      []byte // the string, when isString
	blocks   []block
	other    byte // the first byte of a value that is neither a string nor an array
}

type block struct {
	typ       string
	text      []byte     // raw text of a text block
	id        string     // tool_use id
	title     string     // a document's title
	name      string     // tool_use: the tool's name
	input     *toolInput // tool_use: what a deed needs of its input
	toolUseID string     // tool_result: the tool_use it answers
	isError   bool       // tool_result: is_error
}

// parseRecord reads one line into r. It returns false if the line is not a
// JSON object.
func parseRecord(line []byte, r *rawRecord) bool {
	*r = rawRecord{blockIndex: -1}
	s := scanner{b: line}
	s.object(func(key []byte) {
		switch string(key) {
		case "type":
			r.typ = s.known("assistant", "user", "progress", "system", "attachment", "queue-operation", "file-history-snapshot")
		case "uuid":
			r.uuid = s.bytesVal()
		case "parentUuid":
			r.parent = s.bytesVal()
		case "timestamp":
			r.timestamp = s.bytesVal()
		case "cwd":
			r.cwd = s.bytesVal()
		case "isSidechain":
			r.sidechain = s.boolean()
		case "isMeta":
			r.meta = s.boolean()
		case "isCompactSummary":
			r.compactSummary = s.boolean()
		case "isVisibleInTranscriptOnly":
			r.transcriptOnly = s.boolean()
		case "isApiErrorMessage":
			r.apiErr = s.boolean()
		case "toolUseResult":
			r.toolResult = true
			s.member("type", func() { r.resultType = s.known("create", "update", "text") })
		case "promptSource":
			r.promptSource = s.known("typed", "system", "sdk")
		case "origin":
			r.originKind = originKind(&s)
		case "subtype":
			r.subtype = s.known("compact_boundary", "turn_duration", "stop_hook_summary", "local_command")
		case "compactMetadata":
			s.member("trigger", func() { r.trigger = s.str() })
		case "operation":
			r.operation = s.known("enqueue", "dequeue", "remove", "popAll")
		case "content":
			r.queueContent = readContent(&s)
		case "continuedInSessionId":
			r.continuedIn = s.str()
		case "apiBlockIndex":
			r.blockIndex = s.int()
		case "message":
			s.objectOrSkip(func(k []byte) {
				switch string(k) {
				case "id":
					r.msgID = s.str()
				case "model":
					r.model = s.known("<synthetic>")
				case "content":
					r.content = readContent(&s)
				}
			})
		case "attachment":
			s.objectOrSkip(func(k []byte) {
				switch string(k) {
				case "type":
					r.attachType = s.known("queued_command", "hook_success")
				case "prompt":
					r.attachPrompt = readContent(&s)
				case "origin":
					r.attachOrigin = originKind(&s)
				case "commandMode":
					r.attachCmd = s.str()
				}
			})
		}
	})
	return s.ok()
}

// originKind reads origin.kind from an origin object. A present origin
// without a kind reads as "?" so that it is not mistaken for an absent one.
func originKind(s *scanner) string {
	kind := "?"
	if !s.member("kind", func() { kind = s.str() }) {
		return ""
	}
	return kind
}

func readContent(s *scanner) content {
	switch s.peek() {
	case '"':
		return content{isString: true, raw: s.rawString()}
	case '[':
		var c content
		s.array(func() {
			var b block
			if s.objectOrSkip(func(k []byte) {
				switch string(k) {
				case "type":
					b.typ = s.known("text", "tool_use", "thinking", "tool_result", "image", "redacted_thinking")
				case "text":
					if s.peek() == '"' {
						b.text = s.rawString()
					}
				case "id":
					b.id = s.str()
				case "title":
					b.title = s.str()
				case "name":
					b.name = s.str()
				case "input":
					b.input = readToolInput(s)
				case "tool_use_id":
					b.toolUseID = s.str()
				case "is_error":
					b.isError = s.boolean()
				}
			}) {
				c.blocks = append(c.blocks, b)
			}
		})
		return c
	}
	other := s.peek()
	s.skip()
	return content{other: other}
}

// sideQuestionMark opens the reminder Claude Code wraps a /btw side
// question in (<system-reminder>This is a side question from the user…);
// the question follows it, and the reminder is stripped like any other.
const sideQuestionMark = "This is a side question from the user"

// contains reports whether the raw text of the content, a string or a
// text block, holds s (which must need no JSON escape).
func (c *content) contains(s string) bool {
	if c.isString {
		return bytes.Contains(c.raw, []byte(s))
	}
	for _, b := range c.blocks {
		if b.typ == "text" && bytes.Contains(b.text, []byte(s)) {
			return true
		}
	}
	return false
}

func (c *content) has(typ string) bool {
	for _, b := range c.blocks {
		if b.typ == typ {
			return true
		}
	}
	return false
}

func typedHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.TrimSpace(s)))
	return h.Sum64()
}

// ideBlockPrefixes open text blocks that an IDE extension sends beside the
// prompt; they are context, not the user's words.
var ideBlockPrefixes = []string{"<ide_opened_file>", "<ide_selection>", "<ide_diagnostics>", "<system-reminder>"}

// injectedPrefixes open user-record text that Claude Code, a hook or a
// plugin wrote rather than the user (transcript-format.md §8.2). The
// <bash-notification> and <agent-notification> of 2.0.7x are the notices
// that a background shell or agent finished, written as plain user records
// and queued like typed text: the older form of <task-notification>.
var injectedPrefixes = []string{
	"<local-command-", "Caveat: The messages below", "<bash-input>", "<bash-stdout>",
	"<bash-stderr>", "<task-notification>", "<bash-notification>", "<agent-notification>", "[Request interrupted by user",
	"This session is being continued", "Stop hook feedback:", "<user-prompt-submit-hook>",
	"<teammate-message", "<agent-message>", "<cross-session-message", "Your task is to create a detailed summary of the conversation so far",
	PointerHeading,
}

// PointerHeading opens the context bottled's SessionStart hook injects. A
// transcript that recorded it as a user message must not bottle it again.
const PointerHeading = "# bottled — session continuation"

// userRecord is what classifyUser makes of a user record.
type userRecord struct {
	class  userClass
	text   string // genuine text, as the bottle shows it
	typed  string // the text as the user would have typed it, for matching steering messages
	images int
	caveat bool // a local-command caveat: the records written with it are the command's
}

// classifyUser decides whether a user record is a genuine message and, if
// so, returns its text and image count (transcript-format.md §8.4).
func classifyUser(r *rawRecord) userRecord {
	if r.meta && !r.compactSummary {
		raw, _ := r.content.userText()
		if !isCaveat(raw) {
			return userRecord{class: userMeta}
		}
		return userRecord{class: userInjected, caveat: true}
	}
	if r.compactSummary || r.transcriptOnly || r.toolResult || r.content.has("tool_result") {
		return userRecord{class: userInjected}
	}
	raw, images := r.content.userText()
	if r.originKind != "" && r.originKind != "human" || r.promptSource == "system" {
		return userRecord{class: userInjected, typed: raw}
	}
	class, text, typed := classifyText(raw, images)
	return userRecord{class: class, text: text, typed: typed, images: images}
}

// userText joins the text blocks of user content, leaving out the blocks an
// IDE adds as context and <system-reminder> spans, names attached documents
// in their place, and counts images.
func (c *content) userText() (string, int) {
	var parts []string
	images := 0
	if c.isString {
		parts = append(parts, unescape(c.raw))
	}
	for _, b := range c.blocks {
		switch b.typ {
		case "text":
			t := unescape(b.text)
			if !hasAnyPrefix(strings.TrimLeft(t, " \t\r\n"), ideBlockPrefixes) {
				parts = append(parts, t)
			}
		case "image":
			images++
		case "document":
			parts = append(parts, documentLabel(b.title))
		}
	}
	return strings.TrimSpace(removeSystemReminders(strings.Join(parts, "\n\n"))), images
}

// documentLabel stands for a document the user attached to a message (a
// file's text sent with it): the bottle names it rather than repeat it, as
// it does for images.
func documentLabel(title string) string {
	if t := strings.Join(strings.Fields(title), " "); t != "" {
		return "[document: " + t + "]"
	}
	return "[document]"
}

// classifyText decides from its text alone whether a message is one the
// user wrote: slash commands become "/name args" (whether one without
// arguments is a message is decided from the records that follow it, see
// commandAnswered), local command output and text that Claude Code, a hook
// or a plugin wrote are recognised by their opening.
func classifyText(raw string, images int) (class userClass, text, typed string) {
	switch {
	case strings.HasPrefix(raw, "<command-name>"), strings.HasPrefix(raw, "<command-message>"):
		name, args := parseCommand(raw)
		typed = strings.TrimSpace("/" + name + " " + args)
		return userCommand, typed, typed
	case isLocalOutput(raw):
		return userLocalOutput, "", raw
	case hasAnyPrefix(raw, injectedPrefixes), isClaudeMemContext(raw):
		return userInjected, "", raw
	case raw == "" && images == 0:
		return userInjected, "", ""
	}
	return userGenuine, raw, raw
}

// classifyQueued says what a text in Claude Code's input queue is. Besides
// what the user types, Claude Code queues its own notifications: task
// notifications (as <task-notification> or, in 2.1.5x, as a JSON object
// naming the task) and messages from other sessions.
func classifyQueued(raw string) (queueKind, string) {
	if isSlashCommand(raw) {
		return queueCommand, ""
	}
	if class, text, _ := classifyText(raw, 0); class == userGenuine && !strings.HasPrefix(raw, `{"task_id":`) {
		return queueTyped, text
	}
	return queueNotice, ""
}

// isSlashCommand reports whether text typed into Claude Code's prompt is a
// slash command: "/name" or "/name args", where the name has no slash (a
// message that starts with a path, "/usr/lib is missing", is not one).
func isSlashCommand(s string) bool {
	rest, ok := strings.CutPrefix(s, "/")
	if !ok {
		return false
	}
	name := rest
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		name = rest[:i]
	}
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_:.", c)) {
			return false
		}
	}
	return true
}

// isLocalOutput recognises the output of a command Claude Code ran itself.
func isLocalOutput(s string) bool {
	return strings.HasPrefix(s, "<local-command-stdout>") || strings.HasPrefix(s, "<local-command-stderr>")
}

// isCaveat recognises the note Claude Code writes before the records of a
// local command (plain in 1.0.x, wrapped in 2.x).
func isCaveat(s string) bool {
	return strings.HasPrefix(s, "<local-command-caveat>") || strings.HasPrefix(s, "Caveat: The messages below")
}

// hasArgs reports whether a command's text ("/name args") has arguments.
func hasArgs(command string) bool { return strings.ContainsRune(command, ' ') }

// isClaudeMemContext recognises claude-mem's SessionStart timeline
// ("# [project] recent context, <date>"), in case a build recorded it as a
// user message.
func isClaudeMemContext(s string) bool {
	if !strings.HasPrefix(s, "# [") {
		return false
	}
	line, _, _ := strings.Cut(s, "\n")
	return strings.Contains(line, "] recent context")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// removeSystemReminders drops <system-reminder>…</system-reminder> spans,
// which the harness can put inside user text; classification looks at what
// is left. (The renderer's tag stripper removes them from output anyway.)
func removeSystemReminders(s string) string {
	const open, close = "<system-reminder>", "</system-reminder>"
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], close)
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+len(close):]
	}
}

// parseCommand extracts the command name (without the slash) and arguments
// from a slash-command wrapper; the tags come in either order.
func parseCommand(s string) (name, args string) {
	name = strings.TrimPrefix(strings.TrimSpace(tagBody(s, "command-name")), "/")
	if name == "" {
		// Some builds only wrote <command-message>name</command-message>.
		name, _, _ = strings.Cut(strings.TrimSpace(tagBody(s, "command-message")), " ")
	}
	return name, strings.TrimSpace(tagBody(s, "command-args"))
}

func tagBody(s, tag string) string {
	open, close := "<"+tag+">", "</"+tag+">"
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return rest
	}
	return rest[:j]
}
