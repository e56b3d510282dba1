package render

import (
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/sources"
)

// A prompt claude-mem cut at its 4,000-unit cap may end in the head of a
// word, and the head of a credential is no credential to the redaction
// rules: the bottle drops the word the cap split, and still says where
// claude-mem cut.
func TestClaudeMemCutDropsTheSplitWord(t *testing.T) {
	head := "ghp_Bf7sBf7sQx" // a GitHub token's first 14 characters
	for _, c := range []struct {
		name, text, want, never string
	}{
		{"inside a word", pad(4000-len(head)-1) + head + "…", strings.TrimRight(pad(4000-len(head)-1), " ") + "…", head},
		{"on a space", strings.Repeat("ab ", 1333) + "…", strings.TrimRight(strings.Repeat("ab ", 1333), " ") + "…", ""},
		{"one word", strings.Repeat("x", 3999) + "…", "…", "xxxx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Input{SessionID: "s", Now: goldenNow, ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s",
				Prompts: []sources.Prompt{{ID: 1, Number: 1, Text: c.text, Created: redactAt(0)}}}}
			b, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b.Bytes)
			if c.never != "" && strings.Contains(got, c.never) {
				t.Errorf("the split word's head %q is in the bottle", c.never)
			}
			if !strings.Contains(got, c.want+"\n\n[truncated at 4000 chars]") {
				t.Errorf("the prompt does not end %q then the truncation mark:\n%s", tail(c.want), got[max(0, len(got)-300):])
			}
		})
	}
}

// pad is n characters of words.
func pad(n int) string { return (strings.Repeat("word ", n/5+1))[:n] }

func tail(s string) string { return s[max(0, len(s)-20):] }
