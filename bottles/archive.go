package bottles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// The archive. A session cleared with /clear has its bottle moved to
// archive/<UTC time>-<session>.<n>.md, where n counts the session's
// archives (1 for its first /clear, 2 for the next, after it was resumed,
// and so on). Which archive of a session is the newest, the one the daemon
// compares the sources with to tell whether the session gained content
// since it was cleared, is the one with the highest n, never the one with
// the latest time: a clock that was wrong at one /clear (years ahead, say)
// must not make an older archive win over a later one. Archives named
// before the number was added (<UTC time>-<session>.md) count as 0 and are
// ordered among themselves by their time.

// ArchiveDir is where bottles of cleared sessions are moved.
func ArchiveDir(dir string) string { return filepath.Join(dir, "archive") }

// archiveStamp starts the name of an archived bottle: when it was archived,
// for people; the order is the number's.
const archiveStamp = "20060102T150405Z"

// archived is the name of an archived bottle, read back.
type archived struct {
	name, session string
	n             int // 0: a name from before the count
}

// parseArchived reads an archive file name; ok is false for a name that
// is not one.
func parseArchived(name string) (a archived, ok bool) {
	rest, ok := strings.CutSuffix(name, ".md")
	if !ok || len(rest) <= len(archiveStamp)+1 || rest[len(archiveStamp)] != '-' {
		return a, false
	}
	a.name, a.session = name, rest[len(archiveStamp)+1:]
	if i := strings.LastIndexByte(a.session, '.'); i >= 0 {
		n, err := strconv.Atoi(a.session[i+1:])
		if err != nil || n < 1 {
			return a, false
		}
		a.session, a.n = a.session[:i], n
	}
	return a, sources.ValidSessionID(a.session)
}

// newer reports whether archive a of a session came after b.
func (a archived) newer(b archived) bool {
	if a.n != b.n {
		return a.n > b.n
	}
	return a.name > b.name // by time, then session
}

// ArchivedSession returns the session an archive file name is of, and
// false if the name is not an archive's.
func ArchivedSession(name string) (string, bool) {
	a, ok := parseArchived(name)
	if !ok {
		return "", false
	}
	return a.session, true
}

// NewerArchive reports whether the archive file named a came after the one
// named b, of the same session (names without directories).
func NewerArchive(a, b string) bool {
	pa, _ := parseArchived(a)
	pb, _ := parseArchived(b)
	return pa.newer(pb)
}

// archiveName is the name the next archive of session gets at t: its number
// is one more than the highest of the session's archives in names.
func archiveName(names []string, session string, t time.Time) string {
	n := 0
	for _, name := range names {
		if a, ok := parseArchived(name); ok && a.session == session {
			n = max(n, a.n)
		}
	}
	return fmt.Sprintf("%s-%s.%d.md", t.UTC().Format(archiveStamp), session, n+1)
}

// PathOf is where the bottle of session Write dealt with is, by its
// outcome: the archived one when Archived, else the session's bottle.
func (s *Store) PathOf(o Outcome, session string) string {
	if o == Archived {
		return archivedPath(s.Dir, session)
	}
	return s.Path(session)
}

// ArchivedPath returns the newest archived bottle of a session, or "" if
// there is none.
func archivedPath(dir, session string) string {
	entries, err := os.ReadDir(ArchiveDir(dir))
	if err != nil {
		return ""
	}
	var newest archived
	for _, e := range entries {
		if a, ok := parseArchived(e.Name()); ok && a.session == session && (newest.name == "" || a.newer(newest)) {
			newest = a
		}
	}
	if newest.name == "" {
		return ""
	}
	return filepath.Join(ArchiveDir(dir), newest.name)
}

// newestArchived returns the path and state of the newest archived bottle
// of a session, or "" and nil.
func newestArchived(dir, session string) (string, *render.State) {
	path := archivedPath(dir, session)
	if path == "" {
		return "", nil
	}
	st, err := ReadState(path)
	if err != nil {
		return "", nil
	}
	return path, st
}

// ArchiveLatest is Archive of whichever is newer of the bottle on disk and
// b, a bottle of the session rendered from the sources just now (nil if
// none): b when it may replace the one on disk (see Write) or there is
// none. A bottle on disk a turn behind the sources (the daemon renders a
// moment after each write) archived as it is would make the next render,
// finding content the archive lacks, bring the cleared session back.
func (s *Store) ArchiveLatest(session string, b *render.Bottle) (string, error) {
	dir, now := s.Dir, s.Now()
	src := BottlePath(dir, session)
	if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) && b == nil {
		return "", nil
	}
	if err := safefile.MkdirPrivate(dir); err != nil {
		return "", err
	}
	if err := safefile.MkdirPrivate(ArchiveDir(dir)); err != nil {
		return "", err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	entries, err := os.ReadDir(ArchiveDir(dir))
	if err != nil {
		return "", fmt.Errorf("archive bottle: %w", err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	dst := filepath.Join(ArchiveDir(dir), archiveName(names, session, now))
	if newer, purge := newerThanOnDisk(dir, src, b); newer {
		return dst, archiveBottle(dir, src, dst, b, purge)
	}
	if err := os.Rename(src, dst); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil // archived or removed by someone else meanwhile
		}
		return "", fmt.Errorf("archive bottle: %w", err)
	}
	if err := safefile.SyncDir(ArchiveDir(dir)); err != nil {
		return dst, err
	}
	return dst, safefile.SyncDir(dir)
}

// newerThanOnDisk reports whether b may replace the bottle at src, or,
// there being none, whether it shows what the session's newest archive
// does not; the caller holds the lock.
func newerThanOnDisk(dir, src string, b *render.Bottle) (newer, purge bool) {
	if b == nil {
		return false, false
	}
	cur, err := ReadState(src)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		_, arch := newestArchived(dir, b.State.Session)
		return arch == nil || !stillCurrent(arch, &b.State), false
	case errors.Is(err, render.ErrNoState):
		return true, false
	case err != nil:
		return false, false
	}
	return judge(cur, &b.State, dbNow(dir)) == Written, drops(cur, &b.State)
}

// archiveBottle writes b as the archived bottle dst and removes the bottle
// at src; the caller holds the lock. Until the removal, a crash leaves
// the session's bottle live beside its archive, as if it had not been
// cleared. With purge (b may not show what the bottle at src showed: see
// drops), the search index's purge marker is left first, as Write leaves
// it.
func archiveBottle(dir, src, dst string, b *render.Bottle, purge bool) error {
	tmp, err := writeTemp(dir, b.State.Session, b.Bytes, true) // removed by CleanTemp if a crash leaves it
	if err != nil {
		return fmt.Errorf("archive bottle: %w", err)
	}
	if purge {
		if err := leavePurge(dir); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("archive bottle: %w", err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("archive bottle: %w", err)
	}
	if err := os.Remove(src); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archive bottle: %w", err)
	}
	if err := safefile.SyncDir(ArchiveDir(dir)); err != nil {
		return err
	}
	return safefile.SyncDir(dir)
}
