package bottles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"time"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// Freshness says how a bottle compares with its sources now.
type Freshness int

const (
	// Fresh: the sources hold nothing the bottle does not show.
	Fresh Freshness = iota
	// Stale: the sources have content the bottle lacks.
	Stale
	// Missing: there is no bottle (or none bottled can read).
	Missing
	// Cleared: the session was cleared (/clear) and its archived bottle
	// still shows everything the sources hold; it has no live bottle, and
	// should have none until the session gains content.
	Cleared
)

func (f Freshness) String() string {
	return [...]string{"fresh", "stale", "missing", "archived"}[f]
}

// ClaudeMemNow returns a session's claude-mem cursor as it is now, nil if the
// database does not know the session. A nil ClaudeMemNow means there is no
// database to compare with.
type ClaudeMemNow func() (*sources.ClaudeMemCursor, error)

// CursorNow is the ClaudeMemNow that reads a session's cursor from db, or nil
// when there is no database.
func CursorNow(ctx context.Context, db *sources.ClaudeMemDB, session string) ClaudeMemNow {
	if db == nil {
		return nil
	}
	return func() (*sources.ClaudeMemCursor, error) {
		cur, known, err := db.Cursor(ctx, session)
		if err != nil || !known {
			return nil, err
		}
		return &cur, nil
	}
}

// How many bytes of a transcript a freshness check reads again, at most,
// to find a change made in place before the offset its bottle read to (a
// secret redacted, say); see sources.FileState.Since. Every check reads
// the 4 KiB before the offset; none reads a file not written since its
// bottle was rendered.
const (
	// VerifyTail reads nothing more.
	VerifyTail int64 = 0
	// VerifyAll reads every byte before the offset: the daemon, which
	// checks a transcript written since its bottle at the next rescan.
	VerifyAll int64 = math.MaxInt64
	// VerifyHook is what the SessionStart hook reads in full (a few tenths
	// of a millisecond): Claude Code waits for it. A longer transcript is
	// the daemon's to check.
	VerifyHook int64 = 8 << 20
)

// WhyRules is the reason Check gives for a bottle made by redaction rules
// other than the ones in use (by a bottled from before redaction, or
// before the user's patterns changed): it is made again, and what the old
// one held is purged from the search index.
const WhyRules = "bottle made by other redaction rules"

// WhyRewritten is the reason CheckState gives for a transcript that no
// longer holds the bytes its bottle read (truncated, replaced, or changed
// in place): it must be read again from the start.
const WhyRewritten = "transcript rewritten"

// CheckState compares a bottle's state with the sources now. transcript is
// where the session's transcript is now ("" if it has none). Records
// appended since the bottle that carry nothing it would show (hook
// records, tool output, a compaction boundary and its summary) leave it
// fresh; so does a transcript that disappeared, since the bottle keeps what
// it had. Transcripts of at most verify bytes are read again in full when
// they were written since (see VerifyAll). The reason is a few words for
// logs and status.
func CheckState(st *render.State, transcript string, memNow ClaudeMemNow, verify int64) (Freshness, string, error) {
	if st.Format != render.Format {
		return Stale, "bottle of an older format", nil
	}
	own := false
	for _, f := range st.Transcripts {
		if f.Session == st.Session {
			own = true
			if transcript != "" && transcript != f.Path {
				return Stale, "transcript moved", nil
			}
		}
		rewritten, appended, err := f.Since(verify)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return Stale, "", err
		case rewritten:
			return Stale, WhyRewritten, nil
		case appended:
			return Stale, "new messages in the transcript", nil
		}
	}
	if !own && transcript != "" {
		return Stale, "transcript appeared", nil
	}
	if newAside(st, transcript) {
		return Stale, "new side question", nil
	}
	if memNow == nil {
		return Fresh, "", nil
	}
	cur, err := memNow()
	if err != nil {
		return Stale, "", err
	}
	switch {
	case cur == nil:
		return Fresh, "", nil // rows are never deleted; the bottle has what there was
	case st.ClaudeMem == nil:
		if cur.Prompt > 0 || cur.Observation > 0 || cur.Summary > 0 {
			return Stale, "new claude-mem records", nil
		}
	case *st.ClaudeMem != *cur:
		return Stale, "new claude-mem records", nil
	}
	return Fresh, "", nil
}

// newAside reports whether the session whose transcript is at transcript
// has a /btw side-question transcript its bottle did not read: one asked
// since, which writes nothing into the session's own transcript. It costs
// a look at one directory.
func newAside(st *render.State, transcript string) bool {
	if transcript == "" {
		return false
	}
	for _, a := range sources.AsideFiles(transcript) {
		if !slices.ContainsFunc(st.Transcripts, func(f sources.FileState) bool { return f.Path == a }) {
			return true
		}
	}
	return false
}

// Check compares the bottle of session with the sources now (see
// CheckState), and with the redaction rules in use: a live bottle made by
// other rules is Stale (WhyRules). A session without a live bottle whose
// archived bottle is still current is Cleared, with the archived bottle's
// state.
func (s *Store) Check(session, transcript string, memNow ClaudeMemNow, verify int64, rules *redact.Rules) (Freshness, *render.State, string, error) {
	st, err := ReadState(s.Path(session))
	f, st, _, why, err := check(s.Dir, session, st, err, transcript, memNow, verify, rules)
	return f, st, why, err
}

// check is Check of a bottle state already read (st, or the error reading
// it), which also returns the path of the bottle judged: the live one, or
// the archived one when Cleared.
func check(dir, session string, st *render.State, readErr error, transcript string, memNow ClaudeMemNow, verify int64, rules *redact.Rules) (Freshness, *render.State, string, string, error) {
	path := BottlePath(dir, session)
	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		if arch, ast := newestArchived(dir, session); ast != nil {
			if f, _, err := CheckState(ast, transcript, memNow, verify); err == nil && f == Fresh {
				return Cleared, ast, arch, "cleared", nil
			}
			return Missing, nil, path, "cleared, then resumed", nil
		}
		return Missing, nil, path, "no bottle", nil
	case errors.Is(readErr, render.ErrNoState):
		return Missing, nil, path, "no bottle", nil
	case readErr != nil:
		return Missing, nil, path, "", readErr
	}
	if damaged(path, func() (time.Time, bool) { return crashed(dir) }) {
		return Stale, st, path, "written just before a crash of the machine", nil
	}
	if st.Redact != rules.ID() {
		return Stale, st, path, WhyRules, nil
	}
	f, why, err := CheckState(st, transcript, memNow, verify)
	return f, st, path, why, err
}

// Current is a session's bottle as it is on disk: its path (the live
// bottle's, or the archived one's of a cleared session), its bytes and the
// state they record, read together so that they always agree.
type Current struct {
	Path     string
	Data     []byte
	State    *render.State
	Archived bool
}

// ReadCurrent reads the session's live bottle, or returns nil when it has
// none (or only a file that is not a bottle, or not a regular file: a
// render replaces it).
func (s *Store) ReadCurrent(session string) (*Current, error) {
	return readCurrent(s.Path(session))
}

func readCurrent(path string) (*Current, error) {
	c, err := ReadBottle(path)
	if errors.Is(err, render.ErrNoState) {
		return nil, nil
	}
	return c, err
}

// ReadBottle reads the bottle file at path with the state it records, nil
// if there is no file. A file that is not a bottle is an error wrapping
// ErrNoState; one that is not a regular file (a symbolic link, which may
// point anywhere) is not read, and is an ErrNotRegular (see openBottle).
func ReadBottle(path string) (*Current, error) {
	f, err := openBottle(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read bottle %s: %w", path, err)
	}
	st, err := render.StateOf(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Current{Path: path, Data: data, State: st}, nil
}

// Ensure returns a bottle of the session that shows what req's sources
// hold now, as the hook and the MCP server need one: cur (the live bottle,
// read by ReadCurrent; nil if none) when it is fresh, the archived bottle
// of a cleared session that has gained nothing since, and otherwise a
// bottle rendered from the sources and written to dir (or the one a
// writer racing it left there). It reports whether it rendered. The check
// reads as much of the transcript as req.Verify says; ctx bounds the
// render.
func (s *Store) Ensure(ctx context.Context, req Request, cur *Current) (*Current, bool, error) {
	var st *render.State
	readErr := fs.ErrNotExist
	if cur != nil {
		st, readErr = cur.State, nil
	}
	verify := req.Verify
	if verify == 0 {
		verify = VerifyHook
	}
	f, _, path, _, err := check(s.Dir, req.SessionID, st, readErr, req.Transcript, CursorNow(ctx, req.ClaudeMem, req.SessionID), verify, req.Rules)
	if err == nil {
		switch f {
		case Fresh:
			return cur, false, nil
		case Cleared:
			if arch, err := readCurrent(path); err == nil && arch != nil {
				arch.Archived = true
				return resealed(s.Dir, arch, req.Rules), false, nil
			}
		}
	}
	var b *render.Bottle
	var out Outcome
	if cur != nil { // its state was read already
		b, out, err = s.writeFromDisk(ctx, req, cur.State)
	} else {
		b, out, err = s.WriteFromDisk(ctx, req)
	}
	if err != nil {
		return nil, false, err
	}
	if out == Written {
		return &Current{Path: s.Path(req.SessionID), Data: b.Bytes, State: &b.State}, true, nil
	}
	got, err := readCurrent(s.PathOf(out, req.SessionID))
	if err == nil && got == nil {
		err = fmt.Errorf("bottle of %s: %s, then gone", req.SessionID, out)
	}
	if err != nil {
		return nil, true, err
	}
	got.Archived = out == Archived
	return resealed(s.Dir, got, req.Rules), true, nil
}
