package watch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/sources"
)

// TestAppendExtendsConversation checks that the daemon's renders keep
// what the session's sources.SpineBuilder needs to build the spine after
// an append from the appended records alone: the same transcript, read on
// from where it was, never again from the start, and the builder's state,
// kept from one render to the next; and that the bottles, after appends
// the builder extends the spine by and after a rewind, which it builds in
// full (its own tests tell which it does), are the one-shot render's.
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
	steps := []struct{ name, add string }{
		{"a prompt and its answer", rec("u2", "a1", 2).User("second") + rec("a2", "u2", 3).Assistant("m2", "two")},
		{"a rewind", rec("u3", "a1", 4).User("second, again") + rec("a3", "u3", 5).Assistant("m3", "two again")},
		{"a prompt after the rewind", rec("u4", "a3", 6).User("third") + rec("a4", "u4", 7).Assistant("m4", "three")},
	}
	if res := d.renderSession(context.Background(), s, false); res.err != nil {
		t.Fatal(res.err)
	}
	if len(s.chain) != 1 {
		t.Fatalf("the session reads %d transcripts, want 1", len(s.chain))
	}
	read := s.chain[0]
	for _, st := range steps {
		appendAged(t, path, st.add)
		if res := d.renderSession(context.Background(), s, false); res.err != nil {
			t.Fatal(res.err)
		}
		switch {
		case len(s.chain) != 1 || s.chain[0] != read:
			t.Errorf("%s: the session read its transcript into new parse state", st.name)
		case read.Rewrites() != 0:
			t.Errorf("%s: the session read its transcript again from the start", st.name)
		case s.spine.Size() == 0:
			t.Errorf("%s: the session's spine builder kept nothing to extend the next spine from", st.name)
		}
		tr, err := sources.ReadTranscript(id, path)
		if err != nil {
			t.Fatal(err)
		}
		equalsOneShot(t, d, s, []*sources.Transcript{tr}, now)
	}
}
