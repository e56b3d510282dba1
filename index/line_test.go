package index

import (
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestHitLine: a hit's line is the line of the block where the match is,
// not the block's heading: in a message of several lines, for words that
// match only after folding, in Chinese and Japanese, in an observation
// line, and for a phrase whose words are also alone on an earlier line.
func TestHitLine(t *testing.T) {
	at := func(m int) time.Time { return day.Add(time.Duration(m) * time.Minute) }
	sp := &sources.Spine{SessionID: "lines", CWD: "/p", Started: day, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: at(0), Text: "first line\nsecond line\nthe Café is open"},
		{Kind: sources.EntryAssistant, Time: at(1), Text: "line one\n服务很稳定\n\nこのプログラムは安定しています"},
		{Kind: sources.EntryUser, Time: at(2), Text: "retry once\nthen\nthe retry loop again"},
	}}
	mem := &sources.ClaudeMem{ContentSessionID: "lines", Observations: []sources.Observation{
		{ID: 7, Title: "Rewrote the tokenizer", Narrative: "Bigrams for the whole corpus", PromptNumber: 1, Created: at(1)},
	}}
	b, err := render.Render(render.Input{SessionID: "lines", Spine: sp, ClaudeMem: mem, Now: testNow, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	writeBottles(t, data, b)
	ix := openIndex(t, data)
	cases := []struct{ query, line string }{
		{"cafe", "the Café is open"},
		{"open", "the Café is open"},
		{"稳定", "服务很稳定"},
		{"安定", "このプログラムは安定しています"},
		{"tokenizer", "Rewrote the tokenizer"},
		{"bigrams", "Bigrams for the whole corpus"},
		{`"retry loop"`, "the retry loop again"},
		{"loop retry", "retry once"}, // the first line with a word of the query
	}
	for _, c := range cases {
		hits := search(t, ix, c.query, Scope{})
		if len(hits) != 1 {
			t.Errorf("search %q: %d hits, want 1", c.query, len(hits))
			continue
		}
		if got := lineOf(t, hits[0].Bottle, hits[0].Line); !strings.Contains(got, c.line) {
			t.Errorf("search %q: line %d is %q, want the line holding %q", c.query, hits[0].Line, got, c.line)
		}
	}
}
