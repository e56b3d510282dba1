package watch

import (
	"runtime/debug"
	"slices"
	"time"
)

// The parse state of sessions (see session) is kept between renders so
// that a render reads only what was appended, with the session's render
// cache (render.Cache), so that it renders only the turns that changed;
// both count against the bounds. It is bounded by bytes
// (Config.CacheBytes) as well as by count (Config.MaxCached): the least
// recently rendered idle sessions are released first. A session changed
// less than activeGrace ago is kept even beyond the budget, so that a live
// session bigger than the budget is not parsed from the start at every
// change; once it is quiet it is released like the others. Memory released
// in bulk is handed back to the system at once, rather than when the
// runtime gets to it.
const (
	activeGrace = 30 * time.Second
	// releaseCheck is how often quiet sessions are looked for.
	releaseCheck = 10 * time.Second
	// idleEvict is how long any session's parse state is kept without
	// changes.
	idleEvict = 30 * time.Minute
	// releaseToOS is how much parse state must go at once for the memory
	// to be handed back to the system (which costs a garbage collection).
	releaseToOS = 16 << 20
)

// evict releases parse state beyond the cache's bounds, least recently
// used first, and that of sessions idle for idleEvict. Only the loop
// calls it.
func (d *Daemon) evict(now time.Time) {
	var idle []*session
	var total int64
	for id, s := range d.sessions {
		total += s.bytes
		if d.sched.idle(id) {
			idle = append(idle, s)
		}
	}
	slices.SortFunc(idle, func(a, b *session) int { return a.used.Compare(b.used) })
	var freed int64
	count := len(d.sessions)
	for _, s := range idle {
		quiet := now.Sub(s.used)
		over := count > d.cfg.MaxCached || total > d.cfg.CacheBytes && quiet >= activeGrace
		if !over && quiet < idleEvict {
			continue
		}
		delete(d.sessions, s.id)
		count--
		total -= s.bytes
		freed += s.bytes
	}
	if freed >= releaseToOS {
		debug.FreeOSMemory()
		d.log.Debug("released parse state", "bytes", freed)
	}
}
