package synth

import (
	"bytes"
	"encoding/json"
	"time"
)

// Rec is the envelope of one transcript record, for tests that write
// transcripts by hand. Its methods return the record as Claude Code 2.1.x
// writes it: one JSON line, newline included.
type Rec struct {
	Session      string
	UUID, Parent string // an empty Parent is null (a root)
	At           time.Time
	CWD          string // omitted if empty
}

// User is a typed prompt.
func (r Rec) User(text string) string {
	return r.line("user", map[string]any{"message": map[string]any{"role": "user", "content": text}})
}

// Assistant is one assistant text block of message msgID.
func (r Rec) Assistant(msgID, text string) string {
	return r.line("assistant", map[string]any{"message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": text}}}})
}

// ToolUse is one tool_use block of message msgID.
func (r Rec) ToolUse(msgID, toolID string) string {
	return r.line("assistant", map[string]any{"message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": toolID, "name": "Bash", "input": map[string]any{"command": "go test ./..."}}}}})
}

// ToolResult is a tool's output, in the message and again in
// toolUseResult.
func (r Rec) ToolResult(toolID, output string) string {
	return r.line("user", map[string]any{
		"message":       map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": toolID, "content": output}}},
		"toolUseResult": map[string]any{"stdout": output, "stderr": "", "interrupted": false},
	})
}

// envelope returns the fields every conversation record carries.
func (r Rec) envelope(typ string) map[string]any {
	m := map[string]any{
		"type": typ, "uuid": r.UUID, "parentUuid": nil, "isSidechain": false, "userType": "external",
		"sessionId": r.Session, "version": "2.1.114", "timestamp": r.At.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if r.Parent != "" {
		m["parentUuid"] = r.Parent
	}
	if r.CWD != "" {
		m["cwd"] = r.CWD
	}
	return m
}

func (r Rec) line(typ string, fields map[string]any) string {
	m := r.envelope(typ)
	for k, v := range fields {
		m[k] = v
	}
	return string(marshalLine(m))
}

// marshalLine encodes v as one JSON line, leaving <, > and & as they are,
// as Claude Code does.
func marshalLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only maps of strings, numbers and bools reach here
	}
	return b.Bytes()
}

// Queue is a queue-operation record (enqueue, dequeue, remove, popAll);
// an empty content is left out, as Claude Code leaves it out of most
// dequeue and remove records. Queue records carry no uuid.
func (r Rec) Queue(op, content string) string {
	m := map[string]any{"type": "queue-operation", "operation": op, "sessionId": r.Session,
		"timestamp": r.At.UTC().Format("2006-01-02T15:04:05.000Z")}
	if content != "" {
		m["content"] = content
	}
	return string(marshalLine(m))
}
