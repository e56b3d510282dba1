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
	id := w.newSession("Work before clearing.")
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
	w.checkArchived(id, "daemon")

	// A daemon started later finds the session cleared at catch-up and
	// leaves it so; status says so from what that daemon knows, and from
	// the disk without a daemon.
	w.stopDaemon()
	w.checkArchived(id, "disk")
	w.startDaemon()
	w.eventually("the daemon caught up", func() bool {
		st := w.status()
		return st.Daemon != nil && st.Daemon.CatchUp.Over
	})
	w.checkArchived(id, "daemon")
	if _, err := os.Stat(w.bottlePath(id)); err == nil {
		t.Errorf("catch-up brought the archived bottle back")
	}
}

// checkArchived checks that status, answered from source ("daemon" or
// "disk"), lists the session as archived.
func (w *world) checkArchived(id, source string) {
	w.t.Helper()
	st := w.status()
	if st.Disk.Source != source {
		w.t.Errorf("status answered from %q, want %q", st.Disk.Source, source)
	}
	found := false
	for _, s := range st.Disk.Sessions {
		if s.Session == id {
			found = true
			if s.Freshness != "archived" {
				w.t.Errorf("status (%s) shows the cleared session as %q, want archived", source, s.Freshness)
			}
		}
	}
	if !found || st.Disk.Archived != 1 {
		w.t.Errorf("status (%s) lists the cleared session: %v; archived: %d", source, found, st.Disk.Archived)
	}
}

// statusJSON is the part of `bottled status --json` the tests read.
type statusJSON struct {
	Daemon *struct {
		CatchUp struct {
			Over bool `json:"over"`
		} `json:"catchUp"`
	} `json:"daemon"`
	Disk struct {
		Source      string `json:"source"`
		Transcripts int    `json:"transcripts"`
		Archived    int    `json:"archived"`
		Missing     int    `json:"missing"`
		Sessions    []struct {
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
