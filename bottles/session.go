package bottles

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// Reading a session's bottle, as the MCP server's read and the show
// command do: the session named by its id or a start of it (FindSession),
// and its bottle brought up to date first (EnsureRead).

// MinPrefix is the fewest characters of a session id that name a session
// by its start: fewer would name many sessions of a long history.
const MinPrefix = 6

// maxCandidates bounds the sessions an ambiguous start of an id lists
// (AmbiguousError), each of which has its bottle read.
const maxCandidates = 10

// Candidate is one of the sessions an ambiguous start of an id names,
// with what tells it from the others.
type Candidate struct {
	ID string
	// Bottle is its bottle (its newest archived one when Archived), "" if
	// it has none yet.
	Bottle   string
	Archived bool
	// LastActive is when the session was last active: the last time its
	// bottle shows, or, when it has no bottle, the time of the last record
	// in its transcript's tail (the file's time only when that tail shows
	// none).
	LastActive time.Time
	// FirstPrompt is the start of its first message ("" without a
	// bottle).
	FirstPrompt string
}

// AmbiguousError reports a start of an id that several sessions have.
type AmbiguousError struct {
	Prefix string
	Count  int // sessions whose id starts with Prefix
	// Candidates are the most recently active of them (at most
	// maxCandidates), newest first.
	Candidates []Candidate
}

func (e *AmbiguousError) Error() string {
	var ids []string
	for _, c := range e.Candidates[:min(len(e.Candidates), 4)] {
		ids = append(ids, c.ID)
	}
	if e.Count > len(ids) {
		ids = append(ids, "…")
	}
	return fmt.Sprintf("%q names %d sessions (%s): give more of the id", e.Prefix, e.Count, strings.Join(ids, ", "))
}

// FindSession returns the id of the session that arg names: arg itself
// when a bottle, an archived bottle or a transcript of session arg exists
// (transcripts are under claudeDir), else
// the one session whose id starts with arg, in any case (Claude Code's ids
// are lower-case UUIDs, which a person may type in upper case), if arg
// has at least MinPrefix characters. When nothing matches it returns arg, whose session
// claude-mem may still know. A start that several sessions have is an
// *AmbiguousError; bottles' times are read in the store's location.
func (s *Store) FindSession(claudeDir, arg string) (string, error) {
	dir := s.Dir
	if !sources.ValidSessionID(arg) {
		return "", fmt.Errorf("invalid session id %q: expected letters, digits, '-' or '_'", arg)
	}
	if exists(BottlePath(dir, arg)) || archivedPath(dir, arg) != "" {
		return arg, nil
	}
	if _, err := sources.FindTranscript(claudeDir, arg); err == nil || len(arg) < MinPrefix {
		return arg, nil
	}
	found := startingWith(dir, claudeDir, arg)
	switch len(found) {
	case 0:
		return arg, nil
	case 1:
		return found[0].ID, nil
	}
	return "", ambiguous(arg, found, s.Loc)
}

// startingWith lists the sessions whose id starts with prefix: those of
// the live bottles, the archived ones and the transcripts, each once, with
// its bottle (the live one before an archived one, the newest archived)
// and the time of the file found. Files that are not regular (a link) are
// no bottles.
func startingWith(dir, claudeDir, prefix string) []Candidate {
	var found []Candidate
	add := func(id, bottle string, archived bool, mod time.Time) {
		if len(id) < len(prefix) || !strings.EqualFold(id[:len(prefix)], prefix) || !sources.ValidSessionID(id) {
			return
		}
		i := slices.IndexFunc(found, func(c Candidate) bool { return c.ID == id })
		switch {
		case i < 0:
			found = append(found, Candidate{ID: id, Bottle: bottle, Archived: archived, LastActive: mod})
		case found[i].Bottle == "" || found[i].Archived && bottle != "" && (!archived || newerArchive(bottle, found[i].Bottle)):
			found[i].Bottle, found[i].Archived, found[i].LastActive = bottle, archived, mod
		}
	}
	for _, sub := range []string{dir, ArchiveDir(dir)} {
		entries, _ := os.ReadDir(sub)
		for _, e := range entries {
			archived := sub != dir
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if archived {
				name, ok = ArchivedSession(e.Name())
			}
			if !ok || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
				continue
			}
			if info, err := e.Info(); err == nil {
				add(name, filepath.Join(sub, e.Name()), archived, info.ModTime())
			}
		}
	}
	transcripts := map[string]string{}
	for _, path := range sources.ListTranscripts(claudeDir) {
		if info, err := os.Stat(path); err == nil {
			add(sources.SessionOf(path), "", false, info.ModTime())
			transcripts[sources.SessionOf(path)] = path
		}
	}
	for i, c := range found {
		// To the minute, as a bottle shows its times: two sessions last
		// active in the same minute sort by id either way.
		if path := transcripts[c.ID]; c.Bottle == "" && path != "" {
			found[i].LastActive = cmp.Or(lastRecordTime(path).Truncate(time.Minute), c.LastActive)
		}
	}
	return found
}

// recordTail is how much of a transcript's end lastRecordTime reads: a
// session's last records, but for one that ends with a very long line.
const recordTail = 64 << 10

// lastRecordTime is the newest "timestamp" among the records in the last
// recordTail bytes of the transcript at path, zero if none has one or it
// cannot be read. A file's modification time is no measure of a session's
// activity (Claude Code appends titles and summaries later), and would
// not compare with the times the bottles show.
func lastRecordTime(path string) time.Time {
	var last time.Time
	err := sources.ScanTail(path, recordTail, func(line []byte) bool {
		var rec struct {
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Timestamp.After(last) {
			last = rec.Timestamp
		}
		return true
	})
	if err != nil {
		return time.Time{}
	}
	return last
}

// ambiguous describes the most recently written of the sessions found
// from their bottles, newest first.
func ambiguous(prefix string, found []Candidate, loc *time.Location) *AmbiguousError {
	slices.SortFunc(found, func(a, b Candidate) int { return cmp.Or(b.LastActive.Compare(a.LastActive), cmp.Compare(a.ID, b.ID)) })
	shown := found[:min(len(found), maxCandidates)]
	for i := range shown {
		describe(&shown[i], loc)
	}
	slices.SortStableFunc(shown, func(a, b Candidate) int { return cmp.Or(b.LastActive.Compare(a.LastActive), cmp.Compare(a.ID, b.ID)) })
	return &AmbiguousError{Prefix: prefix, Count: len(found), Candidates: shown}
}

// newerArchive reports whether the archived bottle at path a came after
// the one at b, of the same session.
func newerArchive(a, b string) bool { return NewerArchive(filepath.Base(a), filepath.Base(b)) }

// describe fills in a candidate's first prompt and last activity from its
// bottle, if it has one that can be read.
func describe(c *Candidate, loc *time.Location) {
	if c.Bottle == "" {
		return
	}
	b, err := ReadBottle(c.Bottle)
	if err != nil || b == nil {
		return
	}
	p, err := render.Parse(b.Data, loc)
	if err != nil {
		return
	}
	c.FirstPrompt = p.FirstPrompt
	if last := p.LastActive(); !last.IsZero() {
		c.LastActive = last
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// ReadRequest names a session whose bottle is to be read, and where its
// sources are.
type ReadRequest struct {
	SessionID string
	ClaudeDir string
	// Timeout bounds a render before the read (none if 0).
	Timeout time.Duration
	// Rules redact a bottle rendered (nil: the built-in rules).
	Rules *redact.Rules
}

// EnsureRead returns the session's bottle for reading, as the SessionStart
// hook would point to it (Ensure): fresh, rendered within r.Timeout if
// stale or missing, or archived if the session was cleared and gained
// nothing since. When there is nothing to render now, the bottle there is
// is read as it is: the live one, else the newest archived one; with
// neither, the error wraps ErrNothing and says why. When a render fails
// (its time is up, ctx ends), the error comes with the bottle on disk as
// it is, if there is one, for a reader that would rather show it than
// nothing. No bottle is read through a symbolic link (which bottled never
// makes, and which may point anywhere), as the index takes none in.
func (s *Store) EnsureRead(ctx context.Context, r ReadRequest) (*Current, error) {
	dir, id := s.Dir, r.SessionID
	transcript, _ := sources.FindTranscript(r.ClaudeDir, id)
	db, dbErr := sources.OpenClaudeMemDB(ctx, sources.ClaudeMemFile(s.DataDir))
	if dbErr == nil {
		defer db.Close()
	} else {
		db = nil
	}
	cur, err := s.ReadCurrent(id)
	if err != nil {
		return nil, err
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	req := Request{SessionID: id, Transcript: transcript, ClaudeDir: r.ClaudeDir, ClaudeMem: db, ClaudeMemErr: dbErr, Rules: r.Rules, Verify: VerifyHook}
	b, _, err := s.Ensure(ctx, req, cur)
	if err == nil {
		return b, nil
	}
	var archErr error
	if cur == nil {
		cur, archErr = readArchived(dir, id)
	}
	switch {
	case !errors.Is(err, render.ErrNothing):
		return resealed(dir, cur, r.Rules), err
	case cur != nil:
		return resealed(dir, cur, r.Rules), nil
	case archErr != nil:
		return nil, fmt.Errorf("archived bottle of session %s: %w", id, archErr)
	}
	if _, lerr := ReadBottle(BottlePath(dir, id)); errors.Is(lerr, ErrNotRegular) {
		return nil, fmt.Errorf("no bottle for session %s: %w", id, lerr)
	}
	return nil, fmt.Errorf("no bottle for session %s, and %w", id, err)
}

// ReadLatest reads the session's bottle as it is on disk, brought up to
// date by no one: the live one, else its newest archived one; nil if it
// has neither.
func (s *Store) ReadLatest(session string) (*Current, error) {
	cur, err := s.ReadCurrent(session)
	if cur != nil || err != nil {
		return cur, err
	}
	cur, err = readArchived(s.Dir, session)
	if errors.Is(err, fs.ErrNotExist) { // archived, then gone: as if never there
		return nil, nil
	}
	return cur, err
}

// readArchived reads the newest archived bottle of session, nil if it has
// none.
func readArchived(dir, session string) (*Current, error) {
	path := archivedPath(dir, session)
	if path == "" {
		return nil, nil
	}
	c, err := ReadBottle(path)
	if err != nil || c == nil {
		return nil, cmp.Or(err, fs.ErrNotExist)
	}
	c.Archived = true
	return c, nil
}
