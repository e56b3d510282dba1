package bottles

import (
	"path/filepath"
	"time"

	"github.com/bottled-dev/bottled/render"
)

// A Store is the bottles of one data directory, with the clock and the
// time zone their renders and clean-ups read. Its methods are safe for
// concurrent use, by several goroutines and processes: what must not
// interleave (a write, an archive, the purge marker) is done under an
// exclusive lock on the bottles directory.
type Store struct {
	DataDir string // holds the bottles directory and claude-mem's database
	Dir     string // the bottles directory, BottlesDir(DataDir)
	Now     func() time.Time
	Loc     *time.Location // of the times a bottle shows
}

// Open returns the store of the data directory dataDir, whose renders are
// timed by now and shown in loc (time.Now and time.Local when nil). It
// touches no file: the bottles directory is made by the first write.
func Open(dataDir string, now func() time.Time, loc *time.Location) *Store {
	if now == nil {
		now = time.Now
	}
	if loc == nil {
		loc = time.Local
	}
	return &Store{DataDir: dataDir, Dir: BottlesDir(dataDir), Now: now, Loc: loc}
}

// BottlesDir is where bottles live under bottled's data directory.
func BottlesDir(dataDir string) string { return filepath.Join(dataDir, "bottles") }

// BottlePath is the bottle of a session in the bottles directory dir.
func BottlePath(dir, session string) string { return filepath.Join(dir, session+".md") }

// Path is the bottle of a session.
func (s *Store) Path(session string) string { return BottlePath(s.Dir, session) }

// ArchivedPath returns the newest archived bottle of a session, or "" if
// there is none.
func (s *Store) ArchivedPath(session string) string { return archivedPath(s.Dir, session) }

// Write writes bottle b, atomically and never backwards (see write.go),
// syncing it and the directory.
func (s *Store) Write(b *render.Bottle) (Outcome, error) {
	r, err := s.Put(b, false)
	return r.Outcome, err
}

// Put is Write told what only the reader of b's sources can know, and
// saying what it did: rewritten says a transcript was found no longer
// holding bytes the bottle on disk may have been made from (a redaction
// in place, which the file's offsets do not show), so that replacing that
// bottle asks for the search index's purge; the result says whether the
// write asked for one (Result.AskedPurge), for a caller that keeps the
// index to purge it now.
func (s *Store) Put(b *render.Bottle, rewritten bool) (Result, error) {
	return writeDurable(s.Dir, b, rewritten)
}

// Archive moves the bottle of session to the archive (see archive.go),
// under the same lock as writes so that it cannot cross a render or
// another archive, and returns its new path, "" if there was no bottle.
func (s *Store) Archive(session string) (string, error) { return s.ArchiveLatest(session, nil) }

// AskPurge leaves a new purge marker, durably (see purge.go).
func (s *Store) AskPurge() error { return askPurge(s.Dir) }

// TakePurge returns the request the purge marker holds, and false if none
// is asked.
func (s *Store) TakePurge() (PurgeRequest, bool) { return takePurge(s.Dir) }

// PurgeMarker is the path of the purge marker.
func (s *Store) PurgeMarker() string { return purgeMarker(s.Dir) }
