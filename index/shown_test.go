package index

import (
	"os"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/bottles"
)

// TestShownByTodaysRules: a pattern added after a bottle was made (and
// indexed) redacts what a search's snippets and a list's first prompts
// show of it at once, before anything renders the bottle again: without
// the daemon, nothing would.
func TestShownByTodaysRules(t *testing.T) {
	const token = "acme_Q7w9E2r4T6y8U0i1O3p5A7s9D2f4G6h8"
	data := t.TempDir()
	s := talk{ID: "s-acme", CWD: "/home/u/app", Start: day, Turns: [][2]string{
		{"use " + token + " for the deploy", "Deployed with " + token + " as asked."},
	}}
	writeBottles(t, data, s.Bottle(t, testNow))
	ix := openIndex(t, data)
	if hits := search(t, ix, "deploy", Scope{Limit: MaxLimit}); len(hits) == 0 || !strings.Contains(hits[0].Snippet, token) {
		t.Fatalf("before the pattern, the snippets should show the token as the bottle holds it: %+v", hits)
	}
	if err := os.WriteFile(bottles.RulesFile(data), []byte("Acme token: acme_[A-Za-z0-9]{32}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
	}{{"deploy"}, {"deployed"}, {token}}
	for _, c := range cases {
		hits := search(t, ix, c.query, Scope{Limit: MaxLimit})
		if len(hits) == 0 {
			t.Errorf("search %q: no hits", c.query)
		}
		for _, h := range hits {
			if strings.Contains(h.Snippet, "Q7w9E2r4") {
				t.Errorf("search %q: the snippet shows what today's rules redact: %q", c.query, h.Snippet)
			}
		}
	}
	list, err := ix.Sessions(t.Context(), Scope{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, ses := range list {
		if strings.Contains(ses.FirstPrompt, "Q7w9E2r4") {
			t.Errorf("the list shows what today's rules redact: %q", ses.FirstPrompt)
		}
	}
}
