package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// Survey is what the disk says about bottles, daemon or not: every
// transcript's bottle checked against its sources.
type Survey struct {
	// Source says where it comes from: "disk", every bottle checked
	// against its sources (TakeSurvey), or "daemon", what the running
	// daemon knows (it checked them all at start and follows every
	// change).
	Source string `json:"source"`
	// Redaction is what a bottle rendered now is redacted with (the disk
	// survey only; the daemon's status says what it renders with).
	Redaction   *Redaction `json:"redaction,omitempty"`
	Transcripts int        `json:"transcripts"`
	Fresh       int        `json:"fresh"`
	Stale       int        `json:"stale"`
	Missing     int        `json:"missing"`
	// Empty are transcripts with nothing to render (a session that has
	// had no message yet, such as the one /clear opens): they have no
	// bottle and need none, until a message comes.
	Empty int `json:"empty"`
	// Orphans are bottles whose transcript is gone (kept, or reconstructed).
	Orphans int `json:"orphans"`
	// Archived are transcripts of cleared sessions: their bottle is in the
	// archive and stays there until the session gains content.
	Archived int `json:"archived"`
	// Observer counts the transcripts of claude-mem's own observer
	// sessions, which are not bottled (nor counted in Transcripts).
	Observer int `json:"observer"`
	// DB is the claude-mem database as seen from here.
	DB DB `json:"db"`
	// Sessions are the transcripts counted in Transcripts, newest first
	// (never null): every one in a disk survey, the newest daemonListed
	// in the daemon's; Unlisted counts the others (see daemonListed).
	Sessions []SessionCheck `json:"sessions"`
	Unlisted int            `json:"unlisted,omitempty"`
	// UnreadableDirs are the project directories whose transcripts could
	// not be listed or read, and so are not counted (the disk survey
	// only: the daemon's status says so of the directories it cannot
	// watch, see Status.UnwatchedWhy).
	UnreadableDirs []DirError `json:"unreadableDirs,omitempty"`
}

// DirError is a directory that cannot be read, and why.
type DirError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// daemonListed is how many sessions the daemon's survey lists. Its status
// answer must stay small enough for a client's socket buffer to take at
// once (a few KB; see serve.go), so that however many clients ask, and
// however slowly they read, none holds a connection for long: listing
// every session would make it megabytes with 10,000 of them (and each
// status call 10 times as costly). A disk survey, which the status
// command makes itself, lists every session (bottled status --all).
const daemonListed = 10

// States of a session's bottle in a survey (SessionCheck.Freshness):
// bottles.Freshness's, and FreshnessEmpty.
const (
	FreshnessFresh    = "fresh"
	FreshnessStale    = "stale"
	FreshnessMissing  = "missing"
	FreshnessArchived = "archived" // cleared with /clear; the bottle is in the archive
	FreshnessEmpty    = "empty"    // nothing to render: no bottle, and none needed
)

// SessionCheck is one session's bottle against its sources.
type SessionCheck struct {
	Session    string `json:"session"`
	Transcript string `json:"transcript"`
	// Project is the session's working directory, as its bottle's header
	// or else its transcript says ("" when neither does). The survey
	// leaves it out, which reading every header would slow; bottled
	// status fills it in for the sessions it lists.
	Project   string    `json:"project,omitempty"`
	Modified  time.Time `json:"modified"` // transcript's last write
	Mode      string    `json:"mode,omitempty"`
	Freshness string    `json:"freshness"` // fresh, stale, missing, archived, empty
	Why       string    `json:"why,omitempty"`
	// Unknown is what the bottle's transcripts held that bottled does not
	// know, as recorded in the bottle.
	Unknown *sources.Unknown `json:"unknown,omitempty"`
}

// emptyCheckBytes bounds the transcripts a disk survey reads in full to
// tell a session with nothing to render from one whose bottle is missing:
// a session that has had no message holds a few records (a /clear, hook
// outputs with claude-mem's context: a few KB to tens of KB), and reading
// 1 MiB takes milliseconds; a bigger transcript without a bottle is
// counted missing without being read (the daemon, which renders it, tells
// the two apart whatever the size).
const emptyCheckBytes = 1 << 20

// TakeSurvey checks every transcript under claudeDir against its bottle in
// dataDir, reading claude-mem's database when there is one. It reads only
// the end of each transcript (bottles.VerifyTail); a change made in place
// further back is the daemon's to find.
func TakeSurvey(ctx context.Context, claudeDir, dataDir string) (*Survey, error) {
	sv := &Survey{Source: "disk", DB: DB{Path: sources.ClaudeMemFile(dataDir)}, Sessions: []SessionCheck{}}
	db, err := sources.OpenClaudeMemDB(ctx, sv.DB.Path)
	switch {
	case err == nil:
		defer db.Close()
		sv.DB.Reachable = true
		sv.DB.SchemaVersion, _ = db.SchemaVersion(ctx)
	case errors.Is(err, sources.ErrNoClaudeMemDB):
		sv.DB.Error = "no claude-mem database"
	default:
		sv.DB.Error = err.Error()
	}
	rules, redaction := LoadRedaction(dataDir)
	sv.Redaction = &redaction
	store := bottles.Open(dataDir, nil, nil)
	modified := map[string]time.Time{}
	unsearchable := map[string]error{} // directories a transcript of could not be stat'ed in
	for _, p := range sources.ListTranscripts(claudeDir) {
		info, err := sources.StatRegular(p)
		switch {
		case err == nil:
			modified[p] = info.ModTime()
		case errors.Is(err, fs.ErrPermission):
			unsearchable[filepath.Dir(p)] = err
		}
	}
	sv.UnreadableDirs = unreadableDirs(sources.ProjectsDir(claudeDir), unsearchable)
	// Without the daemon, only the observer sessions in claude-mem's own
	// project directory are known as such.
	all := sv.list(modified, func(path string) bool { return sources.IsObserverSession(path, "", dataDir) }, -1)
	for _, f := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fresh, st, why, err := store.Check(f.id, f.path, bottles.CursorNow(ctx, db, f.id), bottles.VerifyTail, rules)
		if err != nil {
			fresh, why = bottles.Stale, err.Error()
		}
		state := fresh.String()
		if fresh == bottles.Missing && err == nil && st == nil {
			if rerr := transcriptReadable(f.path); rerr != nil {
				why = rerr.Error() // as the daemon's render that fails says
			} else if emptySession(ctx, f, db) {
				state, why = FreshnessEmpty, ""
			}
		}
		c := SessionCheck{Why: why}
		if st != nil {
			c.Mode, c.Unknown = string(st.Mode), st.Unknown
		}
		sv.count(f, state, c, true)
	}
	bottled := bottlesIn(store.Dir, len(all))
	for _, f := range all {
		bottled.hasBottle(f.id)
	}
	sv.countOrphans(bottled)
	return sv, nil
}

// transcriptReadable returns why the transcript at path cannot be opened,
// in the words of a render that fails for it (nil if it can be, or is
// gone since it was listed): a bottle missing for that reason says so.
func transcriptReadable(path string) error {
	f, _, err := sources.OpenRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("open transcript: %w", err)
	}
	f.Close()
	return nil
}

// unreadableDirs returns the project directories under projects whose
// transcripts cannot be listed (the directory cannot be opened) or, listed,
// cannot be stat'ed (those of unsearchable), sorted, with why. Listing the
// transcripts (sources.ListTranscripts) skips them without a word.
func unreadableDirs(projects string, unsearchable map[string]error) []DirError {
	found := maps.Clone(unsearchable)
	entries, err := os.ReadDir(projects)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		found[projects] = err
	}
	for _, e := range entries {
		dir := filepath.Join(projects, e.Name())
		info, err := os.Stat(dir) // a project directory may be a link to one
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			found[dir] = err
		case info.IsDir():
			if f, err := os.Open(dir); err != nil {
				found[dir] = err
			} else {
				f.Close()
			}
		}
	}
	var out []DirError
	for _, dir := range slices.Sorted(maps.Keys(found)) {
		why := found[dir]
		var pe *fs.PathError
		if errors.As(why, &pe) {
			why = pe.Err // the path is said beside it
		}
		out = append(out, DirError{Path: dir, Error: why.Error()})
	}
	return out
}

// emptySession reports whether the session of f, which has no bottle, has
// nothing to render (see emptyCheckBytes), as the render would find: no
// message in its transcripts, no prompt or observation in claude-mem's
// database (db, nil if none).
func emptySession(ctx context.Context, f dated, db *sources.ClaudeMemDB) bool {
	info, err := sources.StatRegular(f.path)
	if err != nil || info.Size() > emptyCheckBytes {
		return false
	}
	if db != nil {
		if mem, err := db.Session(ctx, f.id); err != nil || !mem.Empty() {
			return false // records to render, or none can be read to tell
		}
	}
	l, err := bottles.Load(ctx, bottles.Request{SessionID: f.id, Transcript: f.path})
	if err != nil || l.TranscriptErr != nil {
		return false
	}
	return render.Nothing(l.Input(f.id))
}

// list returns the transcripts (path → last write), leaving out
// claude-mem's observer sessions (those observer says are), which it
// counts, and sets Transcripts: all newest first, or, with listed ≥ 0,
// the listed newest first and in order, the others after them in any
// order (which costs a pass rather than a sort).
func (sv *Survey) list(modified map[string]time.Time, observer func(path string) bool, listed int) []dated {
	var all []dated
	for path, mod := range modified {
		if observer(path) {
			sv.Observer++
			continue
		}
		all = append(all, dated{id: sources.SessionOf(path), path: path, mod: mod})
	}
	if listed < 0 {
		newestFirst(all)
	} else {
		firstK(all, listed, newer)
	}
	sv.Transcripts = len(all)
	return all
}

// count adds a transcript's state (one of the Freshness constants) to the
// totals, and lists it with what c says (mode, reason, unknown), or counts
// it unlisted; it is called newest first.
func (sv *Survey) count(f dated, state string, c SessionCheck, listed bool) {
	switch state {
	case FreshnessFresh:
		sv.Fresh++
	case FreshnessStale:
		sv.Stale++
	case FreshnessArchived:
		sv.Archived++
	case FreshnessEmpty:
		sv.Empty++
	default:
		state = FreshnessMissing
		sv.Missing++
	}
	if !listed {
		sv.Unlisted++
		return
	}
	c.Session, c.Transcript, c.Modified, c.Freshness = f.id, f.path, f.mod, state
	sv.Sessions = append(sv.Sessions, c)
}

// bottleSet maps the sessions that have a bottle in dir onto whether a
// transcript of theirs was found (false until hasBottle says so); size
// is how many to expect. One map for both questions, rather than a
// second of the transcripts: the daemon's status asks them of every
// session (see BenchmarkStatusBuild).
type bottleSet map[string]bool

func bottlesIn(dir string, size int) bottleSet {
	set := make(bottleSet, size)
	for id := range bottleFiles(dir) {
		set[id] = false
	}
	return set
}

// hasBottle reports whether session id, whose transcript was found, has a
// bottle, and notes that transcript.
func (b bottleSet) hasBottle(id string) bool {
	_, ok := b[id]
	if ok {
		b[id] = true
	}
	return ok
}

// countOrphans counts the bottles whose session no transcript was found
// for (by hasBottle).
func (sv *Survey) countOrphans(bottled bottleSet) {
	for _, live := range bottled {
		if !live {
			sv.Orphans++
		}
	}
}

// survey is what the daemon knows of every transcript's bottle, in the
// shape of a disk survey, read from its own state: the transcripts the
// file watcher knows, the observer sessions found among them (by their
// directory or, once read, their records), and the outcome of each
// session's last check or render, and which sessions have a bottle (one
// listing of the bottles directory). Nothing of the transcripts is read,
// so status costs the same with 5,000 of them as with 5.
func (d *Daemon) survey(fw *fsWatch, sessions map[string]*sessionRecord) *Survey {
	sv := &Survey{Source: "daemon", Sessions: []SessionCheck{}}
	seen := fw.transcripts()
	modified := make(map[string]time.Time, len(seen))
	for path, stamp := range seen {
		modified[path] = stamp.mod
	}
	d.mu.Lock()
	observers := maps.Clone(d.observers)
	d.mu.Unlock()
	all := sv.list(modified, func(path string) bool { return observers[sources.SessionOf(path)] }, daemonListed)
	bottled := bottlesIn(d.store.Dir, len(all))
	for i, f := range all {
		s := sessions[f.id]
		state, why := s.freshness(bottled.hasBottle(f.id))
		c := SessionCheck{Why: why}
		if s != nil {
			c.Mode, c.Unknown = s.Mode, s.Unknown
		}
		sv.count(f, state, c, i < daemonListed)
	}
	sv.countOrphans(bottled)
	return sv
}

// freshness is what a session's last check or render (s, nil if none
// yet) and whether it has a bottle now say of it: one of the Freshness
// constants, and why. As on disk (TakeSurvey), a bottle that is not
// current is missing when there is none, stale when there is one: a
// session not rendered yet, or whose render failed, has no bottle to be
// stale; and one whose bottle is gone since it was found current (the
// rescan tells why) is not fresh.
func (s *sessionRecord) freshness(bottled bool) (string, string) {
	notCurrent := FreshnessStale
	if !bottled {
		notCurrent = FreshnessMissing
	}
	switch {
	case s == nil && !bottled:
		return FreshnessMissing, "no bottle"
	case s == nil:
		return FreshnessStale, "not checked yet"
	case s.Pending:
		return notCurrent, "changes not rendered yet"
	case s.outcome == outcomeFailed:
		return notCurrent, s.why
	case s.outcome == outcomeHeld:
		return notCurrent, "claude-mem's database cannot be read"
	case s.outcome == outcomeNothing:
		return FreshnessEmpty, ""
	case s.outcome == bottles.Archived.String() && !bottled:
		return FreshnessArchived, "cleared"
	case !bottled:
		return FreshnessMissing, "no bottle"
	}
	return FreshnessFresh, ""
}
