package sources

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
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
// grow the counts without bound, and that a long name is counted with the
// others rather than cut (a cut credential is too short to be redacted).
func TestUnknownBounded(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, `{"type":"made-up-%d","sessionId":"s"}`+"\n", i)
	}
	fmt.Fprintf(&b, `{"type":"long-%s","sessionId":"s"}`+"\n", strings.Repeat("x", maxUnknownName))
	u := spineFromString(t, b.String()).Unknown
	if len(u.RecordTypes) != maxUnknownNames || u.RecordTypes[otherNames] != 101-maxUnknownNames+1 || u.Total() != 101 {
		t.Errorf("%d names, %d others, total %d", len(u.RecordTypes), u.RecordTypes[otherNames], u.Total())
	}
	long := spineFromString(t, `{"type":"`+strings.Repeat("y", maxUnknownName+1)+`","sessionId":"s"}`+"\n"+
		`{"type":"`+strings.Repeat("y", maxUnknownName)+`","sessionId":"s"}`+"\n").Unknown
	if want := map[string]int{otherNames: 1, strings.Repeat("y", maxUnknownName): 1}; !maps.Equal(long.RecordTypes, want) {
		t.Errorf("record types %v, want %v", long.RecordTypes, want)
	}
}

// TestUnknownTagNames: a tag name is the user's text, so the counts keep
// only names shaped like a program's wrapper (lower-case words joined by
// '-' or '_', closed in the same text); any other is counted as
// "tag:(other)", so that a token typed in angle brackets never reaches the
// state line or status.
func TestUnknownTagNames(t *testing.T) {
	tok := fakecred.New(4).GitHub('p').Text
	tests := []struct{ name, text, want string }{
		{"a wrapper", `<new-wrapper from="x">hello</new-wrapper>`, "tag:new-wrapper"},
		{"snake case", "<new_wrapper>\nhello\n</new_wrapper>", "tag:new_wrapper"},
		{"a token", "<" + tok + "> is the token for the bot", "tag:(other)"},
		{"a closed token", "<" + tok + ">x</" + tok + ">", "tag:(other)"},
		{"digits", "<build-2024>x</build-2024>", "tag:(other)"},
		{"upper case", "<New-Wrapper>x</New-Wrapper>", "tag:(other)"},
		{"unclosed", "<new-wrapper> hello", "tag:(other)"},
		{"a long word", "<abcdefghijklmnopq-x>y</abcdefghijklmnopq-x>", "tag:(other)"},
		{"empty word", "<new--wrapper>x</new--wrapper>", "tag:(other)"},
		{"leading separator", "<_new_wrapper>x</_new_wrapper>", "tag:(other)"},
		{"trailing separator", "<new-wrapper->x</new-wrapper->", "tag:(other)"},
		{"pasted html is not counted", "<div>x</div>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			content, _ := json.Marshal(tc.text)
			data := `{"uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T10:00:00.000Z","type":"user","message":{"role":"user","content":` + string(content) + "}}\n"
			u := spineFromString(t, data).Unknown
			want := map[string]int{tc.want: 1}
			if tc.want == "" {
				want = nil
			}
			if !maps.Equal(u.UserShapes, want) {
				t.Errorf("user shapes %v, want %v", u.UserShapes, want)
			}
		})
	}
}

// TestUnknownRenamed: names an older bottled recorded (a tag name of any
// shape, a long name cut) are brought under today's rules, then renamed.
func TestUnknownRenamed(t *testing.T) {
	cut := strings.Repeat("z", maxUnknownName) + "…"
	u := &Unknown{
		UserShapes:  map[string]int{"tag:Xy_secret12": 1, "tag:ghp_Abc1": 2, "tag:new-wrapper": 1, "tag:(other)": 1, "block:video": 1},
		RecordTypes: map[string]int{cut: 2, "quantum-checkpoint": 1},
	}
	got := u.Renamed(strings.ToUpper)
	if want := map[string]int{"TAG:(OTHER)": 4, "TAG:NEW-WRAPPER": 1, "BLOCK:VIDEO": 1}; !maps.Equal(got.UserShapes, want) {
		t.Errorf("user shapes %v, want %v", got.UserShapes, want)
	}
	if want := map[string]int{"(others)": 2, "QUANTUM-CHECKPOINT": 1}; !maps.Equal(got.RecordTypes, want) {
		t.Errorf("record types %v, want %v", got.RecordTypes, want)
	}
	if (&Unknown{}).Renamed(strings.ToUpper) != nil {
		t.Error("an empty Unknown renamed is not nil")
	}
}
