package render

import (
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/sources"
)

// A prompt claude-mem cut at its cap says where it was cut, after the
// text sources kept (its whole words); a prompt that only looks cut, of
// the cap's length and ending in "…", is not marked without the flag.
func TestClaudeMemCutIsMarked(t *testing.T) {
	looksCut := pad(3999) + "…"
	for _, c := range []struct {
		name   string
		prompt sources.Prompt
		marked bool
	}{
		{"cut", sources.Prompt{Text: "word word…", CutByClaudeMem: true}, true},
		{"looks cut", sources.Prompt{Text: looksCut}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.prompt
			p.ID, p.Number, p.Created = 1, 1, redactAt(0)
			in := Input{SessionID: "s", Now: goldenNow, ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s",
				Prompts: []sources.Prompt{p}}}
			b, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b.Bytes)
			if !strings.Contains(got, p.Text) {
				t.Errorf("the prompt's text is not in the bottle:\n%s", got)
			}
			if m := strings.Contains(got, p.Text+"\n\n[truncated at 4000 chars]"); m != c.marked {
				t.Errorf("marked as cut: %v, want %v:\n%s", m, c.marked, got[max(0, len(got)-300):])
			}
		})
	}
}

// pad is n characters of words.
func pad(n int) string { return (strings.Repeat("word ", n/5+1))[:n] }
