package sources

import (
	"strings"
	"testing"
)

// TestClaudeMemSize checks that the estimate of claude-mem's records counts
// every row and every text a record holds: each case adds one thing to a
// session's records, and the estimate must grow by at least its bytes.
func TestClaudeMemSize(t *testing.T) {
	text := strings.Repeat("x", 1000)
	tests := []struct {
		name string
		add  func(m *ClaudeMem)
	}{
		{"prompt", func(m *ClaudeMem) { m.Prompts = append(m.Prompts, Prompt{Text: text}) }},
		{"observation title", func(m *ClaudeMem) { m.Observations = append(m.Observations, Observation{Title: text}) }},
		{"observation narrative", func(m *ClaudeMem) { m.Observations = append(m.Observations, Observation{Narrative: text}) }},
		{"legacy observation text", func(m *ClaudeMem) { m.Observations = append(m.Observations, Observation{Text: text}) }},
		{"summary learned", func(m *ClaudeMem) { m.Summaries = append(m.Summaries, Summary{Learned: text}) }},
		{"summary next steps", func(m *ClaudeMem) { m.Summaries = append(m.Summaries, Summary{NextSteps: text}) }},
		{"tool use", func(m *ClaudeMem) { m.ToolUses[text] = 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &ClaudeMem{ContentSessionID: "s", ToolUses: map[string]int64{}}
			before := m.Size()
			tc.add(m)
			if got, want := m.Size()-before, int64(len(text)); got < want {
				t.Errorf("%s of %d bytes added: the estimate grew by %d", tc.name, want, got)
			}
		})
	}
	if n := (*ClaudeMem)(nil).Size(); n != 0 {
		t.Errorf("no records: %d bytes, want 0", n)
	}
}
