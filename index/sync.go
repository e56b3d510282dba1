package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/safefile"
)

// Sync brings the index in line with the bottles on disk: bottles written,
// archived or deleted by any process (the hooks, the CLI, a user) since the
// index last saw them. It reads only the bottles whose files changed. If a
// writer asked for a purge (the marker bottles.Store.Write leaves before it
// replaces a bottle whose words the new one may not show), it purges the
// index then.
func (ix *Index) Sync(ctx context.Context) error {
	return ix.do(ctx, func() error { return ix.syncAll(ctx) })
}

// SyncNames is Sync for the named bottles only (relative to the bottles
// directory); a purge asked for makes it a full Sync.
func (ix *Index) SyncNames(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if _, err := os.Lstat(ix.store.PurgeMarker()); err == nil {
		return ix.Sync(ctx)
	}
	return ix.do(ctx, func() error {
		disk := map[string]fileState{}
		for _, name := range names {
			if info, err := os.Lstat(filepath.Join(ix.store.Dir, filepath.FromSlash(name))); err == nil && info.Mode().IsRegular() {
				disk[name] = stateOf(info)
			}
		}
		rows, err := ix.rows(names)
		if err != nil {
			return err
		}
		return ix.reconcile(ctx, disk, rows, ix.progress)
	})
}

// syncAll reconciles the whole bottles directory (of an unfinished
// build, what the build passed: see reconcile), and purges the index if a
// writer asked and no process holds the build lock (takeInAndPurge).
func (ix *Index) syncAll(ctx context.Context) error {
	_, _, err := ix.takeInAndPurge(ctx, purgeTryLock, ix.progress)
	return err
}

// purgeMode says whether takeInAndPurge answers a purge asked for, and how
// it holds the build lock a purge needs.
type purgeMode int

const (
	// purgeTryLock: the caller does not hold the build lock (a sync). The
	// purge takes it if no process holds it. A process holding it may not
	// answer this request (a purge that took an earlier one leaves a later
	// marker; this process's own build, between its steps, has its own
	// hold of the lock), so the purge is then ErrPurgeBusy, and the
	// request waits for a sync that can take the lock.
	purgeTryLock purgeMode = iota
	// purgeHeldLock: the caller holds the build lock (a build's step, its
	// end).
	purgeHeldLock
	// purgeNone: the bottles are taken in and a request is left as it is
	// (the steps of a build after one whose purge failed: the request is
	// for the build's end or the next sync, not for every step).
	purgeNone
)

// takeInAndPurge takes every bottle in (reconcile, which calls progress)
// and, unless mode is purgeNone, answers a purge a writer asked for, in the
// one order that keeps no secret in the index's files:
//
//  1. The request is taken (bottles.Store.TakePurge) before the bottles
//     are listed: the writer that asked left its marker and renamed its
//     bottle in one hold of the bottles directory's lock, under which
//     TakePurge reads the marker, so the listing sees that bottle.
//  2. Every bottle is taken in, that one too: its new blocks replace the
//     old ones, whose rows FTS5 only marks deleted.
//  3. The index is purged (purgeLocked) under the build lock, which drops
//     what the old blocks said from the files.
//  4. The request is removed (bottles.PurgeRequest.Done) once the purge is
//     durable, and only if it is still the request taken: a process
//     killed meanwhile leaves it for the next, and a request made
//     meanwhile is the next one's.
//
// A purge that fails (ErrPurge) leaves the request, and the bottles taken
// in. It returns the listing it took in from, the bottles on disk and the
// rows as they were before (a build's step goes on with them). Called with
// mu held, and with the build lock held as mode says. (A new generation
// answers a request as it is made: createGen.)
func (ix *Index) takeInAndPurge(ctx context.Context, mode purgeMode, progress func(done, total int64)) (disk, rows map[string]fileState, err error) {
	var req bottles.PurgeRequest
	asked := false
	if mode != purgeNone {
		req, asked = ix.store.TakePurge()
	}
	if disk, rows, err = ix.diskAndRows(); err != nil {
		return nil, nil, err
	}
	if err := ix.reconcile(ctx, disk, rows, progress); err != nil {
		return nil, nil, err
	}
	if asked {
		if err := ix.purgeAsked(req, mode == purgeHeldLock); err != nil {
			return nil, nil, err
		}
	}
	return disk, rows, nil
}

// purgeAsked purges the index (purgeLocked) and then removes the request
// for it, with mu held, and with the build lock held if locked, else
// taking it if no process holds it (ErrPurgeBusy if one does).
func (ix *Index) purgeAsked(req bottles.PurgeRequest, locked bool) error {
	if !locked {
		unlock, ok, err := tryLock(filepath.Join(ix.dir, lockFile))
		if err != nil {
			return err
		}
		if !ok {
			return ErrPurgeBusy
		}
		defer unlock()
	}
	if err := ix.purgeLocked(); err != nil {
		return fmt.Errorf("%w: %w", ErrPurge, err)
	}
	if err := req.Done(); err != nil {
		return fmt.Errorf("%w: %w", ErrPurge, err)
	}
	return nil
}

// ErrPurge reports a purge that failed (a full disk, a reader that kept
// the WAL): the index is up to date and searches are right, but the words
// of deleted blocks may still be in its files. The request stays, and the
// next full sync purges again.
var ErrPurge = errors.New("purge the search index")

// ErrPurgeBusy is the ErrPurge of a purge that could not start: another
// process holds the build lock (a purge that took an earlier request, a
// build). It is no fault; the caller tries again later.
var ErrPurgeBusy = fmt.Errorf("%w: another process holds the index's build lock", ErrPurge)

// diskAndRows returns every bottle file on disk and every row, by name.
func (ix *Index) diskAndRows() (disk, rows map[string]fileState, err error) {
	if disk, err = ix.listBottles(); err != nil {
		return nil, nil, err
	}
	rows, err = ix.rows(nil)
	return disk, rows, err
}

// reconcile indexes the files of disk that rows do not know as they are,
// and forgets the rows whose files are gone, calling progress (if not
// nil) after each bottle. While a build is unfinished, the bottles it has
// not reached yet (older than its frontier) are left to it.
func (ix *Index) reconcile(ctx context.Context, disk, rows map[string]fileState, progress func(done, total int64)) error {
	changed, gone := compare(disk, rows)
	if b, err := ix.unfinished(); err != nil {
		return err
	} else if b != nil {
		changed = slices.DeleteFunc(changed, func(name string) bool { return b.ahead(name, disk[name]) })
	}
	if len(changed) == 0 && len(gone) == 0 {
		return nil
	}
	// Oldest first, so that newer bottles get higher row numbers.
	slices.SortFunc(changed, func(a, b string) int { return keyOf(a, disk[a]).compare(keyOf(b, disk[b])) })
	var total, done int64
	for _, name := range changed {
		total += disk[name].size
	}
	batch := 0
	if err := ix.begin(ctx); err != nil {
		return err
	}
	rollback := func(err error) error {
		ix.conn.Exec("ROLLBACK")
		return err
	}
	// updates are the parses of the bottles indexed since the last commit,
	// kept once it is done, as Put keeps its own: the next Put of one of
	// them reads it from its parse (putLocked took the entry out).
	var updates []*docUpdate
	kept := func() {
		for _, u := range updates {
			ix.known.put(u.bottle, u.indexed)
		}
		updates = updates[:0]
	}
	for _, name := range changed {
		if err := ctx.Err(); err != nil {
			return rollback(err)
		}
		data, st, err := ix.readBottle(name, nil)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone meanwhile: the next sync forgets it
		}
		if err != nil {
			return rollback(err)
		}
		u, err := ix.putLocked(name, data, st)
		if err != nil {
			return rollback(err)
		}
		if u != nil {
			updates = append(updates, u)
		}
		if done += int64(len(data)); progress != nil {
			progress(done, max(total, done))
		}
		if batch += len(data); batch >= syncBatch {
			if err := ix.conn.Exec("COMMIT"); err != nil {
				return rollback(err)
			}
			kept()
			if err := ix.begin(ctx); err != nil {
				return err
			}
			batch = 0
		}
	}
	// Forget what is gone after indexing what is new, so that an archived
	// bottle's row moves to its new name instead of being indexed again.
	for _, name := range gone {
		if err := ix.removeLocked(name); err != nil {
			return rollback(err)
		}
	}
	if err := ix.conn.Exec("COMMIT"); err != nil {
		return rollback(err)
	}
	kept()
	return nil
}

// compare compares the bottle files on disk with the index's rows (both
// by name): changed are the files the rows do not know as they are, gone
// the rows whose files are gone.
func compare(disk, rows map[string]fileState) (changed, gone []string) {
	for name, st := range disk {
		if r, ok := rows[name]; !ok || r != st {
			changed = append(changed, name)
		}
	}
	for name := range rows {
		if _, ok := disk[name]; !ok {
			gone = append(gone, name)
		}
	}
	return changed, gone
}

// listBottles returns the state of every bottle file on disk, by name
// relative to the bottles directory.
func (ix *Index) listBottles() (map[string]fileState, error) {
	out := map[string]fileState{}
	for _, sub := range []string{"", archivePrefix} {
		dir := filepath.Join(ix.store.Dir, filepath.FromSlash(sub))
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() || !isBottleName(name) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			out[sub+name] = stateOf(info)
		}
	}
	return out, nil
}

// isBottleName reports whether a file in the bottles directory is a
// bottle (not a temporary file of a write in progress).
func isBottleName(name string) bool {
	return strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, ".")
}

// rows returns the state of the indexed bottles, all of them or those
// named.
func (ix *Index) rows(names []string) (map[string]fileState, error) {
	out := map[string]fileState{}
	scan := func(s *sqlite3.Stmt) error {
		st := fileState{size: s.ColumnInt64(3), mtime: s.ColumnInt64(4)}
		st.id.Dev, st.id.Ino = uint64(s.ColumnInt64(1)), uint64(s.ColumnInt64(2))
		out[s.ColumnText(0)] = st
		return nil
	}
	const cols = `SELECT path, dev, ino, size, mtime FROM bottles`
	if names == nil {
		return out, ix.query(cols, scan)
	}
	for _, name := range names {
		if err := ix.query(cols+` WHERE path = ?`, scan, name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Stale returns the bottles whose files the index does not reflect as
// they are on disk (written, changed or deleted since it last saw them),
// without indexing them.
func (ix *Index) Stale(ctx context.Context) ([]string, error) {
	var out []string
	err := ix.do(ctx, func() error {
		disk, rows, err := ix.diskAndRows()
		if err != nil {
			return err
		}
		changed, gone := compare(disk, rows)
		out = append(changed, gone...)
		return nil
	})
	slices.Sort(out)
	return out, err
}

// purgeLocked makes sure that what deleted blocks said is gone from the
// index's files, not only from its results (after a redaction: a
// transcript rewritten to remove a secret), with mu and the build lock
// held. FTS5 only marks a deleted row; its words stay in the segments that
// hold them until those are merged, and SQLite leaves old bytes in free
// pages and in the unused space of pages. So every segment is merged into
// one (dropping what the marks hide), the database copied anew (VACUUM),
// and the WAL, which may hold older copies of pages, emptied: the whole
// index is rewritten twice, seconds for hundreds of megabytes. Then the
// files are synced, so that the purge is on disk before the request for it
// goes. A sync and a build run it when a writer asked (takeInAndPurge).
func (ix *Index) purgeLocked() error {
	if err := ix.conn.Exec(`INSERT INTO text (text) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	// Zeroing what is freed is not enough: a page keeps old copies of
	// rows that moved off it in its unused space (a rebuild fills without
	// zeroing), and only a new copy of the database holds nothing else.
	if err := ix.conn.Exec(`VACUUM`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	// Another process reading the index may hold the WAL for a moment; the
	// busy timeout waits for it. A checkpoint that still could not empty
	// the WAL says so in its first column, not as an error.
	busy := false
	if err := ix.query(`PRAGMA wal_checkpoint(TRUNCATE)`, func(s *sqlite3.Stmt) error {
		busy = s.ColumnInt(0) != 0
		return nil
	}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if busy {
		return errors.New("another process kept reading the index, so its WAL could not be emptied")
	}
	path := ix.genPath(ix.gen)
	for _, p := range []string{path, path + "-wal"} {
		if err := safefile.SyncFile(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
