package sources

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnknownCounts feeds records of every kind and checks what the reader
// counts as unknown: what it does not know, never what the references and
// the real transcripts show to be harmless.
func TestUnknownCounts(t *testing.T) {
	rec := func(fields string) string {
		return `{"uuid":"x` + fmt.Sprint(len(fields)) + `","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T10:00:00.000Z",` + fields + "}\n"
	}
	meta := func(typ string) string { return `{"type":"` + typ + `","sessionId":"s"}` + "\n" }
	user := func(extra, content string) string {
		return rec(`"type":"user"` + extra + `,"message":{"role":"user","content":` + content + `}`)
	}
	tests := []struct {
		name, data, want string
	}{
		{"known metadata records", meta("summary") + meta("api-request-blob") + meta("api-request-shape") + meta("cost-state") +
			meta("mode") + meta("atis-latch") + meta("tools-used") + meta("file-history-delta") + meta("bridge-session"), ""},
		{"a new record type", meta("quantum-checkpoint") + meta("quantum-checkpoint"), "record types quantum-checkpoint×2"},
		{"a record without a type", `{"sessionId":"s"}` + "\n", "record types (none)×1"},
		{"a new queue operation", `{"type":"queue-operation","operation":"reorder","sessionId":"s"}` + "\n", "record types queue-operation:reorder×1"},
		{"system subtypes", rec(`"type":"system","subtype":"turn_duration"`) + rec(`"type":"system"`) + rec(`"type":"system","subtype":"microcompact_boundary"`) +
			rec(`"type":"system","subtype":"weather_report"`), "system subtypes weather_report×1"},
		{"attachment types", rec(`"type":"attachment","attachment":{"type":"prompt_snapshot"}`) + rec(`"type":"attachment","attachment":{"type":"hook_cancelled"}`) +
			rec(`"type":"attachment","attachment":{"type":"mood_ring"}`), "attachment types mood_ring×1"},
		{"user shapes", user(`,"origin":{"kind":"robot"},"promptSource":"voice"`, `[{"type":"text","text":"hi"},{"type":"video"}]`) +
			user(`,"origin":{}`, `"x"`) + user("", `null`) + user(`,"origin":{"kind":"peer"},"promptSource":"suggestion_accepted"`, `"y"`),
			"user-record shapes block:video×1, content:null×1, origin:(no kind)×1, origin:robot×1, promptSource:voice×1"},
		{"wrapper tags", user("", `"<new-wrapper from=\"x\">hello</new-wrapper>"`) + user("", `"<div>pasted html</div>"`) +
			user("", `"<pasted_content id=\"1\">x</pasted_content>"`) + user("", `"<task-notification>x</task-notification>"`),
			"user-record shapes tag:new-wrapper×1"},
		{"assistant blocks", rec(`"type":"assistant","message":{"id":"m","content":[{"type":"web_fetch_tool_result"},{"type":"thinking"},{"type":"hologram","text":"x"}]}`),
			"assistant blocks hologram×1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := spineFromString(t, tc.data)
			if got := sp.Unknown.String(); got != tc.want {
				t.Errorf("unknown = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUnknownBounded checks that a transcript full of made-up names cannot
// grow the counts without bound.
func TestUnknownBounded(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, `{"type":"made-up-%d-%s","sessionId":"s"}`+"\n", i, strings.Repeat("x", 200))
	}
	u := spineFromString(t, b.String()).Unknown
	if len(u.RecordTypes) != maxUnknownNames || u.RecordTypes[otherNames] != 100-maxUnknownNames+1 || u.Total() != 100 {
		t.Errorf("%d names, %d others, total %d", len(u.RecordTypes), u.RecordTypes[otherNames], u.Total())
	}
	for name := range u.RecordTypes {
		if len(name) > maxUnknownName+len("…") {
			t.Errorf("name of %d bytes kept", len(name))
		}
	}
}
