package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/sources"
)

// Targets of the trail (issue 17 §1), over the real sessions with a
// compaction: of the files their calls changed, the share the bottle
// names; of their commands, the share the bottle names by their first 30
// characters; and how much bigger the trail makes their bottles.
const (
	trailFilesTarget    = 0.98
	trailCommandsTarget = 0.90
	trailGrowthMax      = 0.25
	commandProbe        = 30 // characters of a command a bottle must name
)

// TestTrailTargets measures the targets on the real fixtures, reading the
// calls with encoding/json independently of the reader: every session's
// changed files (Edit, Write, MultiEdit, NotebookEdit; each file once per
// session) and commands (Bash) of its main thread, looked for in the
// bottle as the trail shows them (a path under the session's directory
// relative to it, a command on one line). Growth compares each bottle
// with the one rendered from the same spine without its deeds.
func TestTrailTargets(t *testing.T) {
	var all, compacted trailScore
	for _, f := range fixtures.All(t) {
		calls := readCalls(t, f)
		if len(calls.files) == 0 && len(calls.commands) == 0 {
			continue
		}
		sp := spineOf(t, f)
		b := renderSpine(t, sp)
		if b == nil {
			continue // nothing to render (a subagent's file)
		}
		bare := *sp
		bare.Entries = append([]sources.Entry(nil), sp.Entries...)
		for i := range bare.Entries {
			bare.Entries[i].Deeds = nil
		}
		without, err := Render(Input{SessionID: "s", Spine: &bare, Now: goldenNow})
		if err != nil {
			t.Fatal(err)
		}
		var s trailScore
		s.add(t, filepath.Base(f), string(b.Bytes), calls, len(without.Bytes))
		all.merge(s)
		if calls.compacted {
			compacted.merge(s)
		}
	}
	t.Logf("all sessions: %s", all)
	t.Logf("sessions with a compaction: %s", compacted)
	if compacted.sessions == 0 {
		t.Fatal("no real session with a compaction and tool calls")
	}
	if r := compacted.fileShare(); r < trailFilesTarget {
		t.Errorf("files changed named in the bottle: %.1f%%, target ≥ %.0f%%", 100*r, 100*trailFilesTarget)
	}
	if r := compacted.commandShare(); r < trailCommandsTarget {
		t.Errorf("commands named by their first %d characters: %.1f%%, target ≥ %.0f%%", commandProbe, 100*r, 100*trailCommandsTarget)
	}
	if g := compacted.growth(); g > trailGrowthMax {
		t.Errorf("bottles grew by %.1f%%, at most %.0f%%", 100*g, 100*trailGrowthMax)
	}
}

// calls are what encoding/json finds of a transcript's main-thread tool
// calls.
type calls struct {
	cwd       string
	files     []string // changed files, each once
	commands  []string
	compacted bool
}

func readCalls(t *testing.T, path string) calls {
	t.Helper()
	var c calls
	seen := map[string]bool{}
	for line := range fixtures.Lines(t, path) {
		if bytes.Contains(line, []byte(`"compact_boundary"`)) || bytes.Contains(line, []byte(`"isCompactSummary":true`)) {
			c.compacted = true
		}
		var r struct {
			Type        string `json:"type"`
			CWD         string `json:"cwd"`
			IsSidechain bool   `json:"isSidechain"`
			Message     struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &r) != nil || r.IsSidechain || r.Type != "assistant" {
			continue
		}
		if c.cwd == "" {
			c.cwd = r.CWD
		}
		var blocks []struct {
			Type  string         `json:"type"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		}
		_ = json.Unmarshal(r.Message.Content, &blocks)
		for _, b := range blocks {
			if b.Type != "tool_use" {
				continue
			}
			switch b.Name {
			case "Edit", "Write", "MultiEdit", "NotebookEdit":
				p, _ := b.Input["file_path"].(string)
				if b.Name == "NotebookEdit" {
					p, _ = b.Input["notebook_path"].(string)
				}
				if p != "" && !seen[p] {
					seen[p] = true
					c.files = append(c.files, p)
				}
			case "Bash":
				if cmd, _ := b.Input["command"].(string); strings.TrimSpace(cmd) != "" {
					c.commands = append(c.commands, cmd)
				}
			}
		}
	}
	if c.cwd == "" {
		// A session whose first records carry no cwd: take any.
		c.cwd = firstCWD(t, path)
	}
	return c
}

func firstCWD(t *testing.T, path string) string {
	t.Helper()
	for line := range fixtures.Lines(t, path) {
		var r struct {
			CWD string `json:"cwd"`
		}
		if json.Unmarshal(line, &r) == nil && r.CWD != "" {
			return r.CWD
		}
	}
	return ""
}

type trailScore struct {
	sessions                    int
	files, filesNamed           int
	commands, commandsNamed     int
	bytesWith, bytesWithout     int
	missedFiles, missedCommands []string
}

func (s *trailScore) add(t *testing.T, name, bottle string, c calls, without int) {
	s.sessions++
	s.bytesWith += len(bottle)
	s.bytesWithout += without
	for _, p := range c.files {
		s.files++
		shown := p
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(c.cwd, "/")+"/"); ok && c.cwd != "" {
			shown = rest
		}
		if strings.Contains(bottle, shown) {
			s.filesNamed++
		} else {
			s.missedFiles = append(s.missedFiles, name+": "+p)
		}
	}
	for _, cmd := range c.commands {
		s.commands++
		probe := []rune(strings.Join(strings.Fields(cmd), " "))
		probe = probe[:min(len(probe), commandProbe)]
		if strings.Contains(bottle, string(probe)) {
			s.commandsNamed++
		} else {
			s.missedCommands = append(s.missedCommands, name+": "+string(probe))
		}
	}
}

func (s *trailScore) merge(o trailScore) {
	s.sessions += o.sessions
	s.files += o.files
	s.filesNamed += o.filesNamed
	s.commands += o.commands
	s.commandsNamed += o.commandsNamed
	s.bytesWith += o.bytesWith
	s.bytesWithout += o.bytesWithout
	s.missedFiles = append(s.missedFiles, o.missedFiles...)
	s.missedCommands = append(s.missedCommands, o.missedCommands...)
}

func (s *trailScore) fileShare() float64    { return ratio(s.filesNamed, s.files) }
func (s *trailScore) commandShare() float64 { return ratio(s.commandsNamed, s.commands) }
func (s *trailScore) growth() float64 {
	return ratio(s.bytesWith, s.bytesWithout) - 1
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (s trailScore) String() string {
	out := []string{fmt.Sprintf("%d sessions; files changed named %d of %d (%.1f%%); commands named %d of %d (%.1f%%); bottles %d → %d bytes (%+.1f%%)",
		s.sessions, s.filesNamed, s.files, 100*s.fileShare(), s.commandsNamed, s.commands, 100*s.commandShare(),
		s.bytesWithout, s.bytesWith, 100*s.growth())}
	for _, m := range s.missedFiles[:min(len(s.missedFiles), 10)] {
		out = append(out, "  file not named: "+m)
	}
	for _, m := range s.missedCommands[:min(len(s.missedCommands), 10)] {
		out = append(out, "  command not named: "+m)
	}
	return strings.Join(out, "\n")
}
