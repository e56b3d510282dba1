package render

import (
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/sources"
)

// TestTrailRedacts writes every kind of credential into every argument
// the trail shows (a command, at its start and where the trail clips it;
// a file written, a URL fetched, a task's description, a search pattern,
// a tool's name): no part of the secret long enough to be telling may
// reach the bottle, and the placeholder names its kind.
func TestTrailRedacts(t *testing.T) {
	gen := fakecred.New(29)
	lead := strings.Repeat("word ", commandMax/5-2)
	for _, c := range gen.Every() {
		t.Run(c.Kind+"/"+c.Text[:min(12, len(c.Text))], func(t *testing.T) {
			deeds := []sources.Deed{
				{Kind: sources.DeedCommand, Tool: "Bash", Target: "export TOKEN=" + c.Text + " && ./deploy"},
				{Kind: sources.DeedCommand, Tool: "Bash", Target: lead + c.Text},
				{Kind: sources.DeedWrite, Tool: "Write", Target: "/home/u/app/" + c.Text + ".env", Created: true},
				{Kind: sources.DeedFetch, Tool: "WebFetch", Target: "https://example.com/?k=" + c.Text},
				{Kind: sources.DeedTask, Tool: "Task", Target: "use " + c.Text, Agent: c.Text},
				{Kind: sources.DeedSearch, Tool: "Grep", Target: c.Text},
				{Kind: sources.DeedOther, Tool: c.Text},
			}
			in := Input{SessionID: "s", Now: goldenNow, Spine: &sources.Spine{SessionID: "s", CWD: "/home/u/app", Entries: []sources.Entry{
				{Kind: sources.EntryUser, Time: redactAt(0), Text: "deploy it"},
				{Kind: sources.EntryAssistant, Time: redactAt(1), Text: "Deploying.", Deeds: deeds},
			}}}
			b, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			checkRedacted(t, "trail", string(b.Bytes), c, "")
			_, trail, _ := strings.Cut(string(b.Bytes), "\n"+trailHeading+"\n")
			if n := strings.Count("\n"+trail, "\n- "); n != len(deeds) {
				t.Errorf("%d trail lines, want %d:\n%s", n, len(deeds), b.Bytes)
			}
		})
	}
}
