package render

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"time"

	"bottled/sources"
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

// MemoryNow returns a session's claude-mem cursor as it is now, nil if the
// database does not know the session. A nil MemoryNow means there is no
// database to compare with.
type MemoryNow func() (*sources.MemoryCursor, error)

// CursorNow is the MemoryNow that reads a session's cursor from db, or nil
// when there is no database.
func CursorNow(ctx context.Context, db *sources.MemoryDB, session string) MemoryNow {
	if db == nil {
		return nil
	}
	return func() (*sources.MemoryCursor, error) {
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

// WhyRewritten is the reason CheckState gives for a transcript that no
// longer holds the bytes its bottle read (truncated, replaced, or changed
// in place): it must be read again from the start.
const WhyRewritten = "transcript rewritten"

// CheckState compares a bottle's state with the sources now. transcript is
// where the session's transcript is now ("" if it has none). Records
// appended since the bottle that carry nothing it would show (hook
// records, tool results, a compaction boundary and its summary) leave it
// fresh; so does a transcript that disappeared, since the bottle keeps what
// it had. Transcripts of at most verify bytes are read again in full when
// they were written since (see VerifyAll). The reason is a few words for
// logs and status.
func CheckState(st *State, transcript string, memNow MemoryNow, verify int64) (Freshness, string, error) {
	if st.Format != Format {
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
	case st.Memory == nil:
		if cur.Prompt > 0 || cur.Observation > 0 || cur.Summary > 0 {
			return Stale, "new claude-mem records", nil
		}
	case *st.Memory != *cur:
		return Stale, "new claude-mem records", nil
	}
	return Fresh, "", nil
}

// Check compares the bottle of session in dir with the sources now (see
// CheckState). A session without a live bottle whose archived bottle is
// still current is Cleared, with the archived bottle's state.
func Check(dir, session, transcript string, memNow MemoryNow, verify int64) (Freshness, *State, string, error) {
	st, err := ReadState(BottlePath(dir, session))
	if errors.Is(err, fs.ErrNotExist) {
		if arch := newestArchived(dir, session); arch != nil {
			if f, _, err := CheckState(arch, transcript, memNow, verify); err == nil && f == Fresh {
				return Cleared, arch, "cleared", nil
			}
			return Missing, nil, "cleared, then resumed", nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNoState) {
		return Missing, nil, "no bottle", nil
	}
	if err != nil {
		return Missing, nil, "", err
	}
	if damaged(BottlePath(dir, session), func() (time.Time, bool) { return crashed(dir) }) {
		return Stale, st, "written just before a crash of the machine", nil
	}
	f, why, err := CheckState(st, transcript, memNow, verify)
	return f, st, why, err
}
