// Package index owns bottled's search index: an SQLite FTS5 index of what
// the bottles say, in bottled's own database in the data directory (never
// claude-mem's). It is fed rendered bottles, never the raw sources, so it
// holds nothing a bottle does not; it is a cache that can always be built
// again from the bottles, and every hit is checked against the bottle on
// disk before it is shown.
//
// Layout: <data-dir>/bottled-index-v<Format>/ (Dir) holds generations of the database
// (<n>.db with its -wal and -shm) and a file "current" naming the one in
// use. A rebuild (asked for, or because the database is missing, of another
// format or corrupt) makes a new generation current, which processes still
// using the old one notice at their next operation, and fills it newest
// bottles first, in steps that readers can answer from (see build.go). A
// lock file there makes sure only one process builds at a time.
//
// Unit of indexing: one block of a bottle (render.Block): a user message,
// the assistant's text of a turn, one observation line, one summary. A
// bottle that grew by a turn is updated by its changed blocks only: blocks
// are matched by a checksum of their bytes, so unchanged ones are never
// tokenized again. A bottle this process indexed last is read from the
// parse it kept of the one before (render.Reparse, see known.go): the
// blocks in the part of its body that did not change are neither parsed
// nor checksummed nor matched again, and keep their rows. Words are cut by bottled's own tokenizer, the same for
// documents and queries: unicode61's rules with more folds (fold.go),
// combining marks inside words, bigrams in Chinese, Japanese, Korean,
// Thai, Lao, Khmer and Myanmar, emoji as words (see tokenize.go).
package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// Format is the version of the database layout and of the tokenizer's
// words (6: Thai, Lao, Khmer and Myanmar in bigrams, marks inside words,
// emoji, the NFKC and other folds of fold.go). A database of another
// format is rebuilt.
const Format = 6

// applicationID marks the database file as bottled's index ("btix").
const applicationID = 0x62746978

// Dir is where the index lives in a data directory: a directory of its
// format's own. A process of a bottled with another format (an MCP
// server started before an upgrade runs as long as its Claude Code
// session) keeps its own index there, and neither takes the other's for
// one to build again: in one directory, each rebuilt the other's at its
// next opening, and removed its generations.
func Dir(dataDir string) string { return filepath.Join(dataDir, dirPrefix+strconv.Itoa(Format)) }

// dirPrefix starts the names of the index directories of every format from
// 5 on; legacyDir held those of format 4 and before.
const (
	dirPrefix = "bottled-index-v"
	legacyDir = "bottled-index"
)

// RemoveOtherFormats removes from dataDir the indexes of other formats
// (the daemon's start-up does, once an upgrade has restarted it): they are
// caches of the bottles, and the words of bottles purged since may still
// be in their files. A process of another bottled still using one goes on
// with the files it has open, and builds its own again if it opens it
// again.
func RemoveOtherFormats(dataDir string) error {
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return fmt.Errorf("remove other formats' indexes: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		other := name == legacyDir ||
			strings.HasPrefix(name, dirPrefix) && filepath.Join(dataDir, name) != Dir(dataDir)
		if !other || !e.IsDir() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dataDir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove other formats' indexes: %w", err)
	}
	return nil
}

const (
	currentFile = "current"
	lockFile    = "lock"
)

// Tunables.
const (
	// busyTimeout is how long a write waits for another process's write
	// (the daemon's per-turn updates are small; a sync of many bottles
	// commits in batches of at most syncBatch bytes).
	busyTimeout = 10 * time.Second
	// syncBatch is how many bytes of bottles a sync indexes per
	// transaction into the generation in use: big enough that commits
	// cost little, small enough that other writers get their turn within
	// busyTimeout. A rebuild fills its new generation, which no other
	// process uses yet, in one transaction.
	syncBatch = 32 << 20
	// pendingMax is FTS5's in-memory buffer of new terms during a rebuild
	// (the "hashsize" option), flushed to a segment when full. Over 200 MB
	// of bottles, 16 MiB peaks at 56 MB resident against 83 MB for 32 MiB
	// and 126 MB for 64 MiB, within a few percent of their speed: the
	// merge at the end costs about the same however many segments.
	pendingMax = 16 << 20
)

// ErrBuilding reports that another process is building the index and did
// not finish within the time the caller allowed.
var ErrBuilding = errors.New("the search index is being built by another process")

// Options configure an Index.
type Options struct {
	// BuildFor bounds how long Open (or an operation that finds the index
	// unusable) spends building the index, when it must be built or its
	// build was left unfinished and no process is at it: then it answers
	// from what is indexed so far, and the next Open or Build continues.
	// Zero builds to the end first, waiting while another process builds
	// (as the context allows).
	BuildFor time.Duration
	// Now is the clock BuildFor is measured by (time.Now if nil).
	Now func() time.Time
	// Location is the time zone the bottles' times were rendered in
	// (time.Local if nil; the daemon and the CLI render in local time).
	Location *time.Location
	// Building, if set, is called when Open starts building the index,
	// which takes a while for many bottles.
	Building func()
	// Waiting, if set, is called when Open finds another process
	// building the index and waits for it (as long as ctx allows).
	Waiting func()
	// Progress, if set, is called after each bottle a build or a sync
	// indexes, with the bytes of bottles indexed so far and the bytes it
	// has to index in all (for a build, by every process that worked at
	// it), so that a long one can show how far it got. It is called with
	// the index busy: it must not use the index.
	Progress func(done, total int64)
	// Rebuild makes Open build the index anew from the bottles even if
	// the one there is usable.
	Rebuild bool

	chunk int64 // bytes of bottles per step of a build (buildChunk if 0), for tests
}

// Index is an open search index. Its methods are safe for concurrent use;
// they take turns on one connection.
type Index struct {
	dir      string         // the index directory
	dataDir  string         // the data directory it is in
	store    *bottles.Store // the bottles it indexes
	loc      *time.Location
	notify   func()                  // Options.Building
	waiting  func()                  // Options.Waiting
	progress func(done, total int64) // Options.Progress
	buildFor time.Duration           // Options.BuildFor
	now      func() time.Time
	chunk    int64

	// mu guards everything below: the connection is used by one
	// goroutine at a time.
	mu      sync.Mutex
	conn    *sqlite3.Conn
	gen     int
	file    sources.FileID // gen's database file, as opened
	current fileState      // the "current" file gen was read from
	closed  bool           // Close was called: no operation opens it again
	watch   *watcher       // nil unless Watch was called
	stmts   map[string]*sqlite3.Stmt
	known   known  // block lists of recently updated bottles
	marks   uint64 // counts updateDocs calls, to mark the blocks each matched
	nextDoc int64  // the row number of the next block a build writes (0: SQLite's)
}

// Open opens the index of the bottles in dataDir, building it first if it
// is missing, of another format or corrupt, or if opts.Rebuild asks, and
// continuing a build left unfinished that no process is at: for at most
// opts.BuildFor, or to the end. ctx bounds it, and the wait for another
// process building it.
func Open(ctx context.Context, dataDir string, opts Options) (*Index, error) {
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.chunk <= 0 {
		opts.chunk = buildChunk
	}
	ix := &Index{
		dir:      Dir(dataDir),
		dataDir:  dataDir,
		store:    bottles.Open(dataDir, opts.Now, opts.Location),
		loc:      opts.Location,
		notify:   opts.Building,
		waiting:  opts.Waiting,
		progress: opts.Progress,
		buildFor: opts.BuildFor,
		now:      opts.Now,
		chunk:    opts.chunk,
	}
	// Owner-only, and never through a symbolic link: the index's files
	// are written there (safefile.MkdirPrivate).
	if err := safefile.MkdirPrivate(ix.dir); err != nil {
		return nil, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.open(ctx, opts.Rebuild); err != nil {
		ix.closeConn()
		return nil, err
	}
	return ix, nil
}

// open makes sure there is a usable generation, building one if need be
// (or if rebuild), and continues its build if it is unfinished and no
// other process is at it. Called with mu held.
func (ix *Index) open(ctx context.Context, rebuild bool) error {
	if rebuild {
		return ix.build(ctx, 0, true)
	}
	failed, err := ix.ensure()
	var b *buildRow
	if err == nil {
		if b, err = ix.unfinished(); corrupt(err) {
			failed = ix.gen
		}
	}
	if err != nil {
		if !unusable(err) {
			return err
		}
		return ix.build(ctx, failed, false)
	}
	if b == nil {
		return nil
	}
	until := ix.deadline()
	unlock, locked, err := lockBuild(ctx, filepath.Join(ix.dir, lockFile), ix.waiting, ix.notWaiting())
	if err != nil || !locked {
		return err
	}
	defer unlock()
	return ix.fill(ctx, until, true)
}

// deadline is when a build started now stops (zero: never).
func (ix *Index) deadline() time.Time {
	if ix.buildFor <= 0 {
		return time.Time{}
	}
	return ix.now().Add(ix.buildFor)
}

// notWaiting is what lockBuild checks while another process builds: with
// a bounded build, a usable generation ends the wait, and the index
// answers from it.
func (ix *Index) notWaiting() func() bool {
	if ix.buildFor <= 0 {
		return nil
	}
	return func() bool {
		_, _, err := ix.readCurrent()
		return err == nil
	}
}

// Close closes the index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.closed = true
	if ix.watch != nil {
		ix.watch.close()
		ix.watch = nil
	}
	return ix.closeConn()
}

func (ix *Index) closeConn() error {
	if ix.conn == nil {
		return nil
	}
	ix.closeStmts()
	ix.known.reset()
	err := ix.conn.Close()
	ix.conn = nil
	return err
}

// ensure makes ix.conn the current generation, opening it if another
// process switched to a new one. It returns the generation it found
// unusable, if it did. Called with mu held at the start of every
// operation; when nothing changed it costs two stats: "current" is
// replaced (renamed over) at every switch, so a file whose identity, size
// and modification time are those last read still names the same
// generation, and the generation's file is still the one open (not
// deleted, with its directory, say, which would leave this process alone
// with files no other process sees).
func (ix *Index) ensure() (int, error) {
	if ix.closed {
		return 0, errClosed
	}
	if ix.conn != nil {
		if info, err := os.Stat(filepath.Join(ix.dir, currentFile)); err == nil && stateOf(info) == ix.current {
			if info, err := os.Stat(ix.genPath(ix.gen)); err == nil && sources.FileIDOf(info) == ix.file {
				return 0, nil
			}
		}
	}
	st, gen, err := ix.readCurrent()
	if err != nil {
		return 0, err
	}
	if err := ix.openGen(gen); err != nil {
		return gen, err
	}
	ix.current = st
	return 0, nil
}

// readCurrent reads which generation is in use, with the state of the
// file it was read from.
func (ix *Index) readCurrent() (fileState, int, error) {
	path := filepath.Join(ix.dir, currentFile)
	f, err := os.Open(path)
	if err != nil {
		return fileState{}, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fileState{}, 0, err
	}
	data, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return fileState{}, 0, err
	}
	gen, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || gen < 1 {
		return fileState{}, 0, fmt.Errorf("%w: %s holds %q", ErrUnusable, path, data)
	}
	return stateOf(info), gen, nil
}

// errClosed reports an operation on an Index after Close.
var errClosed = errors.New("the search index was closed")

// Verify makes sure the index's files are still there, opening the
// generation another process switched to if one did, and reports why not
// (ErrUnusable when they are gone, missing or damaged: it must be built
// again). It never builds.
func (ix *Index) Verify() error { return ix.doExisting(func() error { return nil }) }

// ErrUnusable reports an index that must be built again (it is missing,
// of another format or corrupt), found by an operation that does not build
// it: Put. Opening the index again (Open) builds it, as do the other
// operations.
var ErrUnusable = errors.New("the search index must be built again")

// corrupt reports whether SQLite found the database damaged.
func corrupt(err error) bool {
	return errors.Is(err, sqlite3.CORRUPT) || errors.Is(err, sqlite3.NOTADB)
}

// unusable reports whether err means the index must be built again: it
// is missing, of another format, not a database, or corrupt.
func unusable(err error) bool {
	return errors.Is(err, ErrUnusable) || errors.Is(err, fs.ErrNotExist) || corrupt(err)
}

func (ix *Index) genPath(gen int) string {
	return filepath.Join(ix.dir, strconv.Itoa(gen)+".db")
}

// openGen opens generation gen and checks that it is an index of this
// format.
func (ix *Index) openGen(gen int) error {
	ix.closeConn()
	path := ix.genPath(gen)
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	c, err := openConn(path)
	if err != nil {
		return err
	}
	if err := checkSchema(c); err != nil {
		c.Close()
		return err
	}
	// A read-only no-op where the index is; where it is not, a write, once.
	// Its failure (another process's write outlasting the busy timeout) is
	// left to a later opening: the lists are right without, only slower.
	_ = c.Exec(listIndexSQL)
	ix.conn, ix.gen, ix.file = c, gen, sources.FileIDOf(info)
	return nil
}

// openConn opens a database file with FTS5 registered on the connection.
func openConn(path string) (*sqlite3.Conn, error) {
	// The driver creates the WAL and shared-memory files world-readable
	// (umask permitting); the index holds conversation words, so they are
	// made the owner's first, like the bottles.
	for _, suffix := range []string{"-wal", "-shm"} {
		if f, err := os.OpenFile(path+suffix, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			f.Close()
		}
	}
	c, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	if err := registerFTS(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("open index %s: register fts5: %w", path, err)
	}
	if err := c.BusyTimeout(busyTimeout); err != nil {
		c.Close()
		return nil, err
	}
	// WAL: readers never wait for the daemon's writes. NORMAL: a crash can
	// lose the last commits, never consistency; the index is a cache that
	// the next sync repairs.
	if err := c.Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"); err != nil {
		c.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	return c, nil
}

func checkSchema(c *sqlite3.Conn) error {
	st, _, err := c.Prepare(`SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema WHERE name IN ('bottles', 'docs', 'build', 'text'))`)
	if err != nil {
		return err
	}
	defer st.Close()
	if !st.Step() {
		return st.Err()
	}
	app, format, tables := st.ColumnInt64(0), st.ColumnInt(1), st.ColumnInt(2)
	if app != applicationID || format != Format || tables != 4 {
		return fmt.Errorf("%w: application %#x, format %d, %d tables", ErrUnusable, app, format, tables)
	}
	return nil
}

// schema is the database layout. text is contentless: the words are
// indexed, the text itself stays in the bottles, where snippets are read
// from (and where every hit is checked).
var schema = fmt.Sprintf(`
PRAGMA application_id = %d;
PRAGMA user_version = %d;
CREATE TABLE bottles (
	id          INTEGER PRIMARY KEY,
	path        TEXT NOT NULL UNIQUE, -- relative to the bottles directory
	session     TEXT NOT NULL,
	archived    INTEGER NOT NULL,     -- 1: in archive/ (the session was cleared)
	role        INTEGER NOT NULL,     -- see roleCurrent…
	project     TEXT NOT NULL,
	mode        TEXT NOT NULL,
	started     INTEGER NOT NULL,     -- unix seconds, 0 unknown
	last_active INTEGER NOT NULL,
	turns       INTEGER NOT NULL,
	compactions INTEGER NOT NULL,
	first_prompt TEXT NOT NULL,
	dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL
);
CREATE INDEX bottles_session ON bottles (session);
CREATE INDEX bottles_file ON bottles (ino, size, mtime);
CREATE INDEX bottles_project ON bottles (project);
%[4]s;
CREATE TABLE docs (
	id     INTEGER PRIMARY KEY,         -- the row of text
	bottle INTEGER NOT NULL,
	seq    INTEGER NOT NULL,            -- position of the block in the bottle
	sum    INTEGER NOT NULL,            -- checksum of the block's bytes
	kind   INTEGER NOT NULL,            -- render.BlockKind
	time   INTEGER NOT NULL,            -- unix seconds, 0 unknown
	words  INTEGER NOT NULL             -- words in the body, for ranking
);
CREATE INDEX docs_bottle ON docs (bottle, seq);
CREATE TABLE build (                -- one row while the build is unfinished (see build.go)
	id            INTEGER PRIMARY KEY CHECK (id = 1),
	frontier_mtime INTEGER NOT NULL,   -- the oldest bottle taken in so far
	frontier_path TEXT NOT NULL,
	next_id       INTEGER NOT NULL,    -- the build's rows are numbered below
	pending       INTEGER NOT NULL,    -- bottles still ahead of the frontier
	pending_bytes INTEGER NOT NULL,
	done_bytes    INTEGER NOT NULL     -- bytes of bottles the build took in
);
%[3]s;
`, applicationID, Format, textTable, listIndexSQL)

// listIndex orders the bottles as the lists show them (sessionsSQL), so
// that a list is read in order instead of sorted whole: sorting 5,000
// sessions took half of the list's query. It came after Format 4 without
// changing the format, since no reader depends on it: an older binary
// keeps it up to date as SQLite keeps every index, and openGen adds it to
// a generation made without it.
const (
	listIndex    = "bottles_active"
	listIndexSQL = "CREATE INDEX IF NOT EXISTS " + listIndex + " ON bottles (last_active, started)"
)

// textTable is the full-text index of the blocks' bodies, with the words
// of each bottle's project in scope.
const textTable = `CREATE VIRTUAL TABLE text USING fts5 (body, scope, content='', contentless_delete=1, tokenize='` + tokenizerName + `')`

// Roles of a bottle among its session's bottles: search and lists show the
// current bottle, and archived ones only when asked, and then only the
// newest archive of a session that has no current bottle (a resumed
// session's bottle holds everything its archives do).
const (
	roleCurrent    = 0
	roleArchived   = 1
	roleSuperseded = 2
)

// build makes a new generation after failed current, empty, and fills it
// from the bottles for ix.buildFor (or to the end). Only one process builds
// at a time; one that finds another building waits for it (as long as ctx
// allows; with a bounded build, only until there is a generation to answer
// from) and, unless force, uses its work, continuing it if it is left
// unfinished. Called with mu held.
func (ix *Index) build(ctx context.Context, failed int, force bool) error {
	until := ix.deadline()
	ix.closeConn()
	if err := safefile.MkdirPrivate(ix.dir); err != nil {
		return err
	}
	var ready func() bool
	if !force {
		ready = ix.notWaiting()
	}
	unlock, locked, err := lockBuild(ctx, filepath.Join(ix.dir, lockFile), ix.waiting, ready)
	if err != nil {
		return err
	}
	defer func() { unlock() }() // the lock taken last
	// Someone may have built it (or begun to) while we waited.
	if id, gen, err := ix.readCurrent(); err == nil && gen != failed && !force {
		if err := ix.openGen(gen); err == nil {
			ix.current = id
			if !locked {
				return nil // it is building; answer from what it did
			}
			return ix.fill(ctx, until, true)
		}
	}
	if !locked {
		// What ended the wait is gone again: wait for the builder.
		unlock()
		if unlock, _, err = lockBuild(ctx, filepath.Join(ix.dir, lockFile), nil, nil); err != nil {
			return err
		}
	}
	// Stopped already: the generation in use stays as it is.
	if err := ctx.Err(); err != nil {
		return err
	}
	if ix.notify != nil {
		ix.notify()
	}
	gen := max(failed, ix.newestGen()) + 1
	if err := ix.createGen(gen); err != nil {
		return err
	}
	return ix.fill(ctx, until, true)
}

// writeCurrent points "current" at gen, atomically and durably.
func writeCurrent(dir string, gen int) error {
	if err := safefile.Write(filepath.Join(dir, currentFile), []byte(strconv.Itoa(gen)+"\n")); err != nil {
		return fmt.Errorf("switch index: %w", err)
	}
	return nil
}

// newestGen is the highest generation number with a file in the index
// directory.
func (ix *Index) newestGen() int {
	entries, _ := os.ReadDir(ix.dir)
	n := 0
	for _, e := range entries {
		if g, ok := genOf(e.Name()); ok && g > n {
			n = g
		}
	}
	return n
}

// genOf reads the generation of a database file name ("7.db", "7.db-wal").
func genOf(name string) (int, bool) {
	stem, _, ok := strings.Cut(name, ".db")
	if !ok {
		return 0, false
	}
	g, err := strconv.Atoi(stem)
	return g, err == nil
}

// removeOldGens deletes the files of every generation but keep. Processes
// still using one keep their open files until they notice the switch.
func (ix *Index) removeOldGens(keep int) {
	entries, _ := os.ReadDir(ix.dir)
	for _, e := range entries {
		if g, ok := genOf(e.Name()); ok && g != keep {
			os.Remove(filepath.Join(ix.dir, e.Name()))
		}
	}
}

func removeGen(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}

// lockBuild takes the build lock, waiting while ctx allows; waiting (if
// not nil) is called once if it has to wait. If ready is not nil, the
// wait also ends when ready reports true: then it returns without the
// lock (locked false).
func lockBuild(ctx context.Context, path string, waiting func(), ready func() bool) (unlock func(), locked bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("lock index: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, true, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, false, fmt.Errorf("lock index: %w", err)
		}
		if ready != nil && ready() {
			f.Close()
			return func() {}, false, nil
		}
		if waiting != nil && errors.Is(err, syscall.EWOULDBLOCK) {
			waiting()
			waiting = nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, fmt.Errorf("%w (%v)", ErrBuilding, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// tryLock takes the build lock if no other process holds it, and reports
// whether it did.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("lock index: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return func() { f.Close() }, true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, false, nil
	}
	f.Close()
	return nil, false, fmt.Errorf("lock index: %w", err)
}

// lockPoll is how often a process waiting for another's build retries.
const lockPoll = 50 * time.Millisecond

// do runs fn on the current generation, building the index first if it
// is unusable (missing, of another format or corrupt). A database that fn
// finds corrupt is built again too (never trusted) and fn run once more on
// the new one.
func (ix *Index) do(ctx context.Context, fn func() error) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	failed, done, err := ix.onCurrent(fn)
	if done {
		return err
	}
	if err := ix.build(ctx, failed, false); err != nil {
		return err
	}
	return fn()
}

// onCurrent runs fn on the current generation, with mu held. It is done
// with fn's error, or with ensure's when the index could not be opened for
// a reason a build does not cure (closed, a disk fault); otherwise err
// says why generation failed is unusable (missing, of another format, or
// corrupt as opened or as fn found it), and the index is to be built.
func (ix *Index) onCurrent(fn func() error) (failed int, done bool, err error) {
	failed, err = ix.ensure()
	if err == nil {
		if err = fn(); !corrupt(err) {
			return 0, true, err
		}
		return ix.gen, false, err
	}
	return failed, !unusable(err), err
}

// doExisting is do for an operation that must not wait for a build (the
// daemon's updates as it renders): an index that would have to be built
// is reported as ErrUnusable instead.
func (ix *Index) doExisting(fn func() error) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	_, done, err := ix.onCurrent(fn)
	if done {
		return err
	}
	if errors.Is(err, ErrUnusable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnusable, err)
}
