package synth

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/growfile"
)

// Append appends records to the transcript at path, making the file and
// its directory when they are not there yet, as Claude Code does for a
// new session (0600, like its transcripts); a failure fails tb.
func Append(tb testing.TB, path, records string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	growfile.Append(tb, path, records)
}

// Rec is the envelope of one transcript record, for tests that write
// transcripts by hand. Its methods return the record as Claude Code 2.1.x
// writes it: one JSON line, newline included.
type Rec struct {
	Session      string
	UUID, Parent string // an empty Parent is null (a root)
	At           time.Time
	CWD          string // omitted if empty
	// Agent, if set, makes the record a subagent's (a sidechain record
	// with that agentId), as in a side question's transcript.
	Agent string
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
	if r.Agent != "" {
		m["isSidechain"], m["agentId"] = true, r.Agent
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

// Cleared is how the transcript of the session /clear opens starts, as
// Claude Code 2.1.x writes it (see the transcript format's /clear
// section): a file-history snapshot, the hook's progress, the caveat, the
// command and its empty output. None of it is a message: until a prompt
// comes, the session has nothing to render. uuid is the prefix of the
// records' uuids.
func (r Rec) Cleared(uuid string) string {
	at := r.At.UTC().Format("2006-01-02T15:04:05.000Z")
	snapshot := map[string]any{"type": "file-history-snapshot", "messageId": uuid + "-s",
		"snapshot": map[string]any{"messageId": uuid + "-s", "trackedFileBackups": map[string]any{}, "timestamp": at}, "isSnapshotUpdate": false}
	rec := func(id, parent string) Rec {
		return Rec{Session: r.Session, UUID: uuid + id, Parent: parent, At: r.At, CWD: r.CWD}
	}
	progress := rec("-1", "").line("progress", map[string]any{"data": map[string]any{"type": "hook_progress",
		"hookEvent": "SessionStart", "hookName": "SessionStart:clear", "command": "true"}, "toolUseID": uuid, "parentToolUseID": uuid})
	caveat := rec("-2", uuid+"-1").line("user", map[string]any{"isMeta": true, "message": map[string]any{"role": "user",
		"content": "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>"}})
	command := rec("-3", uuid+"-2").User("<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>")
	output := rec("-4", uuid+"-3").line("system", map[string]any{"subtype": "local_command", "level": "info",
		"content": "<local-command-stdout></local-command-stdout>"})
	return string(marshalLine(snapshot)) + progress + caveat + command + output
}
