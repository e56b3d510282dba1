package bottles

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/render"
)

// TestRealFixtureOnDisk renders a real session laid out the way Claude Code
// keeps it, with its subagent files beside it, through Load as the render
// command does: subagents never contribute.
func TestRealFixtureOnDisk(t *testing.T) {
	dir := fixtures.Real(t)
	claude := t.TempDir()
	const id = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
	proj := filepath.Join(claude, "projects", "-home-USER-projects-spotter")
	sub := filepath.Join(proj, id, "subagents")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dir, "marot__spotter__"+id+".jsonl"), filepath.Join(proj, id+".jsonl"))
	copyFile(t, filepath.Join(dir, "marot__spotter__"+id+"__subagents__agent-aac57f5.jsonl"), filepath.Join(sub, "agent-aac57f5.jsonl"))
	copyFile(t, filepath.Join(dir, "marot__spotter__"+id+"__subagents__agent-acompact-946d2b.jsonl"), filepath.Join(sub, "agent-acompact-946d2b.jsonl"))
	l, err := Load(t.Context(), Request{SessionID: id, ClaudeDir: claude})
	if err != nil {
		t.Fatal(err)
	}
	in := l.Input(id)
	in.Now = time.Now()
	b, err := render.Render(in)
	if err != nil {
		t.Fatalf("Render: %v (%s)", err, l.Why())
	}
	bottle := string(b.Bytes)
	for _, f := range []string{"agent-aac57f5.jsonl", "agent-acompact-946d2b.jsonl"} {
		for _, s := range textBlocks(t, filepath.Join(sub, f)) {
			if p := strings.TrimSpace(s); len(p) >= 40 && strings.Contains(bottle, p[:40]) {
				t.Errorf("subagent text from %s in the bottle: %.80q", f, p)
			}
		}
	}
	if len(b.State.Legs) != 2 {
		t.Errorf("legs = %v, want 2 (one compaction)", b.State.Legs)
	}
	lines := strings.Split(bottle, "\n")
	if leg := b.State.Legs[len(b.State.Legs)-1]; !strings.HasPrefix(lines[leg-1], "## Leg 2") {
		t.Errorf("line %d = %q, want the leg 2 heading", leg, lines[leg-1])
	}
	if o := b.State.Outline; !strings.HasPrefix(lines[o[0]-1], "- line ") || !strings.HasPrefix(lines[o[1]-1], "- line ") || lines[o[1]] != "" {
		t.Errorf("outline range %v does not frame the outline", o)
	}
}

// textBlocks returns the text blocks of the messages in a transcript.
func textBlocks(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		var blocks []struct{ Type, Text string }
		if json.Unmarshal(r.Message.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "text" {
					texts = append(texts, b.Text)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
