package watch

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// scheduler decides when each session is rendered: a trailing debounce
// with a maximum wait counted from the first change of a burst, so a
// session that is written continuously is still rendered at least every
// maxWait; and at most one render per session at a time, a change that
// arrives during a render waiting for it to finish.
//
// It is a plain state machine, driven with explicit times by the daemon's
// loop (its only user) and by tests, so it needs no clock and no lock.
type scheduler struct {
	debounce time.Duration
	maxWait  time.Duration
	pending  map[string]burst // sessions with changes not yet rendered
	running  map[string]bool  // sessions rendering now
}

// burst is the changes to a session since its last render started.
type burst struct {
	first, last time.Time
}

func (b burst) deadline(debounce, maxWait time.Duration) time.Time {
	d := b.last.Add(debounce)
	if cap := b.first.Add(maxWait); cap.Before(d) {
		return cap
	}
	return d
}

func newScheduler(debounce, maxWait time.Duration) *scheduler {
	return &scheduler{debounce: debounce, maxWait: maxWait, pending: map[string]burst{}, running: map[string]bool{}}
}

// mark records a change to a session at now.
func (s *scheduler) mark(id string, now time.Time) {
	b, ok := s.pending[id]
	if !ok {
		b.first = now
	}
	b.last = now
	s.pending[id] = b
}

// due returns up to limit sessions whose deadline has passed and that are
// not rendering, earliest deadline first, and marks them running. Their
// changes are then the render's to cover.
func (s *scheduler) due(now time.Time, limit int) []started {
	type item struct {
		id string
		at time.Time
	}
	var ready []item
	for id, b := range s.pending {
		if at := b.deadline(s.debounce, s.maxWait); !s.running[id] && !at.After(now) {
			ready = append(ready, item{id, at})
		}
	}
	slices.SortFunc(ready, func(a, b item) int {
		return cmp.Or(a.at.Compare(b.at), strings.Compare(a.id, b.id))
	})
	var out []started
	for _, it := range ready[:min(limit, len(ready))] {
		out = append(out, started{id: it.id, since: s.pending[it.id].first})
		delete(s.pending, it.id)
		s.running[it.id] = true
	}
	return out
}

// started is a session whose render begins, with the time of the first
// change the render covers (for latency accounting).
type started struct {
	id    string
	since time.Time
}

// start marks a session running outside of due (a catch-up render). It
// reports false if the session is already running or has changes pending,
// which a normal render will cover.
func (s *scheduler) start(id string) bool {
	if s.running[id] {
		return false
	}
	if _, ok := s.pending[id]; ok {
		return false
	}
	s.running[id] = true
	return true
}

// done records that a session's render finished. Changes marked while it
// ran are still pending and come due on their own deadline.
func (s *scheduler) done(id string) { delete(s.running, id) }

// next returns the earliest deadline of a session that can be started, and
// false if there is none.
func (s *scheduler) next() (time.Time, bool) {
	var at time.Time
	found := false
	for id, b := range s.pending {
		if s.running[id] {
			continue
		}
		if d := b.deadline(s.debounce, s.maxWait); !found || d.Before(at) {
			at, found = d, true
		}
	}
	return at, found
}

// inFlight is how many sessions are rendering.
func (s *scheduler) inFlight() int { return len(s.running) }

// idle reports whether a session has nothing pending and is not running.
func (s *scheduler) idle(id string) bool {
	_, p := s.pending[id]
	return !p && !s.running[id]
}
