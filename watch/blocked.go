package watch

import (
	"errors"

	"github.com/bottled-dev/bottled/safefile"
)

// noteBlocked follows whether renders fail because no bottle can be
// written at all: the bottles directory is a symbolic link, which bottled
// does not follow (safefile.ErrLinkedDir). Every render then fails the same
// way; it is said once in the log, shown in status until a render can
// write again, and each failure is retried as usual, so that bottles are
// written as soon as the link is gone. It reports whether res failed that
// way. Called by the loop.
func (d *Daemon) noteBlocked(res result) bool {
	switch {
	case errors.Is(res.err, safefile.ErrLinkedDir):
		if !d.blocked {
			d.blocked = true
			d.log.Warn("no bottle can be written; renders are tried again until one can", "err", res.err)
			why := res.err.Error()
			d.rec.update(func(st *Status) { st.Blocked = why })
		}
		return true
	case res.stored && d.blocked:
		d.blocked = false
		d.log.Info("bottles can be written again")
		d.rec.update(func(st *Status) { st.Blocked = "" })
	}
	return false
}
