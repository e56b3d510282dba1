package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// Building. A first build takes about a minute per gigabyte of bottles, so
// it must not keep searches waiting: a new generation (the first one, one
// of a new format, or one replacing a damaged one) is made current at
// once, empty and marked unfinished (a row in the table build), and the
// bottles are taken in newest first, buildChunk bytes per transaction,
// each commit moving the build's frontier (the oldest bottle taken in so
// far) with it. A reader, in this process or another, answers from what
// is committed and says how far the build is (BuildState). A build that
// stops (its time is up, its context ends, its process dies) leaves a
// generation that says it is unfinished, never one a reader takes for
// complete, and the next process to build continues it: Open, or Build.
// Only the process holding the build lock builds.
//
// Behind the frontier the index is kept current like a finished one (the
// daemon's updates, the syncs before queries); the bottles ahead of it
// are the build's.
//
// Search takes the newest matches by row number (see candidateCap), so
// rows must be numbered in the order the bottles were written, while the
// build takes the newest first: each chunk's rows are numbered below the
// chunk before (counting down from buildTop), and within the chunk
// upwards, oldest bottle first, which is also the order FTS5 wants (a row
// number below the last it wrote makes it flush its buffer as a segment).
// Rows written after the build began are numbered above buildTop.

// Tunables of a build.
const (
	// buildChunk is how many bytes of bottles a build takes in per
	// transaction: about a second of work at the 20 MB/s a build runs at
	// (on the 2-core machine of README's figures), so that searches see
	// the build move, and the daemon's updates and other processes'
	// syncs, which wait for the transaction, are held up far less than
	// busyTimeout; big enough that commits cost little (each leaves FTS5
	// a segment, merged at the end), as FTS5 writes one per pendingMax of
	// terms anyway.
	buildChunk = 16 << 20
	// buildTop is where a build's row numbers count down from: above the
	// number of blocks of any bottles directory.
	buildTop = 1 << 32
)

// aboveNames sorts after the name of any bottle (they are ASCII).
const aboveNames = "\x7f"

// fileKey orders bottles as a build takes them in: by modification time,
// then by name.
type fileKey struct {
	mtime int64
	name  string
}

func keyOf(name string, st fileState) fileKey { return fileKey{st.mtime, name} }

func (a fileKey) compare(b fileKey) int {
	switch {
	case a.mtime < b.mtime:
		return -1
	case a.mtime > b.mtime:
		return 1
	case a.name < b.name:
		return -1
	case a.name > b.name:
		return 1
	}
	return 0
}

// buildRow is the table build's one row: how far an unfinished build got.
type buildRow struct {
	frontier fileKey // the oldest bottle the build took in
	next     int64   // the build's rows are numbered below this
	// pending and pendingBytes count the bottles ahead of the frontier
	// that the index lacks, as the build last counted them; doneBytes the
	// bytes it took in.
	pending                 int
	pendingBytes, doneBytes int64
}

// ahead reports whether the bottle at name, in state st, is ahead of the
// build's frontier: the build's to take in.
func (b *buildRow) ahead(name string, st fileState) bool {
	return keyOf(name, st).compare(b.frontier) < 0
}

const buildSQL = `SELECT frontier_mtime, frontier_path, next_id, pending, pending_bytes, done_bytes FROM build`

// unfinished returns the build row of the generation in use, nil if its
// build is finished. Called with mu held.
func (ix *Index) unfinished() (*buildRow, error) {
	var b *buildRow
	err := ix.query(buildSQL, func(s *sqlite3.Stmt) error {
		b = &buildRow{frontier: fileKey{s.ColumnInt64(0), s.ColumnText(1)}, next: s.ColumnInt64(2),
			pending: s.ColumnInt(3), pendingBytes: s.ColumnInt64(4), doneBytes: s.ColumnInt64(5)}
		return nil
	})
	return b, err
}

// createGen creates generation gen, empty and unfinished, and makes it
// current. Called with the build lock held.
func (ix *Index) createGen(gen int) error {
	path := ix.genPath(gen)
	removeGen(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	f.Close()
	// A purge asked for is answered by the switch: the new generation
	// holds only what the bottles hold now, and the old ones go.
	req, asked := ix.store.TakePurge()
	disk, err := ix.listBottles()
	if err != nil {
		removeGen(path)
		return fmt.Errorf("create index: %w", err)
	}
	// Every bottle there is now is ahead of the frontier, the build's;
	// those written from now on are behind it (newer), indexed as ever.
	var size, newest int64
	for _, st := range disk {
		size += st.size
		newest = max(newest, st.mtime)
	}
	c, err := openConn(path)
	if err != nil {
		removeGen(path)
		return err
	}
	// A bulk load: FTS5 buffers 16 MiB of terms before it writes a
	// segment, and merges none until the end (finishBuild).
	err = c.Exec(schema + fmt.Sprintf(`INSERT INTO build VALUES (1, %d, '%s', %d, %d, %d, 0);
		INSERT INTO text (text, rank) VALUES ('hashsize', %d);
		INSERT INTO text (text, rank) VALUES ('automerge', 0);`, newest, aboveNames, buildTop, len(disk), size, pendingMax))
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	// Opened again now that the file is not empty: SQLite deletes the WAL
	// file of an empty database, and would create it anew with the
	// driver's permissions.
	if err == nil {
		err = ix.openGen(gen)
	}
	if err == nil {
		err = writeCurrent(ix.dir, gen)
	}
	if err != nil {
		ix.closeConn()
		removeGen(path)
		return fmt.Errorf("create index: %w", err)
	}
	id, _, err := ix.readCurrent()
	if err != nil {
		return err
	}
	ix.current = id
	ix.removeOldGens(gen)
	if !asked {
		return nil
	}
	if err := safefile.SyncDir(ix.dir); err != nil {
		return err
	}
	return req.Done()
}

// fill takes bottles into an unfinished generation, step by step (see
// fillStep), until the build is finished, ctx ends or the clock passes
// until (zero: never). Called with the build lock held, and with mu held
// if locked, else it takes mu for each step, so that the index answers
// between them.
func (ix *Index) fill(ctx context.Context, until time.Time, locked bool) error {
	purge := purgeHeldLock
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !locked {
			ix.mu.Lock()
		}
		finished, err := ix.fillStep(ctx, purge)
		if !locked {
			ix.mu.Unlock()
		}
		if errors.Is(err, ErrPurge) {
			// The request stays: for the end of the build, or the next
			// sync after it, not for every step.
			purge, err = purgeNone, nil
		}
		if err != nil || finished {
			return err
		}
		if !until.IsZero() && !ix.now().Before(until) {
			return nil
		}
	}
}

// fillStep takes one step of an unfinished build: the bottles that changed
// behind its frontier, and a purge if one is asked (as purge says: purgeNone
// after a step whose purge failed), as a sync does; then the newest bottles
// ahead of the frontier, up to ix.chunk bytes, in one transaction that
// moves it; once none is ahead, it finishes the build. It reports whether
// the build is finished. Called with mu and the build lock held.
func (ix *Index) fillStep(ctx context.Context, purge purgeMode) (bool, error) {
	if _, err := ix.ensure(); err != nil {
		return false, err
	}
	b, err := ix.unfinished()
	if err != nil || b == nil {
		return b == nil, err
	}
	// One listing a step: the bottles ahead of the frontier, which
	// reconcile leaves to the build, are taken below from the listing the
	// rest was taken in from. No progress for the rest: a build reports
	// the bytes it took in of all it takes in (below), and a sync's
	// figures would make it jump back.
	disk, rows, err := ix.takeInAndPurge(ctx, purge, nil)
	if err != nil {
		return false, err
	}
	changed, _ := compare(disk, rows)
	ahead := slices.DeleteFunc(changed, func(name string) bool { return !b.ahead(name, disk[name]) })
	if len(ahead) == 0 {
		return true, ix.finishBuild(ctx)
	}
	slices.SortFunc(ahead, func(x, y string) int { return keyOf(y, disk[y]).compare(keyOf(x, disk[x])) })
	var aheadBytes int64
	for _, name := range ahead {
		aheadBytes += disk[name].size
	}
	// The newest bottles, up to the chunk's bytes (at least one).
	var chunk []parsedBottle
	var size int64
	blocks := 0
	for _, name := range ahead {
		if len(chunk) > 0 && size+disk[name].size > ix.chunk {
			break
		}
		data, st, err := ix.readBottle(name, nil)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone meanwhile
		}
		if err != nil {
			return false, err
		}
		p, _ := render.Parse(data, ix.loc) // nil: not a bottle, nothing to index
		if p != nil {
			blocks += len(p.Blocks)
		}
		chunk = append(chunk, parsedBottle{name, data, st, p})
		size += int64(len(data))
	}
	if len(chunk) == 0 {
		return false, nil // all gone meanwhile: the next step looks again
	}
	err = ix.tx(ctx, func() error {
		ix.nextDoc = b.next - int64(blocks)
		defer func() { ix.nextDoc = 0 }()
		done := b.doneBytes
		for i := len(chunk) - 1; i >= 0; i-- { // oldest first
			if err := ctx.Err(); err != nil {
				return err
			}
			c := chunk[i]
			r, err := ix.rowAt(c.name)
			if err != nil {
				return err
			}
			if _, err := ix.putParsed(c, r, nil, 0); err != nil {
				return err
			}
			if done += int64(len(c.data)); ix.progress != nil {
				ix.progress(done, b.doneBytes+aheadBytes)
			}
		}
		oldest := chunk[len(chunk)-1]
		return ix.exec(`UPDATE build SET frontier_mtime = ?, frontier_path = ?, next_id = ?, pending = ?, pending_bytes = ?, done_bytes = ?`,
			oldest.st.mtime, oldest.name, b.next-int64(blocks), len(ahead)-len(chunk), aheadBytes-size, b.doneBytes+size)
	})
	return false, err
}

// finishBuild merges the build's segments into one, so that queries read
// one b-tree per word, puts FTS5's settings for small updates back and
// marks the build finished, all in one transaction; then takes in what
// changed since the last step listed the bottles and purges the index if a
// purge is asked (left by a step whose purge failed, or by a writer since
// that listing), and empties the WAL the merge filled. Called with mu and
// the build lock held.
func (ix *Index) finishBuild(ctx context.Context) error {
	// ctx bounds the wait for the write lock (tx): a build stopped there
	// stays unfinished, and the next process to build merges. Once begun,
	// the merge runs to its end, as every transaction of tx does. An
	// optimize interrupted halfway would be safe (SQLite rolls the whole
	// transaction back by itself, the build's row with it: the ROLLBACK
	// after finds none), but the seconds it merged would be lost, to be
	// merged again by the next.
	err := ix.tx(ctx, func() error {
		return ix.conn.Exec(`INSERT INTO text (text) VALUES ('optimize');
			INSERT INTO text (text, rank) VALUES ('automerge', 4);
			INSERT INTO text (text, rank) VALUES ('hashsize', 1048576);
			DELETE FROM build`)
	})
	if err != nil {
		return fmt.Errorf("finish index: %w", err)
	}
	// Always a full take-in, with the lock this build holds, whatever the
	// steps' purge was: the bottle a request was left for may have come
	// after the last step listed the bottles, and this is the build's
	// last chance to answer a request a step's failed purge left. No
	// progress: as fillStep's.
	if _, _, err := ix.takeInAndPurge(ctx, purgeHeldLock, nil); err != nil {
		return err // a purge's failure leaves the request for the next sync
	}
	// Another process reading the index may hold the WAL for a moment:
	// then it stays until a later checkpoint. (Empty already if a purge
	// ran: it costs nothing then.)
	ix.conn.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return nil
}

// Build finishes an unfinished build of the index: it waits while another
// process builds it (as ctx allows, calling Options.Waiting once), then
// takes in what that one left, answering queries between its steps. It
// returns at once if the index is complete.
func (ix *Index) Build(ctx context.Context) error {
	ix.mu.Lock()
	_, err := ix.ensure()
	var b *buildRow
	if err == nil {
		b, err = ix.unfinished()
	}
	ix.mu.Unlock()
	if err != nil || b == nil {
		return err
	}
	unlock, _, err := lockBuild(ctx, filepath.Join(ix.dir, lockFile), ix.waiting, nil)
	if err != nil {
		return err
	}
	defer unlock()
	return ix.fill(ctx, time.Time{}, false)
}

// BuildState is how far the build of an unfinished index got.
type BuildState struct {
	// Indexed counts the bottles indexed so far (sessions', archived ones
	// too), Total those on disk (as the build last counted them).
	Indexed, Total int
	// IndexedBytes and TotalBytes are the bytes of the bottles the build
	// took in so far and of all it takes in.
	IndexedBytes, TotalBytes int64
	// Active reports whether a process is building it now; if not, the
	// next Open or Build continues it.
	Active bool
}

// Percent is how much of the bottles is indexed, rounded down.
func (b BuildState) Percent() int {
	if b.Total <= 0 {
		return 100
	}
	return b.Indexed * 100 / b.Total
}

// buildState returns how far the unfinished build of the generation in
// use got, nil if it is finished. Called with mu held.
func (ix *Index) buildState() (*BuildState, error) {
	b, err := ix.unfinished()
	if err != nil || b == nil {
		return nil, err
	}
	st := &BuildState{IndexedBytes: b.doneBytes, TotalBytes: b.doneBytes + b.pendingBytes, Active: ix.buildActive()}
	err = ix.query(`SELECT count(*) FROM bottles`, func(s *sqlite3.Stmt) error {
		st.Indexed = s.ColumnInt(0)
		return nil
	})
	st.Total = st.Indexed + b.pending
	return st, err
}

// buildActive reports whether some process (this one too) holds the build
// lock.
func (ix *Index) buildActive() bool {
	unlock, ok, err := tryLock(filepath.Join(ix.dir, lockFile))
	if err != nil {
		return false
	}
	if ok {
		unlock()
	}
	return !ok
}

// Building reports how far an unfinished build of the index got, nil if
// the index is complete.
func (ix *Index) Building(ctx context.Context) (*BuildState, error) {
	var st *BuildState
	err := ix.do(ctx, func() (err error) {
		st, err = ix.buildState()
		return err
	})
	return st, err
}

// docID is the row number of a new block: the next of the build's chunk,
// or 0 for SQLite's next.
func (ix *Index) docID() int64 {
	if ix.nextDoc == 0 {
		return 0
	}
	id := ix.nextDoc
	ix.nextDoc++
	return id
}
