package sources

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzTranscript reads arbitrary bytes as a transcript: it must not panic,
// must not consume a final line without its newline, and resuming at any
// byte must give what a one-shot read gives.
func FuzzTranscript(f *testing.F) {
	f.Add([]byte(userLine("u1", "", "2026-01-01T10:00:00.000Z", "hi")+assistantLine("a1", "u1", "2026-01-01T10:00:01.000Z", "m", "yo")), uint(10))
	f.Add([]byte(`{"type":"queue-operation","operation":"enqueue","content":"x"}`+"\n"+`{"type":"queue-operation","operation":"remove"}`+"\n"), uint(3))
	f.Add([]byte("\x00\x00{\"type\":\"user\",\"uuid\":\"a\",\"parentUuid\":\"a\",\"message\":{\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"<command-name>/x</command-name><command-args>y</command-args>\"}]}}\n{"), uint(5))
	f.Add([]byte(`{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":{"trigger":"auto"}}`+"\n"+`{"type":"attachment","uuid":"c","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"steer"}]}}`+"\n"), uint(0))
	f.Fuzz(func(t *testing.T, data []byte, split uint) {
		whole := NewTranscript("s", "")
		if err := whole.readFrom(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
		if last := bytes.LastIndexByte(data, '\n'); whole.offset != int64(last+1) {
			t.Fatalf("offset %d, want %d (just past the last newline)", whole.offset, last+1)
		}
		cut := int(split % uint(len(data)+1))
		part := NewTranscript("s", "")
		if err := part.readFrom(bytes.NewReader(data[:cut]), int64(cut)); err != nil {
			t.Fatal(err)
		}
		if err := part.readFrom(bytes.NewReader(data[part.offset:]), int64(len(data))-part.offset); err != nil {
			t.Fatal(err)
		}
		a, b := BuildSpine("s", []*Transcript{whole}), BuildSpine("s", []*Transcript{part})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("resuming at byte %d changed the spine", cut)
		}
		for _, e := range a.Entries {
			if e.Kind == EntryUser && strings.TrimSpace(e.Text) == "" && e.Images == 0 {
				t.Fatalf("empty user entry: %+v", e)
			}
		}
	})
}
