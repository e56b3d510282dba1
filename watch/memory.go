package watch

import (
	"context"
	"errors"
	"os"
	"time"

	"bottled/sources"
)

// dbWatch turns commits to claude-mem's database into changes for the
// loop. It is poked by file events on the database and its WAL and checks
// on its own every rescan interval; each check asks SQLite whether another
// connection committed (data_version) and only then which sessions own new
// rows. Its state is owned by its run goroutine.
type dbWatch struct {
	d     *Daemon
	pokes chan struct{} // capacity 1: pokes while a check runs coalesce
	// ready is closed once the first check is over: the database is open,
	// or known to be absent or unreadable. No render starts before, so that
	// none is made without a database that was only not opened yet.
	ready chan struct{}

	path    string
	db      *sources.MemoryDB
	watch   *sources.MemoryWatch
	id      sources.FileID // identity of the file db has open
	cur     sources.ChangeCursor
	existed bool // the database existed when the daemon started
	started bool
}

func newDBWatch(d *Daemon) *dbWatch {
	return &dbWatch{d: d, pokes: make(chan struct{}, 1), ready: make(chan struct{}), path: sources.MemoryFile(d.cfg.DataDir)}
}

// poke asks for a check soon; it never blocks.
func (w *dbWatch) poke() {
	select {
	case w.pokes <- struct{}{}:
	default:
	}
}

// run checks on pokes and ticks until ctx is done. The database stays open
// for renders in flight; Run closes it after them.
func (w *dbWatch) run(ctx context.Context) {
	tick := time.NewTicker(w.d.cfg.Rescan)
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
		w.d.db.Store(nil)
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
		if w.db != nil {
			w.d.log.Info("claude-mem database went away", "path", w.path)
			w.close()
		}
		w.report(err)
		return
	case w.db != nil && sources.FileIDOf(info) != w.id:
		w.d.log.Info("claude-mem database was replaced; reopening", "path", w.path)
		w.close()
		w.existed = false // every row of the new file is news
	}
	if w.db == nil && !w.open(ctx, info) {
		return
	}
	changed, err := w.watch.Changed(ctx)
	if err != nil || !changed {
		w.report(err)
		return
	}
	ids, next, err := w.watch.Since(ctx, w.cur)
	if err != nil {
		w.report(err)
		return
	}
	w.cur = next
	version := w.watch.SchemaVersion()
	w.d.rec.update(func(st *Status) { st.DB.SchemaVersion = version })
	now := w.d.cfg.Now()
	for _, id := range ids {
		if sources.ValidSessionID(id) {
			w.d.send(ctx, change{id: id, at: now})
		}
	}
	w.report(nil)
}

// open opens the database. If it existed when the daemon started, changes
// are counted from now (catch-up covers the past); if it appeared later,
// from its first row.
func (w *dbWatch) open(ctx context.Context, info os.FileInfo) bool {
	db, err := sources.OpenMemoryDB(ctx, w.path)
	if err != nil {
		w.report(err)
		return false
	}
	watch, err := db.Watch(ctx)
	if err != nil {
		db.Close()
		w.report(err)
		return false
	}
	cur := sources.ChangeCursor{}
	if w.existed {
		if cur, err = watch.Cursor(ctx); err != nil {
			watch.Close()
			db.Close()
			w.report(err)
			return false
		}
	}
	w.db, w.watch, w.cur, w.id = db, watch, cur, sources.FileIDOf(info)
	w.d.db.Store(db)
	w.d.log.Info("reading claude-mem database", "path", w.path)
	return true
}

// report publishes the database's reachability.
func (w *dbWatch) report(err error) {
	msg := ""
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, sources.ErrNoMemoryDB):
		msg = "no claude-mem database"
	case err != nil:
		msg = err.Error()
	}
	reachable := w.db != nil && err == nil
	w.d.rec.update(func(st *Status) { st.DB.Reachable, st.DB.Error = reachable, msg })
}
