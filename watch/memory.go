package watch

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/bottled-dev/bottled/sources"
)

// dbWatch turns commits to claude-mem's database into changes for the
// loop. It is poked by file events on the database and its WAL and checks
// on its own every Config.DBPoll; each check asks SQLite whether another
// connection committed (data_version) and only then which sessions own new
// rows. Its state is owned by its run goroutine.
//
// It also says when the database cannot be read. A database that is
// deleted, replaced by a file that is not SQLite or by another schema, or
// locked, may come back (a restore, a migration, an upgrade): while it is
// away, no bottle loses the observations it shows (renders use the records
// the daemon last read, or the bottle is held as it is, see
// Daemon.renderOnce), and when a readable database returns, every bottle
// rendered without it is rendered again. Each change of state is logged
// once, with the reason.
type dbWatch struct {
	dbDeps
	// ready is closed once the first check is over: the database is open,
	// or known to be absent or unreadable. No render starts before, so that
	// none is made without a database that was only not opened yet.
	ready chan struct{}

	db      *sources.ClaudeMemDB
	watch   *sources.ClaudeMemWatch
	id      sources.FileID // identity of the file db has open
	cur     sources.ChangeCursor
	existed bool // the database existed when the daemon started
	started bool
	state   dbState
	reason  string    // why the database cannot be read, in words
	since   time.Time // when it could no longer be read
	seen    bool      // a database was open at some point
}

// dbState is what the daemon knows of claude-mem's database.
type dbState int

const (
	dbUnknown dbState = iota // not checked yet
	dbOpen                   // open and readable
	dbAbsent                 // no file
	dbBroken                 // a file that cannot be read as claude-mem's database
)

func newDBWatch(deps dbDeps) *dbWatch {
	return &dbWatch{dbDeps: deps, ready: make(chan struct{})}
}

// run checks on pokes and every poll interval until ctx is done. The database stays open
// for renders in flight; Run closes it after them.
func (w *dbWatch) run(ctx context.Context) {
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	w.check(ctx)
	close(w.ready)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.pokes:
		case <-tick.C:
		}
		w.check(ctx)
	}
}

func (w *dbWatch) close() {
	if w.watch != nil {
		w.watch.Close()
	}
	if w.db != nil {
		w.use(nil)
		w.db.Close()
	}
	w.db, w.watch = nil, nil
}

// check opens the database if it appeared (or was replaced) and reports
// the sessions with new rows.
func (w *dbWatch) check(ctx context.Context) {
	info, err := os.Stat(w.path)
	if !w.started {
		w.started, w.existed = true, err == nil
	}
	switch {
	case err != nil:
		w.close()
		w.set(err)
		return
	case w.db != nil && sources.FileIDOf(info) != w.id:
		w.log.Info("claude-mem database was replaced; reopening", "path", w.path)
		w.close()
		w.existed = false // every row of the new file is news
	}
	if w.db == nil && !w.open(ctx, info) {
		return
	}
	changed, err := w.watch.Changed(ctx)
	if err != nil || !changed {
		w.failed(err)
		return
	}
	ids, next, err := w.watch.Since(ctx, w.cur)
	if err != nil {
		w.failed(err)
		return
	}
	w.cur = next
	version := w.watch.SchemaVersion()
	w.rec.update(func(st *Status) { st.DB.SchemaVersion = version })
	now := w.now()
	for _, id := range ids {
		if sources.ValidSessionID(id) {
			w.send(ctx, change{id: id, at: now})
		}
	}
	w.set(nil)
}

// failed handles an error reading the open database: one that says the
// file is no longer a claude-mem database closes it; others (a busy
// writer) are reported and the next check tries again.
func (w *dbWatch) failed(err error) {
	if errors.Is(err, sources.ErrClaudeMemShape) {
		w.close()
	}
	w.set(err)
}

// open opens the database. If it existed when the daemon started, or it
// is back after being away, changes are counted from now (catch-up, and
// the renders after its return, cover the past); if it appeared later,
// from its first row.
func (w *dbWatch) open(ctx context.Context, info os.FileInfo) bool {
	db, err := sources.OpenClaudeMemDB(ctx, w.path)
	if err != nil {
		w.set(err)
		return false
	}
	watch, err := db.Watch(ctx)
	if err != nil {
		db.Close()
		w.set(err)
		return false
	}
	cur := sources.ChangeCursor{}
	if w.existed || w.seen {
		if cur, err = watch.Cursor(ctx); err != nil {
			watch.Close()
			db.Close()
			w.set(err)
			return false
		}
	}
	w.db, w.watch, w.cur, w.id = db, watch, cur, sources.FileIDOf(info)
	w.use(db)
	return true
}

// set records the outcome of a check: nil if the database was read, else
// why not. A change of state is logged once and published in status; the
// database's return is announced to the loop.
func (w *dbWatch) set(err error) {
	state, reason := dbOpen, ""
	switch {
	case err == nil && w.db != nil:
	case errors.Is(err, os.ErrNotExist), errors.Is(err, sources.ErrNoClaudeMemDB):
		state, reason = dbAbsent, "no claude-mem database"
		if w.seen {
			reason = "claude-mem database deleted"
		}
	case w.db != nil:
		// Open, but this read failed (a busy writer): say so, stay open.
		w.publish(reason, err.Error())
		return
	default:
		state, reason = dbBroken, err.Error()
	}
	prev, prevReason := w.state, w.reason
	w.state, w.reason = state, reason
	log := w.log
	switch {
	case state == dbOpen && prev == dbOpen:
	case state == dbOpen && (prev == dbUnknown || !w.seen):
		log.Info("reading claude-mem database", "path", w.path)
	case state == dbOpen:
		log.Info("claude-mem database readable again; rendering again every bottle made without it", "path", w.path)
		w.back()
	case state == dbAbsent && !w.seen:
		if prev == dbUnknown {
			log.Info("no claude-mem database; bottles are made from transcripts alone until it appears", "path", w.path)
		}
	case state == prev && reason == prevReason:
	default:
		w.since = w.now()
		log.Error("claude-mem database cannot be read: "+reason+"; bottles keep the observations they show until it can be read again",
			"path", w.path)
	}
	if state == dbOpen {
		w.seen = true
		w.since = time.Time{}
	}
	w.publish(reason, "")
}

// publish puts the database's state in status: reason says why it cannot
// be read, transient why the last read failed although it is open.
func (w *dbWatch) publish(reason, transient string) {
	reachable := w.state == dbOpen && transient == ""
	msg := reason
	if transient != "" {
		msg = transient
	}
	since := w.since
	w.rec.update(func(st *Status) { st.DB.Reachable, st.DB.Error, st.DB.Since = reachable, msg, since })
}

// noteDB keeps the sets of sessions rendered without the database and of
// bottles held for want of it.
func (d *Daemon) noteDB(res result) {
	switch {
	case res.err != nil:
		return
	case res.outcome == outcomeHeld:
		d.withoutDB[res.id], d.held[res.id] = true, true
	case res.noDB:
		d.withoutDB[res.id] = true
		delete(d.held, res.id)
	default:
		delete(d.withoutDB, res.id)
		delete(d.held, res.id)
	}
	n := len(d.held)
	d.rec.update(func(st *Status) { st.DB.Held = n })
}

// renderWithoutDB marks for rendering every session rendered or held
// while the database could not be read.
func (d *Daemon) renderWithoutDB(now time.Time) {
	d.freshness.forget() // rows may have come while it was away
	for id := range d.withoutDB {
		d.noteChange(change{id: id, at: now})
	}
	d.log.Info("rendering bottles made without claude-mem's database", "count", len(d.withoutDB))
	clear(d.withoutDB)
}
