package bottles

import (
	"log/slog"
	"testing"
	"time"
)

// TestReaderDefaults: a reader's zero fields get their defaults, the
// render timeout the one its interface gives; what is set stays.
func TestReaderDefaults(t *testing.T) {
	var r Reader
	r.Defaults(7 * time.Second)
	if r.Location != time.Local || r.Now == nil || r.Log == nil || r.RenderTimeout != 7*time.Second {
		t.Errorf("defaults of a zero reader: %+v", r)
	}
	now := func() time.Time { return time.Unix(0, 0) }
	log := slog.New(slog.DiscardHandler)
	set := Reader{Location: time.UTC, Now: now, Log: log, RenderTimeout: time.Second}
	set.Defaults(7 * time.Second)
	if set.Location != time.UTC || !set.Now().Equal(time.Unix(0, 0)) || set.Log != log || set.RenderTimeout != time.Second {
		t.Errorf("defaults replaced what was set: %+v", set)
	}
	if st := set.Store(); st.Loc != time.UTC || !st.Now().Equal(time.Unix(0, 0)) {
		t.Errorf("the store is not at the reader's clock and zone: %+v", st)
	}
}
