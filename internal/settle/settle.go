// Package settle is test support for the tests that run a bottled daemon:
// waiting until the daemon has caught up with a session, as its status
// tells.
package settle

import (
	"context"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/watch"
)

// statusTimeout bounds one status query: generous, for a daemon on a busy
// machine (a query that fails is tried again until waitfor's deadline).
const statusTimeout = 10 * time.Second

// Wait waits until the daemon on the data directory has seen a change to
// session id at or after since and has nothing pending for it: every
// change up to now is reflected on disk.
func Wait(tb testing.TB, data, id string, since time.Time) {
	tb.Helper()
	waitfor.Cond(tb, "the daemon settles session "+id, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
		defer cancel()
		st, err := watch.Query(ctx, data)
		return err == nil && Settled(st, id, since)
	})
}

// Settled reports whether st shows session id changed at or after since,
// with nothing pending and rendered since its last change.
func Settled(st *watch.Status, id string, since time.Time) bool {
	for _, s := range st.Recent {
		if s.Session == id {
			return !s.Changed.Before(since) && !s.Pending && !s.Rendered.Before(s.Changed)
		}
	}
	return false
}
