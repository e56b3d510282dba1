package watch

import "time"

// retry is when a session whose render failed is rendered again.
type retry struct {
	at       time.Time
	failures int
}

// nextWake is when the loop has something to do: the next retry, and,
// if it can start a render now (startable), the next render deadline.
// A session that is due while the loop cannot start it (every worker
// busy, the database not checked yet) waits for the event that ends
// that (a render's result, the check's end), which wakes the loop
// anyway: its deadline, already past, would wake it at once, again and
// again, for nothing.
func (d *Daemon) nextWake(startable bool) (time.Time, bool) {
	var at time.Time
	ok := false
	if startable {
		at, ok = d.sched.next()
	}
	for _, r := range d.retries {
		if !r.at.IsZero() && (!ok || r.at.Before(at)) {
			at, ok = r.at, true
		}
	}
	return at, ok
}

// startRetries marks for rendering the failed sessions whose wait is
// over.
func (d *Daemon) startRetries(now time.Time) {
	for id, r := range d.retries {
		if !r.at.IsZero() && !r.at.After(now) {
			r.at = time.Time{} // the render's outcome sets the next one
			d.retries[id] = r
			d.noteChange(change{id: id, at: now})
		}
	}
}

// noteRetry schedules a failed session's next attempt, or forgets it
// once a render succeeds.
func (d *Daemon) noteRetry(res result, now time.Time) {
	if res.err == nil {
		delete(d.retries, res.id)
		return
	}
	r := d.retries[res.id]
	r.failures++
	r.at = now.Add(d.cfg.backoff(r.failures))
	d.retries[res.id] = r
}
