package render

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"bottled/internal/synth"
)

// TestCheckIgnoresEnqueuedCommands renders a bottle, appends what
// `claude -p "/compact" --resume ID` (or "/clear") writes before its hooks
// run, and checks the bottle: a command waiting in Claude Code's queue is
// not content, so the bottle stays fresh; text typed into the queue may
// become a steering message, so it makes the bottle stale.
func TestCheckIgnoresEnqueuedCommands(t *testing.T) {
	const id = "5b1c2d3e-4f50-4a61-8b72-c3d4e5f60718"
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	rec := func(uuid, parent string) synth.Rec {
		at = at.Add(time.Second)
		return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: at, CWD: "/w"}
	}
	base := rec("u1", "").User("FRESH-P1 rename the flag") + rec("a1", "u1").Assistant("m1", "FRESH-A1 Renamed.")
	q := func(op, content string) string { return rec("", "").Queue(op, content) }
	tests := []struct {
		name     string
		appended string
		want     Freshness
	}{
		{"/compact enqueued and dequeued", q("enqueue", "/compact") + q("dequeue", ""), Fresh},
		{"/clear enqueued", q("enqueue", "/clear"), Fresh},
		{"/compact with instructions enqueued", q("enqueue", "/compact keep the API notes") + q("dequeue", ""), Fresh},
		{"a custom command enqueued", q("enqueue", "/review-pr 42"), Fresh},
		{"text typed into the queue", q("enqueue", "FRESH-STEER also update the docs"), Stale},
		{"a prompt", rec("u2", "a1").User("FRESH-P2 and the docs"), Stale},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, id+".jsonl")
			if err := os.WriteFile(path, []byte(base), 0o600); err != nil {
				t.Fatal(err)
			}
			bottles := filepath.Join(dir, "bottles")
			b, err := FromDisk(t.Context(), Request{SessionID: id, Transcript: path}, goldenNow, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Write(bottles, b); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tc.appended); err != nil {
				t.Fatal(err)
			}
			f.Close()
			got, _, why, err := Check(bottles, id, path, nil)
			if err != nil || got != tc.want {
				t.Errorf("Check = %v (%s), err %v; want %v", got, why, err, tc.want)
			}
		})
	}
}
