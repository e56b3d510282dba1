package e2e

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

func TestClearArchives(t *testing.T) {
	t.Parallel()
	w := newWorld(t, reply("An answer before clearing."))
	id := newSessionID()
	w.oneTurn("Work before clearing.", "--session-id", id)
	w.settled(id, "An answer before clearing.")

	// 8. /clear in headless mode: SessionEnd archives the bottle, and the
	// daemon does not bring it back from the records the command appends.
	since := time.Now()
	w.claudeP("/clear", "--resume", id)
	w.eventually("the bottle is archived", func() bool { return len(w.archived(id)) == 1 })
	w.waitSettled(id, since)
	if _, err := os.Stat(w.bottlePath(id)); err == nil {
		t.Errorf("the daemon brought the archived bottle back:\n%s", w.bottle(id))
	}
	st := w.status()
	found := false
	for _, s := range st.Disk.Sessions {
		if s.Session == id {
			found = true
			if s.Freshness != "archived" {
				t.Errorf("status shows the cleared session as %q, want archived", s.Freshness)
			}
		}
	}
	if !found {
		t.Errorf("status does not list the cleared session")
	}
}

// statusJSON is the part of `bottled status --json` the tests read.
type statusJSON struct {
	Disk struct {
		Archived int `json:"archived"`
		Missing  int `json:"missing"`
		Sessions []struct {
			Session   string `json:"session"`
			Freshness string `json:"freshness"`
		} `json:"sessions"`
	} `json:"disk"`
}

func (w *world) status() statusJSON {
	w.t.Helper()
	out, err := w.bottled("status", "--json")
	if err != nil {
		w.t.Fatalf("bottled status --json: %v\n%s", err, out)
	}
	var st statusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		w.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}
