// Package watch is bottled's daemon: it watches Claude Code's transcripts
// and claude-mem's database and re-renders a session's bottle, debounced,
// whenever either changes, so that every bottle is always current.
//
// Design notes:
//
//   - fsnotify watches directories, never files: <claude-dir>/projects, each
//     project directory under it, and the data directory that holds
//     claude-mem's database. Events are only hints that something changed;
//     what changed is always read from disk.
//   - The database's change signal comes from SQLite: PRAGMA data_version on
//     one long-lived read-only connection, then a query for the sessions
//     owning rows past the daemon's cursors. The WAL file's size and
//     timestamps are not trusted (a checkpoint reuses it).
//   - A slow periodic check re-stats every transcript, checks every bottle
//     against its sources the way the hook does (reading in full each
//     transcript written since its bottle was last found fresh, see
//     freshCache), and asks the database again, covering missed events,
//     queue overflow, roots that appear late, bottles removed, and changes
//     made in place. A render that fails is tried again with backoff.
//   - Nothing is rendered before the database watcher's first check: a
//     render made only because the database was not open yet would show
//     none of its rows. The start-up catch-up then compares every bottle,
//     those whose transcript is gone included, with the database as it is,
//     so rows written while the daemon was down reach their bottles.
//   - A database that goes away or cannot be read never strips a bottle of
//     its observations (see dbWatch); a render only ever moves every source
//     forward (bottles.Store.Write), and renders that crossed are done again.
//   - Each session is rendered after a trailing debounce capped by a maximum
//     wait, never twice at once, with a bounded number of renders across
//     sessions. Parse state is kept per session so that a render reads only
//     what was appended, within a byte budget (see cache.go).
//   - Bottles are written without a sync each and synced a moment later
//     together (bottles.Batch): a bottle is a cache its readers validate,
//     and a crash of the machine makes the ones written just before count
//     as stale (the batch's marker, kept while bottles keep coming, says
//     since when).
//   - The data directory stays the daemon's while it runs (see guard).
//
// Goroutines, each stopped by Run's context:
//   - the loop (Run itself) owns the scheduler, the session table and the
//     catch-up backlog, and starts renders;
//   - the fsnotify reader turns events into changes for the loop, and runs
//     the periodic rescan and the guard's checks;
//   - the database poller turns database commits into changes for the loop;
//   - the search index keeper opens (or first builds) the index, and again
//     whenever a render finds it must be built again;
//   - one goroutine per render in flight, at most Config.Workers;
//   - the syncer syncs the bottles written, and removes the batch's marker
//     once they stop coming;
//   - the status server accepts on the socket, and answers at most
//     statusConns connections at once, each in a goroutine of its own
//     (see serve.go).
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// Defaults for Config. The debounce is long enough to coalesce the burst of
// lines Claude Code writes for one API response (a block per line, tool
// results between), short enough that a bottle trails the conversation by
// well under a second. The maximum wait bounds how stale a bottle gets
// while a session writes without pause. The rescan interval only matters
// when events are lost.
const (
	DefaultDebounce  = 250 * time.Millisecond
	DefaultMaxWait   = 2 * time.Second
	DefaultRescan    = 30 * time.Second
	DefaultWorkers   = 2
	DefaultMaxCached = 32
	// DefaultCacheBytes bounds the parse state kept for sessions between
	// renders, their render caches included: a session's parse state is a
	// tenth to a fifteenth of its transcript, and its render cache is
	// counted at two to three times its bottle's size (the 100 MB
	// synthetic session's: 8.1 MB and 6.2 MB, for a 2.5 MB bottle), so
	// this keeps a few long sessions (hundreds of MB of transcript) and
	// hundreds of ordinary ones.
	DefaultCacheBytes = 64 << 20

	// DefaultCheckQuiet is how long a transcript must have been left alone
	// before the rescan checks its bottle: a session writing is followed by
	// its events, and checking it meanwhile would read it in full for
	// nothing. Claude Code writes a turn's records within a few seconds of
	// each other (tool results, then the next response), so 5 s of quiet
	// means the turn is over.
	DefaultCheckQuiet = 5 * time.Second
	// DefaultRootPoll is how often roots that do not exist yet are looked
	// for, and the guard checks what the watch saw change in the data
	// directory: a second is long enough for an rm -rf of the data
	// directory to have finished (so the guard does not race files made
	// again under it), and a directory made later is followed within it.
	DefaultRootPoll = time.Second
	// DefaultSyncQuiet is how long no bottle must have been written before
	// the bottles written are synced to disk, all together, and the
	// batch's crash marker removed (see bottles.Batch; a crash while it is
	// there renders again the bottles written since it was made). A
	// bottle replaced before it is synced never has to reach the disk
	// (safefile.Replace exchanges it, so nothing starts writing it back
	// at once): in the transcripts of 49 real sessions, 89 % of the
	// renders came within 30 s of the one before (half within 3 s, 93 %
	// within a minute), and with a sync a second after each, an append to
	// a 100 MB session waited 3–5 ms for the file system to write the
	// 2.6 MB bottle (README). Waiting longer saves little more: Linux
	// writes back what has been dirty for 30 s anyway
	// (vm.dirty_expire_centisecs). Making the marker is a new file and a
	// sync, 1.5 ms of CPU on a journal-less ext4, paid once per busy spell.
	DefaultSyncQuiet = 30 * time.Second
	// DefaultRetryMin and DefaultRetryMax bound the wait before a failed
	// render (or a search index that could not be opened) is tried again;
	// it doubles with each failure in a row. A fault a user fixes (a full
	// disk, a permission) is picked up within seconds at first, and one
	// that stays costs a render every few minutes.
	DefaultRetryMin = time.Second
	DefaultRetryMax = 5 * time.Minute
	// DefaultIndexIdleFactor is how many times as long as an attempt to
	// open the index took (building it, perhaps) the daemon waits before
	// the next, and as long as a purge took before the next purge: a
	// build costs up to a minute of CPU per GB of bottles, and however the
	// index fails (a disk that fills up as a big index is written, an
	// index deleted or damaged over and over) the daemon should not spend
	// more than a twentieth of a core on building it again.
	DefaultIndexIdleFactor = 20
	// DefaultRenderTimeout bounds one render; a render is not cancelled by
	// shutdown (in-flight renders finish), only by this. The longest
	// transcripts seen (hundreds of MB) render in seconds; two minutes is
	// far beyond that even on a busy machine under the race detector.
	DefaultRenderTimeout = 2 * time.Minute
)

// Config configures a Daemon. A zero field takes its default.
type Config struct {
	ClaudeDir  string // Claude Code's config dir (transcripts under projects/)
	DataDir    string // claude-mem's data dir (claude-mem.db; bottles/)
	Debounce   time.Duration
	MaxWait    time.Duration
	Rescan     time.Duration
	Workers    int
	MaxCached  int   // sessions whose parse state is kept
	CacheBytes int64 // bytes of parse state kept (see cache.go)
	Version    string
	Logger     *slog.Logger
	// Progress, if set, is the terminal that shows a progress bar for the
	// start-up catch-up, and that Logger must write to (see Terminal);
	// otherwise progress is logged.
	Progress *Terminal

	// The daemon's other tunables; see their defaults for why each is
	// what it is.
	CheckQuiet time.Duration // DefaultCheckQuiet
	RootPoll   time.Duration // DefaultRootPoll
	// DBPoll is how often claude-mem's database is asked for new rows
	// without a file event to prompt it: Rescan if zero, since, like the
	// rescan, it only covers events that were lost.
	DBPoll          time.Duration
	SyncQuiet       time.Duration // DefaultSyncQuiet
	RetryMin        time.Duration // DefaultRetryMin
	RetryMax        time.Duration // DefaultRetryMax
	IndexIdleFactor int           // DefaultIndexIdleFactor
	RenderTimeout   time.Duration // DefaultRenderTimeout

	// Now returns the current time; time.Now if nil. Every time the daemon
	// reads goes through it; its timers and tickers are the time
	// package's (tests run the daemon's loops in a testing/synctest bubble,
	// where those are fake too).
	Now func() time.Time
}

func (c *Config) setDefaults() {
	orDefault(&c.Debounce, DefaultDebounce)
	orDefault(&c.MaxWait, DefaultMaxWait)
	c.MaxWait = max(c.MaxWait, c.Debounce)
	orDefault(&c.Rescan, DefaultRescan)
	orDefault(&c.CheckQuiet, DefaultCheckQuiet)
	orDefault(&c.RootPoll, DefaultRootPoll)
	orDefault(&c.DBPoll, c.Rescan)
	orDefault(&c.SyncQuiet, DefaultSyncQuiet)
	orDefault(&c.RetryMin, DefaultRetryMin)
	orDefault(&c.RetryMax, DefaultRetryMax)
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	orDefault(&c.RenderTimeout, DefaultRenderTimeout)
	orDefault(&c.IndexIdleFactor, DefaultIndexIdleFactor)
	orDefault(&c.Workers, DefaultWorkers)
	orDefault(&c.MaxCached, DefaultMaxCached)
	orDefault(&c.CacheBytes, DefaultCacheBytes)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// orDefault sets the tunable *v to def when it is unset (zero, or a
// meaningless negative).
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// backoff is the wait before the next try after failures failures in a
// row.
func (c *Config) backoff(failures int) time.Duration {
	return min(c.RetryMin<<min(max(failures-1, 0), 20), c.RetryMax)
}

// indexRetryWait is the wait before trying to open the index again after
// failures failures in a row, the last of which took took.
func (c *Config) indexRetryWait(failures int, took time.Duration) time.Duration {
	return max(c.backoff(failures), time.Duration(c.IndexIdleFactor)*took)
}

// Daemon keeps bottles current. Create it with New and start it with Run.
type Daemon struct {
	cfg    Config
	log    *slog.Logger
	store  *bottles.Store // the data directory's bottles, at the daemon's clock
	rec    *recorder
	status *statusServer // answers the socket with rec's status
	// stopping is Run's context, set before any goroutine of it starts:
	// done once the daemon stops (see untilStopped). Nil outside Run.
	stopping context.Context

	changes chan change   // to the loop, from the fs reader, db poller and renders
	results chan result   // to the loop, from renders
	dbBack  chan struct{} // to the loop, from the db poller: readable again (capacity 1)
	// dbPokes asks the db poller for a check soon: the file watcher saw
	// the database or its WAL change (capacity 1: pokes while a check runs
	// coalesce).
	dbPokes chan struct{}
	// rescanNow asks the file watcher for a rescan (capacity 1).
	rescanNow chan struct{}
	// reopenIndex asks the index keeper to open the index again: a render
	// found it must be built again (capacity 1).
	reopenIndex chan struct{}
	// purgeNow asks the index keeper to purge the index: a write of the
	// daemon's left the purge marker (bottles.Result.AskedPurge, a
	// reseal), or the rescan found one a hook or the render command left
	// (capacity 1).
	purgeNow chan struct{}
	// syncNow asks the syncer to sync the bottles written and remove the
	// batch's marker without waiting for SyncQuiet: the catch-up rendered
	// again every bottle a crash of the machine may have damaged, and
	// while the crash's marker is there every reader takes the bottles
	// written since for damaged (capacity 1).
	syncNow chan struct{}
	batch   *bottles.Batch // writes bottles, syncing them once quiet (syncBottles)

	db    atomic.Pointer[sources.ClaudeMemDB] // nil until the database can be opened
	dbw   *dbWatch
	index atomic.Pointer[index.Index] // nil until the search index is open
	// lostIndex is the index checkIndex last found gone, so that it says
	// so once.
	lostIndex atomic.Pointer[index.Index]
	// purgeDue is when the keeper may purge the index next, and
	// purgeFailures counts the purges failed in a row; the keeper's
	// goroutine owns both (see purge).
	purgeDue      time.Time
	purgeFailures int
	// freshness remembers which bottles were found fresh, for the rescan.
	freshness *freshCache
	// rules are the redaction rules renders use (see loadRules), and
	// rulesStamp the patterns file's stamp when they were read (the fs
	// watcher's rescan owns it, after Run read it first).
	rules      atomic.Pointer[redact.Rules]
	rulesStamp fileStamp

	// mu guards paths, links, linkScans and observers, which renders and
	// the fs reader share.
	mu    sync.Mutex
	paths map[string]string // session → transcript path
	links map[string]string // session → the session it continued in
	// linkScans are the project dirs whose tails are read for links,
	// each closed once they are (see scanLinks).
	linkScans map[string]chan struct{}
	observers map[string]bool // sessions that are claude-mem's observer's own

	// Owned by the loop.
	sched    *scheduler
	sessions map[string]*session
	backlog  []string // catch-up, newest first
	progress *progress
	renders  errgroup.Group // the render goroutines, at most Workers
	// retries are the sessions whose last render failed: when to try
	// again and how many failures in a row.
	retries map[string]retry
	// verify are the sessions the rescan found rewritten: their next
	// render reads their transcripts again in full (a change made in place
	// among appends is not visible otherwise).
	verify map[string]bool
	// withoutDB are the sessions last rendered while the database could
	// not be read; held, those whose bottle was kept as it was because it
	// shows rows the database could not give. All are rendered again when
	// it can be read.
	withoutDB, held map[string]bool
	// blocked: renders fail because no bottle can be written at all (see
	// noteBlocked).
	blocked bool
}

// change says a session's sources changed at a time.
type change struct {
	id   string
	path string // the transcript, when the change came from it
	at   time.Time
	// rescan: found by the periodic check rather than an event; a session
	// waiting to retry a failed render keeps waiting.
	rescan bool
	// verify: the transcript was rewritten; read it again in full.
	verify bool
}

// New returns a daemon for cfg.
func New(cfg Config) *Daemon {
	cfg.setDefaults()
	store := bottles.Open(cfg.DataDir, cfg.Now, time.Local)
	d := &Daemon{
		cfg:         cfg,
		log:         cfg.Logger,
		store:       store,
		changes:     make(chan change, 1024),
		results:     make(chan result, 64),
		dbBack:      make(chan struct{}, 1),
		dbPokes:     make(chan struct{}, 1),
		rescanNow:   make(chan struct{}, 1),
		reopenIndex: make(chan struct{}, 1),
		purgeNow:    make(chan struct{}, 1),
		syncNow:     make(chan struct{}, 1),
		freshness:   newFreshCache(cfg.Now),
		batch:       store.NewBatch(),
		withoutDB:   map[string]bool{},
		retries:     map[string]retry{},
		verify:      map[string]bool{},
		held:        map[string]bool{},
		paths:       map[string]string{},
		links:       map[string]string{},
		linkScans:   map[string]chan struct{}{},
		observers:   map[string]bool{},
		sched:       newScheduler(cfg.Debounce, cfg.MaxWait),
		sessions:    map[string]*session{},
		rec: newRecorder(Status{
			Version: cfg.Version, PID: os.Getpid(),
			ClaudeDir: cfg.ClaudeDir, DataDir: cfg.DataDir,
			DB: DB{Path: sources.ClaudeMemFile(cfg.DataDir)},
		}),
	}
	d.status = newStatusServer(d.rec.snapshotWithSurvey, cfg.Now, cfg.Logger)
	return d
}

// Run runs the daemon until ctx is cancelled, then stops taking work,
// lets the renders in flight finish, and returns nil. It returns an error
// wrapping ErrRunning if another daemon holds the data directory, at start
// or after the directory was deleted under it.
func (d *Daemon) Run(parent context.Context) error {
	if err := os.MkdirAll(d.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	lk, err := acquireLock(d.cfg.DataDir)
	if err != nil {
		return err
	}
	ln, err := listenStatus(d.cfg.DataDir)
	if err != nil {
		lk.release()
		return err
	}
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	d.stopping = ctx
	defer d.status.wait() // once the guard has closed the socket
	g := &guard{dir: d.cfg.DataDir, log: d.log, lk: lk, ln: ln, stop: stop, rescan: d.requestRescan, serve: d.status.start}
	defer g.close()
	if d.batch.Damaged() {
		d.log.Warn("the machine went down while bottles were being written; those written just before are rendered again")
	}
	d.cleanTemp()
	d.loadRules()
	fw := newFSWatch(d.fsDeps(g.check))
	defer fw.close()
	d.rec.update(func(st *Status) { st.Started = d.cfg.Now() })
	d.rec.mu.Lock()
	d.rec.survey = func(s map[string]*sessionRecord) *Survey { return d.survey(fw, s) }
	d.rec.mu.Unlock()
	d.status.start(ln)

	dbw := newDBWatch(d.dbDeps())
	d.dbw = dbw

	d.backlog = d.catchUp(fw.initialScan())
	d.resealUnrenderable(ctx, nil) // the orphans are in the backlog
	if len(d.backlog) == 0 {
		d.recovered() // no bottle to render again
	}
	d.progress = newProgress(d.cfg.Progress, d.log, len(d.backlog))
	d.rec.update(func(st *Status) { st.CatchUp = CatchUp{Total: len(d.backlog), Over: len(d.backlog) == 0} })
	d.log.Info("bottled running", "claude_dir", d.cfg.ClaudeDir, "data_dir", d.cfg.DataDir,
		"sessions", len(d.backlog), "debounce", d.cfg.Debounce, "max_wait", d.cfg.MaxWait, "workers", d.cfg.Workers)
	var bg sync.WaitGroup
	bg.Go(func() { fw.run(ctx) })
	bg.Go(func() { dbw.run(ctx) })
	bg.Go(func() { d.keepIndex(ctx) })
	bg.Go(func() { d.syncBottles(ctx) })
	d.loop(ctx)
	// Stopping: the renders in flight finish (with the database still
	// open), then the watchers, which ctx has already told to stop. No
	// render starts after this line of the log.
	if n := d.sched.inFlight(); n > 0 {
		d.log.Info("stopping once the renders in flight finish", "renders", n)
	}
	d.drain()
	d.progress.close()
	bg.Wait()
	dbw.close()
	d.closeIndex()
	d.syncBatch()
	if err := context.Cause(ctx); parent.Err() == nil && err != nil {
		return err // the guard stopped it
	}
	d.log.Info("bottled stopped")
	return nil
}

// catchUp notes the transcripts the initial scan found and returns the
// sessions to catch up with, in its order.
func (d *Daemon) catchUp(found []dated) []string {
	ids := make([]string, len(found))
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, s := range found {
		ids[i] = s.id
		if s.path != "" {
			d.paths[s.id] = s.path
		}
	}
	return ids
}

// cleanTemp removes the temporary files that writers killed mid-write
// (the daemon before a crash, a hook or the render command) left in the
// bottles directory.
// It reports whether temporary files too young to remove are left.
func (d *Daemon) cleanTemp() (young bool) {
	n, waiting, err := d.store.CleanTemp()
	if err != nil {
		d.log.Warn("clean bottles dir", "err", err)
	} else if n > 0 {
		d.log.Info("removed temporary files left by writers that were killed", "count", n)
	}
	return waiting > 0
}

// Recheck makes the daemon check every bottle against its sources again,
// reading every transcript in full: what a daemon does on SIGHUP. It never
// blocks.
func (d *Daemon) Recheck() {
	d.freshness.forget()
	d.requestRescan()
}

// requestRescan asks the file watcher for a rescan now.
func (d *Daemon) requestRescan() { signal(d.rescanNow) }

// drain waits for the renders in flight, taking their results.
func (d *Daemon) drain() {
	done := make(chan struct{})
	go func() {
		d.renders.Wait()
		close(done)
	}()
	for {
		select {
		case res := <-d.results:
			d.finish(res)
		case <-done:
			// Every render has sent its result before it returned, and
			// the channel holds those the select did not take.
			for {
				select {
				case res := <-d.results:
					d.finish(res)
				default:
					return
				}
			}
		}
	}
}

// loop is the daemon's heart: it feeds changes to the scheduler, starts
// the renders that come due (live changes before catch-up), and waits.
// Nothing is rendered before the database watcher's first check.
func (d *Daemon) loop(ctx context.Context) {
	d.renders.SetLimit(d.cfg.Workers)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	release := time.NewTicker(releaseCheck)
	defer release.Stop()
	dbReady := d.dbw.ready
	for {
		now := d.cfg.Now()
		if dbReady == nil {
			d.startDue(now)
			d.startBacklog()
		}
		d.startRetries(now)
		if at, ok := d.nextWake(dbReady == nil && d.free() > 0); ok {
			timer.Reset(max(at.Sub(now), 0))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-ctx.Done():
			return
		case <-dbReady:
			dbReady = nil
		case <-d.dbBack:
			d.renderWithoutDB(d.cfg.Now())
		case c := <-d.changes:
			d.noteChange(c)
		case res := <-d.results:
			d.finish(res)
		case <-timer.C:
		case <-release.C:
			d.evict(d.cfg.Now())
		}
	}
}

func (d *Daemon) noteChange(c change) {
	if r, ok := d.retries[c.id]; ok && c.rescan && !r.at.IsZero() {
		return // it is retried at its own time
	}
	if c.verify {
		d.verify[c.id] = true
	}
	d.sched.mark(c.id, c.at)
	d.rec.changed(c.id, c.path, c.at)
	if c.path != "" {
		d.mu.Lock()
		d.paths[c.id] = c.path
		d.mu.Unlock()
	}
}

// startDue starts the renders whose time has come, as workers allow.
func (d *Daemon) startDue(now time.Time) {
	for _, s := range d.sched.due(now, d.free()) {
		d.launch(s.id, s.since, false)
	}
}

// startBacklog starts catch-up renders on workers live changes left free.
func (d *Daemon) startBacklog() {
	for len(d.backlog) > 0 && d.free() > 0 {
		id := d.backlog[0]
		d.backlog = d.backlog[1:]
		if !d.sched.start(id) {
			d.catchUpStep() // a live render is on it already
			continue
		}
		d.launch(id, time.Time{}, true)
	}
}

// free is how many more renders may start now. A render counts from its
// start until the loop has taken its result.
func (d *Daemon) free() int { return d.cfg.Workers - d.sched.inFlight() }

func (d *Daemon) launch(id string, since time.Time, catchUp bool) {
	s := d.sessions[id]
	if s == nil {
		s = &session{id: id}
		d.sessions[id] = s
	}
	s.used = d.cfg.Now()
	s.verify = d.verify[id]
	delete(d.verify, id)
	// The group's limit is Workers and free() kept the count under it, so
	// Go does not block here.
	d.renders.Go(func() error {
		// Shutdown lets a render finish: its context is not the daemon's.
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RenderTimeout)
		defer cancel()
		res := d.renderSession(ctx, s, catchUp)
		res.id, res.since, res.catchUp = id, since, catchUp
		d.results <- res
		return nil
	})
}

func (d *Daemon) finish(res result) {
	d.sched.done(res.id)
	d.noteDB(res)
	d.noteRetry(res, d.cfg.Now())
	blocked := d.noteBlocked(res)
	res.pendingAfter = !d.sched.idle(res.id)
	if res.checked {
		d.rec.checked(res.id, res.outcome, res.began)
	} else {
		d.rec.rendered(res.id, res)
	}
	switch {
	case blocked:
		d.log.Debug("render failed; trying again later", "session", res.id, "err", res.err)
	case res.err != nil:
		d.log.Warn("render failed; trying again later", "session", res.id, "err", res.err, "in", d.retries[res.id].at.Sub(res.finished).Round(time.Second))
	case res.outcome == outcomeWritten:
		args := []any{"session", res.id, "mode", res.mode, "took", res.finished.Sub(res.began), "malformed_lines", res.malformed}
		if !res.unknown.Empty() {
			// What a newer Claude Code wrote that this bottled does not know.
			args = append(args, "unknown", res.unknown.String())
		}
		d.log.Debug("bottle written", args...)
	}
	for _, next := range res.continued {
		d.noteChange(change{id: next, at: res.finished})
	}
	if res.catchUp {
		d.catchUpStep()
	}
	if s := d.sessions[res.id]; s != nil {
		s.bytes = res.bytes
	}
	d.evict(d.cfg.Now())
}

// signal sends on a channel of capacity 1 without blocking: a signal
// already pending stands for this one.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (d *Daemon) catchUpStep() {
	d.progress.step()
	over := false
	d.rec.update(func(st *Status) {
		st.CatchUp.Done++
		st.CatchUp.Over = st.CatchUp.Done >= st.CatchUp.Total
		over = st.CatchUp.Over
	})
	if over {
		d.recovered()
	}
}

// recovered is called once the catch-up is over: every bottle a crash of
// the machine may have damaged was checked (stale) and rendered again, so
// a sync, at once, may drop the crash's marker.
func (d *Daemon) recovered() {
	if d.batch.Damaged() {
		d.batch.Recovered()
		signal(d.syncNow)
	}
}

// transcriptPath returns the known transcript of a session.
func (d *Daemon) transcriptPath(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.paths[id]
}

// send hands a change to the loop unless the daemon is stopping.
func (d *Daemon) send(ctx context.Context, c change) {
	select {
	case d.changes <- c:
	case <-ctx.Done():
	}
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// observerSession reports whether the session whose transcript is at path
// (its records naming cwd, "" if not read yet) is one claude-mem's
// observer runs for itself, and remembers it: those are not the user's
// conversations and get no bottle.
func (d *Daemon) observerSession(path, cwd string) bool {
	if path == "" || !sources.IsObserverSession(path, cwd, d.cfg.DataDir) {
		return false
	}
	d.mu.Lock()
	d.observers[sources.SessionOf(path)] = true
	d.mu.Unlock()
	return true
}
