package sources

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Unknown counts what a transcript holds that this version of bottled does
// not know, by name: Claude Code adds record types, attachment types,
// system subtypes and message shapes in most releases, and the first
// bottle rendered after an upgrade should say what is new. The reader
// tolerates all of it (an unknown record is skipped, an unknown user
// shape is taken for a message), which is exactly why it is counted. What
// the references and the real transcripts show to be harmless is not
// counted (see the known* lists).
type Unknown struct {
	RecordTypes     map[string]int `json:"recordTypes,omitempty"`
	AttachmentTypes map[string]int `json:"attachmentTypes,omitempty"`
	SystemSubtypes  map[string]int `json:"systemSubtypes,omitempty"`
	// UserShapes are user records no rule classified, taken for messages
	// or skipped: "content:<JSON kind>" (neither text nor blocks),
	// "block:<type>", "origin:<kind>", "promptSource:<value>", and
	// "tag:<name>" for text that opens with an unknown wrapper tag.
	UserShapes map[string]int `json:"userShapes,omitempty"`
	// AssistantBlocks are content block types of assistant records that
	// bottled neither shows nor knows to hide.
	AssistantBlocks map[string]int `json:"assistantBlocks,omitempty"`
}

// Limits that keep a hostile or broken transcript from growing the counts
// without bound: a name longer than maxUnknownName, and past
// maxUnknownNames any new name, is counted under otherNames. A long name
// is not cut: cut, a credential in it could be too short for redaction to
// tell (render redacts the names it writes in the state line).
const (
	maxUnknownNames = 16
	maxUnknownName  = 48
	otherNames      = "(others)"
)

// Empty reports whether nothing unknown was met.
func (u *Unknown) Empty() bool {
	return u == nil || len(u.RecordTypes)+len(u.AttachmentTypes)+len(u.SystemSubtypes)+len(u.UserShapes)+len(u.AssistantBlocks) == 0
}

// Total is how many lines or blocks were unknown.
func (u *Unknown) Total() int {
	n := 0
	for _, m := range u.categories() {
		for _, c := range *m.counts {
			n += c
		}
	}
	return n
}

type unknownCategory struct {
	name   string
	counts *map[string]int
}

func (u *Unknown) categories() []unknownCategory {
	return []unknownCategory{
		{"record types", &u.RecordTypes}, {"attachment types", &u.AttachmentTypes},
		{"system subtypes", &u.SystemSubtypes}, {"user-record shapes", &u.UserShapes},
		{"assistant blocks", &u.AssistantBlocks},
	}
}

// String is a one-line account: "record types x×2, y×1; user-record shapes
// block:z×1", names in order.
func (u *Unknown) String() string {
	if u.Empty() {
		return ""
	}
	var parts []string
	for _, c := range u.categories() {
		m := *c.counts
		if len(m) == 0 {
			continue
		}
		var names []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			names = append(names, fmt.Sprintf("%s×%d", k, m[k]))
		}
		parts = append(parts, c.name+" "+strings.Join(names, ", "))
	}
	return strings.Join(parts, "; ")
}

// Add adds o's counts to u.
func (u *Unknown) Add(o *Unknown) {
	if o.Empty() {
		return
	}
	ocs := o.categories()
	for i, c := range u.categories() {
		for k, n := range *ocs[i].counts {
			count(c.counts, k, n)
		}
	}
}

// Renamed is u with every name replaced by name(it): the counts of names
// that become the same are added up, within the limits. Names recorded by
// an older bottled (a bottle's state line) are first brought under
// today's rules, which the names recorded now already obey: a name it cut
// (maxUnknownName bytes and "…") is longer than maxUnknownName, so it is
// counted under otherNames, and a tag name not shaped like a wrapper's is
// counted under "tag:" + otherTag.
func (u *Unknown) Renamed(name func(string) string) *Unknown {
	if u.Empty() {
		return nil
	}
	out := &Unknown{}
	ucs := u.categories()
	for i, c := range out.categories() {
		for k, n := range *ucs[i].counts {
			if tag, ok := strings.CutPrefix(k, "tag:"); ok && tag != otherTag && !wrapperShaped(tag) {
				k = "tag:" + otherTag
			}
			count(c.counts, name(k), n)
		}
	}
	return out
}

func count(m *map[string]int, name string, n int) {
	if *m == nil {
		*m = map[string]int{}
	}
	if len(name) > maxUnknownName {
		name = otherNames
	}
	// At most maxUnknownNames keys, "(others)" among them, whatever the
	// order names arrive in (Add merges maps in random order).
	if _, ok := (*m)[name]; !ok && name != otherNames {
		named := len(*m)
		if _, ok := (*m)[otherNames]; ok {
			named--
		}
		if named >= maxUnknownNames-1 {
			name = otherNames
		}
	}
	(*m)[name] += n
}

// The names Claude Code writes that bottled knows: from the references
// (transcript-format.md, claude-code-live.md for 2.1.332) and the real
// transcripts it is tested on. Families are matched by prefix or suffix.
// Among the attachments, "diagnostics" carries the IDE's or language
// server's diagnostics that Claude Code hands the model after an edit
// (its <new-diagnostics> reminder) and "task_status" the state of a
// background task reported to the model: context for the model, never
// conversation, so they are dropped like every attachment but
// queued_command.
var (
	knownRecordTypes = set("user", "assistant", "system", "attachment", "progress",
		"summary", "file-history-snapshot", "file-history-delta", "queue-operation", "last-prompt",
		"permission-mode", "mode", "custom-title", "ai-title", "continued-in", "tag", "agent-name",
		"agent-color", "agent-setting", "worktree-state", "pr-link", "cost-state", "attribution-snapshot",
		"content-replacement", "atis-latch", "bridge-session", "relocated", "ended",
		"marble-origami-commit", "marble-origami-snapshot", "speculation-accept", "tools-used")
	knownRecordPrefixes = []string{"api-request"} // api-request, -blob, -shape

	knownSystemSubtypes = set("", "local_command", "compact_boundary", "microcompact_boundary",
		"stop_hook_summary", "turn_duration", "away_summary", "api_error", "informational",
		"file_snapshot", "agents_killed", "task_notification", "bridge_status", "post_turn_summary",
		"model_refusal_fallback", "scheduled_task_fire")

	knownAttachmentTypes = set("queued_command", "deferred_tools_delta", "agent_listing_delta",
		"skill_listing", "mcp_instructions_delta", "task_reminder", "todo_reminder",
		"total_tokens_reminder", "environment", "date", "date_change", "model", "plan_mode",
		"plan_mode_exit", "plan_mode_reentry", "plan_file_reference", "auto_mode", "auto_mode_exit",
		"nested_memory", "edited_text_file", "file", "compact_file_reference", "command_permissions",
		"companion_intro", "session_context", "remote_session_change", "prompt_snapshot",
		"async_hook_response", "diagnostics", "task_status")
	knownAttachmentPrefixes = []string{"hook_"} // hook_success, hook_additional_context, hook_*_error…

	knownUserBlocks   = set("text", "image", "tool_result", "document")
	knownOriginKinds  = set("human", "task-notification", "auto-continuation", "peer")
	knownPromptSource = set("typed", "system", "sdk", "queued", "suggestion_accepted")
	// knownTags open user text that the rules classify (wrappers Claude
	// Code, hooks and plugins write) or that is the user's own.
	knownTags = set("command-name", "command-message", "command-args", "local-command-stdout",
		"local-command-stderr", "local-command-caveat", "bash-input", "bash-stdout", "bash-stderr",
		"task-notification", "bash-notification", "agent-notification", "user-prompt-submit-hook", "teammate-message", "agent-message",
		"cross-session-message", "ide_opened_file", "ide_selection", "ide_diagnostics",
		"system-reminder", "pasted_content", "claude-mem-context", "system_instruction",
		"system-instruction", "persisted-output")

	knownAssistantBlocks     = set("text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use", "image", "document")
	knownAssistantBlockSuffx = []string{"_tool_result"} // web_search_tool_result, mcp_tool_result…
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func knownName(name string, known map[string]bool, prefixes, suffixes []string) bool {
	if known[name] || hasAnyPrefix(name, prefixes) {
		return true
	}
	for _, s := range suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// wrapperTag returns the name of the tag a text opens with, when it looks
// like a wrapper a program wrote (a kebab- or snake-case name: pasted HTML
// such as <div> is the user's), else "".
func wrapperTag(s string) string {
	rest, ok := strings.CutPrefix(s, "<")
	if !ok {
		return ""
	}
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
	if end <= 0 || (rest[end] != '>' && rest[end] != ' ' && rest[end] != '\n') {
		return ""
	}
	name := rest[:end]
	if !strings.ContainsAny(name, "-_") {
		return ""
	}
	return name
}

// unknownTagName is the name an unknown wrapper tag that opens text is
// counted under. The name is the user's text, and the counts reach the
// bottle's state line and the daemon's status, so only a name shaped like
// the wrappers programs write is kept: lower-case words of letters, none
// longer than maxTagWord, joined by '-' or '_', with the element closed in
// the same text. Any other name, a token typed in angle brackets among
// them ("<ghp_…> is the bot's token"), is counted as otherTag: the count
// still says that something new opened a message.
func unknownTagName(tag, text string) string {
	if !wrapperShaped(tag) || !strings.Contains(text, "</"+tag+">") {
		return otherTag
	}
	return tag
}

// wrapperShaped reports whether a tag name is lower-case words of letters,
// none longer than maxTagWord, joined by '-' or '_'.
func wrapperShaped(tag string) bool {
	if len(tag) > maxUnknownName {
		return false
	}
	words, word := 1, 0 // word: the length of the word being read
	for i := range len(tag) {
		switch c := tag[i]; {
		case c >= 'a' && c <= 'z':
			if word++; word > maxTagWord {
				return false
			}
		case (c == '-' || c == '_') && word > 0 && i < len(tag)-1:
			words, word = words+1, 0
		default:
			return false
		}
	}
	return words >= 2
}

const (
	// maxTagWord is the longest word a kept tag name may have: the known
	// wrappers' longest is 12 letters ("notification"); a longer run of
	// lower-case letters is as likely a secret as a word.
	maxTagWord = 16
	otherTag   = "(other)"
)

// noteUnknown counts what the record's type, subtype or attachment type
// says that bottled does not know.
func (t *Transcript) noteUnknown(r *rawRecord) {
	u := &t.unknown
	switch {
	case !knownName(r.typ, knownRecordTypes, knownRecordPrefixes, nil):
		count(&u.RecordTypes, orNone(r.typ), 1)
	case r.typ == "queue-operation" && !slices.Contains([]string{"enqueue", "dequeue", "remove", "popAll"}, r.operation):
		count(&u.RecordTypes, "queue-operation:"+orNone(r.operation), 1)
	case r.typ == "system" && !knownSystemSubtypes[r.subtype]:
		count(&u.SystemSubtypes, r.subtype, 1)
	case r.typ == "attachment" && !knownName(r.attachType, knownAttachmentTypes, knownAttachmentPrefixes, nil):
		count(&u.AttachmentTypes, orNone(r.attachType), 1)
	case r.typ == "user":
		t.noteUserShape(r)
	}
}

// noteUserShape counts the parts of a user record no rule knows: a content
// that is neither text nor blocks, block types, origin kinds and prompt
// sources.
func (t *Transcript) noteUserShape(r *rawRecord) {
	u := &t.unknown
	if c := r.content; !c.isString && c.blocks == nil && c.other != 0 && c.other != '[' {
		count(&u.UserShapes, "content:"+jsonKind(c.other), 1)
	}
	for _, b := range r.content.blocks {
		if !knownUserBlocks[b.typ] {
			count(&u.UserShapes, "block:"+orNone(b.typ), 1)
		}
	}
	if k := r.originKind; k != "" && !knownOriginKinds[k] {
		if k == "?" {
			k = "(no kind)"
		}
		count(&u.UserShapes, "origin:"+k, 1)
	}
	if p := r.promptSource; p != "" && !knownPromptSource[p] {
		count(&u.UserShapes, "promptSource:"+p, 1)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func jsonKind(first byte) string {
	switch first {
	case '{':
		return "object"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}
