package index

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestSearchFindsDeeds: a session is found by a file it changed and by a
// command it ran, and the hit says it is a deed. Over the real bottles,
// every file edited in one session only is searched for as a phrase.
func TestSearchFindsDeeds(t *testing.T) {
	data := t.TempDir()
	at := testNow.Add(-time.Hour)
	mk := func(id string, deeds ...sources.Deed) *render.Bottle {
		b, err := render.Render(render.Input{SessionID: id, Now: testNow, Location: time.UTC, Spine: &sources.Spine{
			SessionID: id, CWD: "/home/dev/app", Started: at, Entries: []sources.Entry{
				{Kind: sources.EntryUser, Time: at, Text: "fix the renderer"},
				{Kind: sources.EntryAssistant, Time: at.Add(time.Minute), Text: "Done.", Deeds: deeds},
			}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	writeBottles(t, data,
		mk("changed", sources.Deed{Kind: sources.DeedEdit, Tool: "Edit", Target: "/home/dev/app/render/full.go", Lines: true, Added: 3}),
		mk("ran", sources.Deed{Kind: sources.DeedCommand, Tool: "Bash", Target: "go test -race ./watch", Failed: true}))
	ix := openIndex(t, data)
	for _, c := range []struct{ query, session, line string }{
		{`render/full.go`, "changed", "- edited render/full.go (+3 −0)"},
		{`"go test -race"`, "ran", "- ran `go test -race ./watch` — failed"},
	} {
		hits := search(t, ix, c.query, Scope{})
		if got := sessionsOf(hits); !slices.Equal(got, []string{c.session}) {
			t.Errorf("search %s: sessions %v, want [%s]", c.query, got, c.session)
			continue
		}
		if h := hits[0]; h.Kind != render.BlockDeed || lineOf(t, h.Bottle, h.Line) != c.line {
			t.Errorf("search %s: hit %s at line %d %q, want a deed at %q", c.query, h.Kind, h.Line, lineOf(t, h.Bottle, h.Line), c.line)
		}
	}

	// The real sessions, each by a file only it edited.
	data = t.TempDir()
	bottles := realBottles(t, true)
	edited := map[string][]string{} // file as the trail shows it → sessions
	for _, b := range bottles {
		writeBottles(t, data, b.bottle)
		p, err := render.Parse(b.bottle.Bytes, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for _, bl := range p.Blocks {
			line := string(b.bottle.Bytes[bl.Text:bl.End])
			if f, ok := strings.CutPrefix(line, "edited "); ok && bl.Kind == render.BlockDeed {
				f, _, _ = strings.Cut(f, " ")
				if !slices.Contains(edited[f], b.id) {
					edited[f] = append(edited[f], b.id)
				}
			}
		}
	}
	ix = openIndex(t, data)
	checked := 0
	for f, ids := range edited {
		if len(ids) != 1 || len(tokens(f)) < 2 {
			continue
		}
		checked++
		hits := search(t, ix, `"`+f+`"`, Scope{Limit: MaxLimit})
		if !slices.ContainsFunc(hits, func(h Hit) bool { return h.Session == ids[0] && h.Kind == render.BlockDeed }) {
			t.Errorf("search %q: no deed hit in %s (%d hits)", f, ids[0], len(hits))
		}
	}
	if checked < 50 {
		t.Errorf("only %d files edited in one real session", checked)
	}
}
