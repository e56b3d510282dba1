package bottles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// tempPrefix starts the names of bottles being written; a crash can leave
// such files behind, and CleanTemp removes them.
const tempPrefix = safefile.TempPrefix

// Outcome says what Write did.
type Outcome int

const (
	// Written: the bottle replaced the one on disk (or there was none).
	Written Outcome = iota
	// Covered: the bottle on disk was rendered from source state at least
	// as new; it was left alone.
	Covered
	// KeptFull: the bottle on disk is a full one and this one was
	// reconstructed because the transcript went away; a bottle never loses
	// the assistant's words that way.
	KeptFull
	// Archived: the session's bottle was archived (its session was cleared)
	// and the sources have nothing new since; it is not brought back.
	Archived
	// Crossed: the bottle on disk and this one each read some source
	// further than the other (renders raced: one read the transcript later,
	// the other the database), so neither may replace the other. Nothing was
	// written; a render from the sources as they are now covers both.
	Crossed
)

func (o Outcome) String() string {
	return [...]string{"written", "unchanged", "kept-full", "archived", "crossed"}[o]
}

// A Result is what a write did: its outcome, and whether it asked for
// the search index to be purged.
type Result struct {
	Outcome Outcome
	// AskedPurge: the bottle written replaced one whose words it may not
	// show (see drops), and the write left the search index's
	// purge marker before its rename (see purge.go). Only a Written
	// bottle asks; whoever keeps an index open purges it soon (the
	// daemon's index keeper), or else the next sync of the index does.
	AskedPurge bool
}

// Write stores b as the bottle of its session in dir, atomically: the bytes
// go to a temporary file in dir, are synced, and are renamed over the
// bottle, and the directory is synced (a Batch defers the syncs, and
// exchanges the bottle into place; see durable.go). Files are 0600 and dir 0700; bottles hold whole
// conversations.
//
// A bottle never moves backwards: b replaces the bottle on disk only if it
// was rendered from sources at least as new in every respect (see judge);
// otherwise the bottle on disk is kept and the outcome says why (Covered,
// KeptFull, Crossed). The check and the rename happen under an exclusive
// lock on dir, so concurrent writers (the daemon, a hook, the CLI) are
// safe. A bottle that replaces one whose words it may not show (drops, or
// rewritten: its reader found a transcript no longer holding bytes the
// bottle on disk was made from) leaves the search index's purge marker
// first, under the same lock (see purge.go), and the result says so; when
// the marker cannot be left, the bottle is not written.
func writeDurable(dir string, b *render.Bottle, rewritten bool) (Result, error) {
	return write(dir, b, rewritten, true, func() (time.Time, bool) { return crashed(dir) })
}

// write is Write; with durable false it syncs nothing, for a Batch, which
// also says whether a crash may have damaged bottles.
func write(dir string, b *render.Bottle, rewritten, durable bool, crash func() (time.Time, bool)) (Result, error) {
	if err := safefile.MkdirPrivate(dir); err != nil {
		return Result{}, err
	}
	tmp, err := writeTemp(dir, b.State.Session, b.Bytes, durable)
	if err != nil {
		return Result{}, err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
	}()

	unlock, err := lockDir(dir)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	dst := BottlePath(dir, b.State.Session)
	cur, err := ReadState(dst)
	purge := false
	switch {
	case err == nil:
		purge = rewritten || drops(cur, &b.State)
		if damaged(dst, crash) {
			break // whatever its state line says
		}
		if v := judge(cur, &b.State, dbNow(dir)); v != Written {
			return Result{Outcome: v}, nil
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, arch := newestArchived(dir, b.State.Session); arch != nil && stillCurrent(arch, &b.State) {
			return Result{Outcome: Archived}, nil
		}
	case !errors.Is(err, render.ErrNoState):
		return Result{}, fmt.Errorf("read bottle %s: %w", dst, err)
	}
	if purge {
		// Before the rename: a process killed right after it leaves the
		// request with the bottle (see purge.go).
		if err := leavePurge(dir); err != nil {
			return Result{}, fmt.Errorf("write bottle %s: %w", dst, err)
		}
	}
	// Unsynced (a Batch's), it is exchanged with the bottle before where
	// the system can (safefile.Replace): a live session's bottle, replaced
	// every few seconds and synced only once its batch is quiet, then
	// reaches the disk once, not at every render. Synced, it is renamed.
	put := os.Rename
	if !durable {
		put = safefile.Replace
	}
	if err := put(tmp, dst); err != nil {
		return Result{}, fmt.Errorf("write bottle %s: %w", dst, err)
	}
	renamed = true
	done := Result{Outcome: Written, AskedPurge: purge}
	if !durable {
		return done, nil
	}
	return done, safefile.SyncDir(dir)
}

// judge decides whether a bottle of state next may replace the bottle on
// disk, of state cur: Written if it may, else the reason it may not.
//
// Every source must move forward: the transcripts as far read, the
// database at or past the same rows. A full bottle is never replaced by a
// reconstructed one (the transcript went away; the assistant's words would
// be lost). When each bottle read one source further than the other, the
// verdict is Crossed and the caller renders again.
//
// A bottle made by other redaction rules (State.Redact) is replaced by
// one that covers its sources (it may hold what the rules in use redact);
// when next does not cover it, the verdict is Crossed, and a render from
// the sources as they are now covers it.
//
// What cur claims is only believed while the files still hold what it
// read: a transcript rewritten since (truncated, replaced, changed near
// its offset, or changed anywhere when next read it to the same offset
// and found other bytes) makes cur stale whatever its offsets say, and it
// is replaced.
func judge(cur, next *render.State, db currentDB) Outcome {
	if cur.Format != next.Format || cur.Session != next.Session {
		return Written
	}
	switch {
	case cur.Mode == render.ModeFull && next.Mode == render.ModeReconstructed:
		return KeptFull
	case cur.Mode != next.Mode:
		return Written
	}
	if cur.Redact != next.Redact {
		if next.CoversNow(cur, sources.FileState.Gone, db) {
			return Written
		}
		return Crossed
	}
	v := Crossed
	switch {
	case cur.CoversNow(next, nil, db):
		v = Covered
	case next.CoversNow(cur, sources.FileState.Gone, db):
		return Written
	}
	for _, f := range cur.Transcripts {
		// Rewritten since cur was rendered? When both read the file to
		// the same offset but saw different bytes (it was changed in
		// place in between), every byte is checked: the bottle that
		// matches the file now wins. Verify includes Holds.
		check := f.Holds
		if n, ok := readAgain(f, next); ok && differs(f, n) {
			check = f.Verify
		}
		if ok, err := check(); err == nil && !ok {
			return Written
		}
	}
	return v
}

// drops reports whether a bottle of state next, replacing one of state
// cur, may not show words cur's showed, which the search index must then
// forget (see purge.go): it was made by other redaction rules, or a
// transcript cur was made from is gone from next (deleted, or replaced by
// another file) or was read by next to a smaller offset, or to the same
// offset and found other bytes (differs). A rewrite that only its reader
// could tell (bytes changed before an offset next read past) is the
// writer's to say (Store.Put). It reads no file, so a write that only
// adds to a bottle pays nothing for it.
func drops(cur, next *render.State) bool {
	if cur.Redact != next.Redact {
		return true
	}
	for _, c := range cur.Transcripts {
		n, ok := readAgain(c, next)
		if !ok || n.Offset < c.Offset || differs(c, n) {
			return true
		}
	}
	return false
}

// readAgain returns next's state of the file f describes, and false if
// next read no such file.
func readAgain(f sources.FileState, next *render.State) (sources.FileState, bool) {
	i := slices.IndexFunc(next.Transcripts, func(n sources.FileState) bool { return n.Session == f.Session && n.ID == f.ID })
	if i < 0 {
		return sources.FileState{}, false
	}
	return next.Transcripts[i], true
}

// differs reports whether n, a later read of the file f describes, read
// it to the same offset and found other bytes.
func differs(f, n sources.FileState) bool { return n.Offset == f.Offset && n.Sum != f.Sum }

// currentDB returns the identity of claude-mem's database file as it is
// now, and false if there is none.
type currentDB func() (sources.FileID, bool)

// dbNow is the currentDB of the data directory that holds the bottles
// directory dir; it stats the file at most once.
func dbNow(dir string) currentDB {
	var (
		id   sources.FileID
		ok   bool
		done bool
	)
	return func() (sources.FileID, bool) {
		if !done {
			done = true
			if info, err := os.Stat(sources.ClaudeMemFile(filepath.Dir(dir))); err == nil {
				id, ok = sources.FileIDOf(info), true
			}
		}
		return id, ok
	}
}

// stillCurrent reports whether an archived bottle still shows everything
// the sources behind next hold: the session was cleared and has gained no
// content since (bytes appended without content, such as hook records, do
// not bring it back; a resumed conversation does).
func stillCurrent(arch, next *render.State) bool {
	transcript := ""
	for _, f := range next.Transcripts {
		if f.Session == next.Session {
			transcript = f.Path
		}
	}
	fresh, _, err := CheckState(arch, transcript, func() (*sources.ClaudeMemCursor, error) { return next.ClaudeMem, nil }, VerifyTail)
	return err == nil && fresh == Fresh
}

// writeTemp writes data to a new temporary bottle in dir (0600), synced
// if durable.
func writeTemp(dir, session string, data []byte, durable bool) (string, error) {
	name, _, err := safefile.WriteTemp(dir, tempPrefix+session+"-*.md", data, durable)
	if err != nil {
		return "", fmt.Errorf("write bottle: %w", err)
	}
	return name, nil
}

// lockDir takes an exclusive flock on the directory itself, so no lock
// file is needed. The lock is held for a stat and a rename.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock bottles dir: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock bottles dir: %w", err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

// staleTemp is how old a temporary file must be before CleanTemp takes it
// for the leftover of a crash rather than a write in progress.
const staleTemp = time.Minute

// CleanTemp removes the temporary files that writers killed mid-write
// left in the bottles directory. It returns how many it removed, and how
// many it left because they are too young to tell from a write in
// progress. A bottles directory that is a symbolic link is left alone:
// bottled wrote nothing through it (see safefile.MkdirPrivate).
func (s *Store) CleanTemp() (removed, young int, err error) {
	dir, now := s.Dir, s.Now()
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return 0, 0, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("clean bottles dir: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if now.Sub(info.ModTime()) < staleTemp {
			young++
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed, young, nil
}
