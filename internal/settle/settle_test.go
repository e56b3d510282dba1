package settle

import (
	"testing"
	"time"

	"github.com/bottled-dev/bottled/watch"
)

// TestSettled: a session is settled once status shows a change at or after
// the time asked about, rendered since, with nothing pending; a session
// status does not list is not.
func TestSettled(t *testing.T) {
	const id = "5e771ed0-0000-4000-8000-000000000001"
	since := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	later := since.Add(time.Second)
	for _, tc := range []struct {
		name string
		s    watch.SessionStatus
		want bool
	}{
		{"rendered after its change", watch.SessionStatus{Session: id, Changed: since, Rendered: later}, true},
		{"rendered at its change", watch.SessionStatus{Session: id, Changed: later, Rendered: later}, true},
		{"changed before the time asked", watch.SessionStatus{Session: id, Changed: since.Add(-time.Second), Rendered: later}, false},
		{"pending", watch.SessionStatus{Session: id, Changed: since, Rendered: later, Pending: true}, false},
		{"rendered before its change", watch.SessionStatus{Session: id, Changed: later, Rendered: since}, false},
		{"another session", watch.SessionStatus{Session: "another", Changed: since, Rendered: later}, false},
	} {
		st := &watch.Status{Recent: []watch.SessionStatus{tc.s}}
		if got := Settled(st, id, since); got != tc.want {
			t.Errorf("%s: Settled = %v, want %v", tc.name, got, tc.want)
		}
	}
}
