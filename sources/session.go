// Package sources owns reading the two durable records a Claude Code session
// leaves on disk: the transcript JSONL that Claude Code appends to, and the
// claude-mem SQLite database that the claude-mem worker writes. It produces
// the session model both describe (a Spine from the transcript, a ClaudeMem from
// the database) and knows nothing about bottles or markdown. A transcript is
// read incrementally (Transcript.Update reads what was appended, and says
// whether it checked the rest, CheckedWhole), and a SpineBuilder, kept by the
// reader beside it, builds the spine again from the appended records alone
// when they only extend the conversation (BuildSpine from every record
// otherwise).
//
// Both readers are strictly passive. Transcripts are read, never written; the
// database is opened read-only, with a busy timeout, and no transaction is
// held between reads.
package sources

import (
	"time"
	"unsafe"
)

// EntryKind says what an Entry of the spine is.
type EntryKind uint8

const (
	// EntryUser is a genuine user message: typed, pasted, a slash command
	// with arguments, or a steering message typed while Claude worked.
	EntryUser EntryKind = iota + 1
	// EntryAssistant is one assistant API message, its text blocks joined.
	// Text may be empty when the message only issued tool calls; ToolUseIDs
	// then still tells which turn those calls belong to.
	EntryAssistant
	// EntryCompaction marks where the conversation was compacted (or rolled
	// over into a new session file of the same chain).
	EntryCompaction
)

// Entry is one element of a session's conversational spine, in the order the
// transcript recorded it. Text is as written: it has not been through the
// tag stripper, which is the renderer's job.
type Entry struct {
	Kind EntryKind `json:"kind"`
	// Time is the record's timestamp (zero if the record had none).
	Time time.Time `json:"time"`
	// Text is the user message or the assistant's text blocks joined by a
	// blank line. A document attached to a user message stands in it as a
	// "[document: <title>]" line.
	Text string `json:"text,omitempty"`
	// Images is the number of image blocks that came with a user message.
	Images int `json:"images,omitempty"`
	// Steering marks a user message typed while Claude was working.
	Steering bool `json:"steering,omitempty"`
	// Aside marks a /btw side question (a user entry) and its answer (an
	// assistant entry): asked while the conversation went on, answered
	// apart from it, found only in the side question's own transcript.
	Aside bool `json:"aside,omitempty"`
	// Undelivered marks a steering message that never reached the model:
	// nothing consumed it from Claude Code's input queue (an API error
	// ended the turn, or the transcript ends). It stands where it was
	// typed.
	Undelivered bool `json:"undelivered,omitempty"`
	// ToolUseIDs are the tool_use ids an assistant message issued.
	ToolUseIDs []string `json:"toolUseIds,omitempty"`
	// Deeds are what an assistant message's tool calls did, in order;
	// they follow the message's text.
	Deeds []Deed `json:"deeds,omitempty"`
	// Trigger is "auto" or "manual" for a compaction ("" if unknown).
	Trigger string `json:"trigger,omitempty"`
	// Session is the session id of the transcript file the entry came from;
	// it differs from Spine.SessionID only for predecessors in a chain.
	Session string `json:"session,omitempty"`
}

// Spine is the conversational spine of a session: genuine user messages,
// assistant text and compaction markers, with tool traffic, injected content,
// sidechains and abandoned rewind branches removed.
type Spine struct {
	// SessionID is the session the spine was built for (the newest file of
	// the chain).
	SessionID string `json:"sessionId"`
	// CWD is the first working directory recorded in the chain.
	CWD string `json:"cwd,omitempty"`
	// Started is the first timestamp recorded in the chain.
	Started time.Time `json:"started"`
	// Entries is the spine in transcript order, oldest file first.
	Entries []Entry `json:"entries"`
	// Files describes the transcript files read, oldest first.
	Files []FileState `json:"files"`
	// Malformed counts complete lines that could not be parsed.
	Malformed int `json:"malformed,omitempty"`
	// Unknown counts what the files hold that bottled does not know.
	Unknown Unknown `json:"unknown,omitzero"`
}

// ClaudeMem is what claude-mem's database holds about one Claude Code session.
type ClaudeMem struct {
	ContentSessionID string `json:"contentSessionId"`
	MemorySessionID  string `json:"memorySessionId,omitempty"`
	Project          string `json:"project,omitempty"`
	// Started is sdk_sessions.started_at_epoch (zero if unknown).
	Started      time.Time     `json:"started"`
	Prompts      []Prompt      `json:"prompts,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
	Summaries    []Summary     `json:"summaries,omitempty"`
	// ToolUses maps a transcript tool_use id to the observation claude-mem
	// made of it (from the tool_uses table, when the schema has one).
	ToolUses map[string]int64 `json:"toolUses,omitempty"`
	// Cursor is the per-session row maxima the records were read at.
	Cursor ClaudeMemCursor `json:"cursor"`
}

// Per-row overheads of ClaudeMem.Size: a row's struct in its slice, and a
// tool_uses entry's key header, value and map slot (Go's maps spend about
// as much again as their entries).
const (
	promptBytes      = int64(unsafe.Sizeof(Prompt{}))
	observationBytes = int64(unsafe.Sizeof(Observation{}))
	summaryBytes     = int64(unsafe.Sizeof(Summary{}))
	toolUseBytes     = 2 * int64(unsafe.Sizeof("")+unsafe.Sizeof(int64(0)))
)

// Size estimates the memory the records hold, in bytes: each row's struct
// and its text, as Transcript.Size does for parse state.
func (m *ClaudeMem) Size() int64 {
	if m == nil {
		return 0
	}
	n := int64(len(m.ContentSessionID) + len(m.MemorySessionID) + len(m.Project))
	for _, p := range m.Prompts {
		n += promptBytes + int64(len(p.Text))
	}
	for _, o := range m.Observations {
		n += observationBytes + int64(len(o.Type)+len(o.Title)+len(o.Subtitle)+len(o.Narrative)+len(o.Text))
	}
	for _, x := range m.Summaries {
		n += summaryBytes + int64(len(x.Request)+len(x.Investigated)+len(x.Learned)+len(x.Completed)+len(x.NextSteps)+len(x.Notes))
	}
	for id := range m.ToolUses {
		n += toolUseBytes + int64(len(id))
	}
	return n
}

// Prompt is a row of user_prompts: a user message as claude-mem stored it
// (tag-stripped by claude-mem, capped at 4,000 UTF-16 units since 13.5.0).
type Prompt struct {
	ID      int64     `json:"id"`
	Number  int64     `json:"number"`
	Text    string    `json:"text"`
	Created time.Time `json:"created"`
	// Clipped reports that the stored text was longer than bottled reads
	// (rows written before claude-mem capped prompts can be megabytes).
	Clipped bool `json:"clipped,omitempty"`
	// CutByClaudeMem reports that claude-mem's cap cut the prompt: Text is
	// its start, ended with "…" after its last whole word.
	CutByClaudeMem bool `json:"cutByClaudeMem,omitempty"`
}

// Observation is a row of observations: claude-mem's one-paragraph account
// of some tool activity.
type Observation struct {
	ID    int64  `json:"id"`
	Type  string `json:"type,omitempty"`
	Title string `json:"title,omitempty"`
	// Subtitle and Narrative are empty for legacy rows, which have Text.
	Subtitle  string `json:"subtitle,omitempty"`
	Narrative string `json:"narrative,omitempty"`
	Text      string `json:"text,omitempty"`
	// PromptNumber is 0 when the row has none.
	PromptNumber int64     `json:"promptNumber,omitempty"`
	Created      time.Time `json:"created"`
}

// Summary is a row of session_summaries: claude-mem's generated account of a
// turn. It is never verbatim.
type Summary struct {
	ID           int64     `json:"id"`
	Request      string    `json:"request,omitempty"`
	Investigated string    `json:"investigated,omitempty"`
	Learned      string    `json:"learned,omitempty"`
	Completed    string    `json:"completed,omitempty"`
	NextSteps    string    `json:"nextSteps,omitempty"`
	Notes        string    `json:"notes,omitempty"`
	PromptNumber int64     `json:"promptNumber,omitempty"`
	Created      time.Time `json:"created"`
}

// ClaudeMemCursor is the state of one session's rows in the database: the
// largest row ids, the registered memory session id and the number of
// tool_uses rows already linked to an observation. Rows are only ever
// appended, so a cursor that is no larger in any field saw no newer data.
type ClaudeMemCursor struct {
	// DB identifies the database file, so that cursors of a database that
	// was deleted and created again are not compared with the old one's.
	DB              FileID `json:"db"`
	MemorySessionID string `json:"memorySessionId,omitempty"`
	Prompt          int64  `json:"prompt,omitempty"`
	Observation     int64  `json:"observation,omitempty"`
	Summary         int64  `json:"summary,omitempty"`
	ToolUseLinks    int64  `json:"toolUseLinks,omitempty"`
}

// Empty reports whether the memory holds nothing a bottle can be
// reconstructed from: no prompt and no observation. (Summaries alone are
// generated prose with nothing verbatim to anchor them.)
func (m *ClaudeMem) Empty() bool {
	return m == nil || (len(m.Prompts) == 0 && len(m.Observations) == 0)
}
