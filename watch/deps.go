package watch

import (
	"context"
	"log/slog"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/sources"
)

// fsDeps is everything the file watcher (fsWatch) is given: where it
// looks, the daemon's timings and clock, where it sends what it finds, and
// the checks it runs for the daemon. It holds no reference to the Daemon,
// whose state the watcher never touches: a test gives it what it needs
// and calls its steps (initialScan, handle, rescan) itself.
type fsDeps struct {
	claude, data string         // <claude-dir>, <data-dir>
	store        *bottles.Store // the data directory's bottles
	log          *slog.Logger
	rec          *recorder // where the watch state and its failures are published
	now          func() time.Time
	rescan       time.Duration // Config.Rescan
	checkQuiet   time.Duration // Config.CheckQuiet
	rootPoll     time.Duration // Config.RootPoll
	freshness    *freshCache   // which bottles were found fresh
	rescanNow    <-chan struct{}

	// send hands a change to the loop (blocking until it takes it or ctx
	// is done).
	send func(ctx context.Context, c change)
	// observer reports whether the transcript at path is one of claude-mem's
	// observer's own (see Daemon.observerSession).
	observer func(path, cwd string) bool
	// checkFresh checks a bottle against its sources (see Daemon.checkFresh).
	checkFresh func(ctx context.Context, id, path string, ts fileStamp, tailFirst bool) (outcome string, rewritten bool)
	pokeDB     func()      // the database or its WAL changed
	checkIndex func()      // see Daemon.checkIndex
	guard      func()      // check that the data directory is still the daemon's; nil: none
	cleanTemp  func() bool // see Daemon.cleanTemp
	askPurge   func()      // a purge marker is there: the index keeper purges the index
	// loadRules reads the redaction rules again if their file changed
	// (see Daemon.loadRules) and, if they are other rules now, redacts in
	// place the bottles no render can make again: the archived ones and
	// those orphans lists (see Daemon.resealUnrenderable). The rescan
	// calls it first.
	loadRules func(ctx context.Context, orphans func() []string)
}

// fsDeps is what the daemon gives its file watcher, with guard checking
// the data directory (nil: none).
func (d *Daemon) fsDeps(guard func()) fsDeps {
	return fsDeps{
		claude: d.cfg.ClaudeDir, data: d.cfg.DataDir, store: d.store,
		log: d.log, rec: d.rec, now: d.cfg.Now,
		rescan: d.cfg.Rescan, checkQuiet: d.cfg.CheckQuiet, rootPoll: d.cfg.RootPoll,
		freshness: d.freshness, rescanNow: d.rescanNow,
		send:       d.send,
		observer:   d.observerSession,
		checkFresh: d.checkFresh,
		pokeDB:     func() { signal(d.dbPokes) },
		checkIndex: d.checkIndex,
		guard:      guard,
		cleanTemp:  d.cleanTemp,
		askPurge:   func() { signal(d.purgeNow) },
		loadRules: func(ctx context.Context, orphans func() []string) {
			if d.loadRules() {
				d.resealUnrenderable(ctx, orphans())
			}
		},
	}
}

// dbDeps is everything the database watcher (dbWatch) is given: no
// reference to the Daemon either.
type dbDeps struct {
	path  string // claude-mem's database
	log   *slog.Logger
	rec   *recorder // where the database's state is published
	now   func() time.Time
	poll  time.Duration   // Config.DBPoll
	pokes <-chan struct{} // file events on the database and its WAL
	send  func(ctx context.Context, c change)
	// use makes db the database renders read (nil: none can be read).
	use func(db *sources.ClaudeMemDB)
	// back says the database can be read again after it could not.
	back func()
}

// dbDeps is what the daemon gives its database watcher.
func (d *Daemon) dbDeps() dbDeps {
	return dbDeps{
		path: sources.ClaudeMemFile(d.cfg.DataDir), log: d.log, rec: d.rec, now: d.cfg.Now,
		poll: d.cfg.DBPoll, pokes: d.dbPokes, send: d.send,
		use:  func(db *sources.ClaudeMemDB) { d.db.Store(db) },
		back: func() { signal(d.dbBack) },
	}
}
