package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// permissionDialogs are what Claude Code's screen shows when it stops to
// ask before a Read outside the working directories.
var permissionDialogs = []string{"Allow this read", "Do you want to proceed", "outside the working director"}

var pointerPath = regexp.MustCompile(`bottled keeps the record of this session in (\S+)`)

// resumeHookRan is what Claude Code's debug log says once a SessionStart
// hook of a resume has answered.
var resumeHookRan = regexp.MustCompile(`Hooks: SessionStart:resume .*finished`)

// TestInteractiveScreen drives the interactive screen under tmux: a turn,
// /compact, the model reading the bottle through the plan with no
// permission dialog, /clear, and --resume of the cleared session.
func TestInteractiveScreen(t *testing.T) {
	t.Parallel()
	w := newWorld(t, reply("Screen answer one."))
	id := newSessionID()
	s := w.startScreen("--session-id", id)
	s.waitFor("auto mode")
	s.typeLine("Hello from the screen.")
	s.waitFor("Screen answer one.")
	w.settled(id, "Hello from the screen.", "Screen answer one.")

	s.typeLine("/compact")
	s.waitFor("Compacted")
	p := followPlan(t, w, id)
	n := w.api.Count()
	s.typeLine("Continue from the bottle.")
	s.waitFor("I have read the bottle.", permissionDialogs...)
	checkReads(t, w.api.Since(n), p, "Screen answer one.")
	// The screen shows an answer as it streams, before Claude Code has
	// written its record: a /clear typed then can end the session first,
	// and the record, arriving after the archive, is new content that
	// rightly brings the bottle back as live. So /clear waits for the
	// answer to be in the bottle.
	w.settled(id, "I have read the bottle.")

	s.typeLine("/clear")
	w.eventually("the cleared session's bottle is archived", func() bool { return len(w.archived(id)) == 1 })
	s.typeLine("/exit")

	// Resuming the cleared session: the pointer names the bottle where it
	// is now, in the archive.
	w.api.SetScript(reply("Answer after resuming the cleared session."))
	r := w.startScreen("--resume", id)
	r.waitFor("Continue from the bottle.") // the resumed conversation is on screen
	// The prompt is typed once the resume's hook has answered: typed
	// before, it can reach the transcript first, and then the session
	// has gained content, its bottle is live again, and the pointer from
	// the compaction already names it (no new pointer is due).
	w.eventually("the resume's SessionStart hook ran", func() bool {
		b, _ := os.ReadFile(r.debug)
		return resumeHookRan.Match(b)
	})
	n = w.api.Count()
	r.typeLine("Where were we?")
	r.waitFor("Answer after resuming the cleared session.", permissionDialogs...)
	req, err := lastTurn(w.api.Since(n))
	if err != nil {
		t.Fatal(err)
	}
	paths := pointerPath.FindAllStringSubmatch(req.AllText(), -1)
	if len(paths) == 0 {
		t.Fatalf("the resumed cleared session got no pointer:\n%s", pointerText(req))
	}
	last := strings.TrimSuffix(paths[len(paths)-1][1], ".")
	if archived := w.archived(id); len(archived) != 1 || last != archived[0] {
		t.Errorf("the pointer names %s, want the archived bottle %v", last, archived)
	}
	valid := 0
	for _, m := range paths {
		if m[1] == last {
			valid++
		}
	}
	if valid != 1 {
		t.Errorf("%d pointers name the bottle, want 1", valid)
	}
}
