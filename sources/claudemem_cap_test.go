package sources

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/internal/memwriter"
)

// A value longer than bottled's cap is cut at the end of its last whole
// word: a credential the cap would split leaves no head for redaction to
// miss (the head of a token is no token to the rules).
func TestCappedValuesEndOnAWord(t *testing.T) {
	token := "ghp_" + strings.Repeat("Bf7s", 9) // 40 characters, one word
	// prose fills the text to the cap minus 10 characters, so that the
	// token stands across it.
	prose := func(n int) string {
		s := strings.Repeat("word ", n/5+1)[:n-1] + " "
		return s
	}
	field := prose(maxFieldChars-10) + token + " after"
	prompt := prose(maxPromptChars-10) + token + " after"
	onSpace := prose(maxFieldChars) + "next" // the cap falls on a space
	accented := strings.Repeat("é", maxFieldChars-3) + " " + strings.Repeat("ü", 10)
	oneWord := strings.Repeat("x", maxFieldChars+1)

	path := filepath.Join(t.TempDir(), "claude-mem.db")
	const t0 = int64(1_735_000_000_000)
	err := memwriter.BuildLegacyDB(path, memwriter.LegacySession{
		Session: memwriter.LegacySDKSession{ClaudeSessionID: "capped", SDKSessionID: "sdk-c", Project: "p", StartedAtEpoch: t0},
		Prompts: []memwriter.LegacyPrompt{{ID: 1, PromptNumber: 1, Text: prompt, CreatedAtEpoch: t0 + 1}},
		Summaries: []memwriter.LegacySummary{{ID: 2, Request: field, Completed: onSpace, Learned: accented, Notes: oneWord,
			PromptNumber: 1, CreatedAtEpoch: t0 + 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := memOpen(t, path).Session(t.Context(), "capped")
	if err != nil || got == nil || len(got.Prompts) != 1 || len(got.Summaries) != 1 {
		t.Fatalf("Session = %+v, %v; want one prompt and one summary", got, err)
	}
	s := got.Summaries[0]
	for _, c := range []struct{ name, got, want string }{
		{"field across a token", s.Request, strings.TrimRight(prose(maxFieldChars-10), " ") + "…"},
		{"prompt across a token", got.Prompts[0].Text, strings.TrimRight(prose(maxPromptChars-10), " ") + "…"},
		{"field cut on a space", s.Completed, strings.TrimRight(prose(maxFieldChars), " ") + "…"},
		{"characters, not bytes", s.Learned, strings.Repeat("é", maxFieldChars-3) + "…"},
		{"one word", s.Notes, "…"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d characters ending %q, want %d ending %q", c.name,
				utf8.RuneCountInString(c.got), tail(c.got), utf8.RuneCountInString(c.want), tail(c.want))
		}
		if strings.Contains(c.got, "ghp_") {
			t.Errorf("%s: the token's head is kept: …%q", c.name, tail(c.got))
		}
	}
	if !got.Prompts[0].Clipped {
		t.Error("the capped prompt is not marked clipped")
	}
}

func tail(s string) string {
	if len(s) > 24 {
		return s[len(s)-24:]
	}
	return s
}

// A prompt claude-mem cut at its 4,000-unit cap may end in the head of a
// word, and the head of a credential is no credential to the redaction
// rules: what sources keeps of it drops the word the cap split, and says
// that claude-mem cut it.
func TestClaudeMemCutDropsTheSplitWord(t *testing.T) {
	head := "ghp_Bf7sBf7sQx" // a GitHub token's first 14 characters
	words := func(n int) string { return (strings.Repeat("word ", n/5+1))[:n] }
	for _, c := range []struct {
		name, text, want string
		cut              bool
	}{
		{"inside a word", words(4000-len(head)-1) + head + "…", strings.TrimRight(words(4000-len(head)-1), " ") + "…", true},
		{"on a space", strings.Repeat("ab ", 1333) + "…", strings.TrimRight(strings.Repeat("ab ", 1333), " ") + "…", true},
		{"one word", strings.Repeat("x", 3999) + "…", "…", true},
		{"4,000 code points are more units", strings.Repeat("😀", 10) + words(3989) + "…", strings.Repeat("😀", 10) + words(3989) + "…", false},
		{"counted in UTF-16", strings.Repeat("😀", 1000) + " " + words(1997-len(head)) + " " + head + "…",
			strings.Repeat("😀", 1000) + " " + words(1997-len(head)) + "…", true},
		{"shorter", "a prompt…", "a prompt…", false},
		{"no ellipsis", strings.Repeat("x", 4000), strings.Repeat("x", 4000), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, cut := c.text, cutByClaudeMem(c.text)
			if cut {
				got = wholeWordsOfCut(got)
			}
			if cut != c.cut || got != c.want {
				t.Errorf("cut %v, %d characters ending %q; want cut %v, %d ending %q", cut,
					utf8.RuneCountInString(got), tail(got), c.cut, utf8.RuneCountInString(c.want), tail(c.want))
			}
		})
	}
}
