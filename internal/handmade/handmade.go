// Package handmade renders hand-made sessions into bottles, for the tests of
// the packages that read bottles (index, view). It is test support only.
package handmade

import (
	"testing"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// Session is a hand-made session: turns of a user message and an answer,
// an hour apart from Start, the answer a minute after its message.
type Session struct {
	ID, CWD string
	Start   time.Time
	Turns   [][2]string
}

// Bottle renders the session as the daemon does, at now, in UTC.
func (s Session) Bottle(t testing.TB, now time.Time) *render.Bottle {
	t.Helper()
	sp := &sources.Spine{SessionID: s.ID, CWD: s.CWD, Started: s.Start}
	for i, turn := range s.Turns {
		at := s.Start.Add(time.Duration(i) * time.Hour)
		sp.Entries = append(sp.Entries,
			sources.Entry{Kind: sources.EntryUser, Time: at, Text: turn[0]},
			sources.Entry{Kind: sources.EntryAssistant, Time: at.Add(time.Minute), Text: turn[1]})
	}
	b, err := render.Render(render.Input{SessionID: s.ID, Spine: sp, Now: now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
