package watch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/sources"
)

// TestAppendExtendsConversation checks that the daemon's render after an
// append that only continues the conversation builds it from the
// appended records (the session's sources.SpineBuilder extends it), that
// one after a rewind builds it from every record, and that both bottles
// are the one-shot render's.
func TestAppendExtendsConversation(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const id = "s"
	d, path := incrementalDaemon(t, id, now)
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	rec := func(uuid, parent string, sec int) synth.Rec {
		return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: at.Add(time.Duration(sec) * time.Second), CWD: "/w"}
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	appendAged(t, path, rec("u1", "", 0).User("first")+rec("a1", "u1", 1).Assistant("m1", "one"))
	s := &session{id: id}
	steps := []struct {
		name, add string
		extended  bool
	}{
		{"a prompt and its answer", rec("u2", "a1", 2).User("second") + rec("a2", "u2", 3).Assistant("m2", "two"), true},
		{"a rewind", rec("u3", "a1", 4).User("second, again") + rec("a3", "u3", 5).Assistant("m3", "two again"), false},
		{"a prompt after the rewind", rec("u4", "a3", 6).User("third") + rec("a4", "u4", 7).Assistant("m4", "three"), true},
	}
	if res := d.renderSession(context.Background(), s, false); res.err != nil {
		t.Fatal(res.err)
	}
	for _, st := range steps {
		appendAged(t, path, st.add)
		if res := d.renderSession(context.Background(), s, false); res.err != nil {
			t.Fatal(res.err)
		}
		if got := s.spine.Extended(); got != st.extended {
			t.Errorf("%s: conversation extended %v, want %v", st.name, got, st.extended)
		}
		tr, err := sources.ReadTranscript(id, path)
		if err != nil {
			t.Fatal(err)
		}
		equalsOneShot(t, d, s, []*sources.Transcript{tr}, now)
	}
}
