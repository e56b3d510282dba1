package watch

import (
	"context"
	"errors"
	"maps"
	"time"

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
	Source      string `json:"source"`
	Transcripts int    `json:"transcripts"`
	Fresh       int    `json:"fresh"`
	Stale       int    `json:"stale"`
	Missing     int    `json:"missing"`
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
	// Sessions are the most recently written transcripts, newest first.
	Sessions []SessionCheck `json:"sessions"`
}

// SessionCheck is one session's bottle against its sources.
type SessionCheck struct {
	Session    string    `json:"session"`
	Transcript string    `json:"transcript"`
	Modified   time.Time `json:"modified"` // transcript's last write
	Mode       string    `json:"mode,omitempty"`
	Freshness  string    `json:"freshness"` // fresh, stale, missing, archived
	Why        string    `json:"why,omitempty"`
	// Unknown is what the bottle's transcripts held that bottled does not
	// know, as recorded in the bottle.
	Unknown *sources.Unknown `json:"unknown,omitempty"`
}

// surveyRecent is how many sessions a survey lists.
const surveyRecent = 10

// TakeSurvey checks every transcript under claudeDir against its bottle in
// dataDir, reading claude-mem's database when there is one. It reads only
// the end of each transcript (render.VerifyTail); a change made in place
// further back is the daemon's to find.
func TakeSurvey(ctx context.Context, claudeDir, dataDir string) (*Survey, error) {
	sv := &Survey{Source: "disk", DB: DB{Path: sources.MemoryFile(dataDir)}}
	db, err := sources.OpenMemoryDB(ctx, sv.DB.Path)
	switch {
	case err == nil:
		defer db.Close()
		sv.DB.Reachable = true
		sv.DB.SchemaVersion, _ = db.SchemaVersion(ctx)
	case errors.Is(err, sources.ErrNoMemoryDB):
		sv.DB.Error = "no claude-mem database"
	default:
		sv.DB.Error = err.Error()
	}
	bottles := render.BottlesDir(dataDir)
	modified := map[string]time.Time{}
	for _, p := range sources.ListTranscripts(claudeDir) {
		if info, err := sources.StatRegular(p); err == nil {
			modified[p] = info.ModTime()
		}
	}
	// Without the daemon, only the observer sessions in claude-mem's own
	// project directory are known as such.
	all := sv.list(modified, func(path string) bool { return sources.IsObserverSession(path, "", dataDir) })
	for i, f := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fresh, st, why, err := render.Check(bottles, f.id, f.path, render.CursorNow(ctx, db, f.id), render.VerifyTail)
		if err != nil {
			fresh, why = render.Stale, err.Error()
		}
		c := SessionCheck{Why: why}
		if st != nil {
			c.Mode, c.Unknown = string(st.Mode), st.Unknown
		}
		sv.count(i, f, fresh, c)
	}
	sv.countBottles(bottles, all)
	return sv, nil
}

// list returns the transcripts (path → last write), the surveyRecent
// newest first and in order, the others after them in any order; it leaves
// out claude-mem's observer sessions (those observer says are), which it
// counts, and sets Transcripts.
func (sv *Survey) list(modified map[string]time.Time, observer func(path string) bool) []dated {
	var all []dated
	for path, mod := range modified {
		if observer(path) {
			sv.Observer++
			continue
		}
		all = append(all, dated{id: sources.SessionOf(path), path: path, mod: mod})
	}
	firstK(all, surveyRecent, newer)
	sv.Transcripts = len(all)
	return all
}

// count adds the freshness of list's i-th transcript to the totals, and
// lists it among the most recent (the first surveyRecent) with what c says
// (mode, reason, unknown).
func (sv *Survey) count(i int, f dated, fresh render.Freshness, c SessionCheck) {
	switch fresh {
	case render.Fresh:
		sv.Fresh++
	case render.Stale:
		sv.Stale++
	case render.Cleared:
		sv.Archived++
	default:
		sv.Missing++
	}
	if i < surveyRecent {
		c.Session, c.Transcript, c.Modified, c.Freshness = f.id, f.path, f.mod, fresh.String()
		sv.Sessions = append(sv.Sessions, c)
	}
}

// countBottles counts the bottles in dir whose session has no
// transcript among all.
func (sv *Survey) countBottles(dir string, all []dated) {
	live := make(map[string]bool, len(all))
	for _, f := range all {
		live[f.id] = true
	}
	for id := range bottleFiles(dir) {
		if !live[id] {
			sv.Orphans++
		}
	}
}

// survey is what the daemon knows of every transcript's bottle, in the
// shape of a disk survey, read from its own state: the transcripts the
// file watcher knows, the observer sessions found among them (by their
// directory or, once read, their records), and the outcome of each
// session's last check or render. Nothing of the transcripts is read, so
// status costs the same with 5,000 of them as with 5.
func (d *Daemon) survey(fw *fsWatch, sessions map[string]*sessionRecord) *Survey {
	sv := &Survey{Source: "daemon"}
	seen := fw.transcripts()
	modified := make(map[string]time.Time, len(seen))
	for path, stamp := range seen {
		modified[path] = stamp.mod
	}
	d.mu.Lock()
	observers := maps.Clone(d.observers)
	d.mu.Unlock()
	all := sv.list(modified, func(path string) bool { return observers[sources.SessionOf(path)] })
	for i, f := range all {
		s := sessions[f.id]
		fresh, why := s.freshness()
		c := SessionCheck{Why: why}
		if s != nil {
			c.Mode, c.Unknown = s.Mode, s.Unknown
		}
		sv.count(i, f, fresh, c)
	}
	sv.countBottles(d.bottles, all)
	return sv
}

// freshness is what a session's last check or render says of its bottle
// (nil: none yet).
func (s *sessionRecord) freshness() (render.Freshness, string) {
	switch {
	case s == nil:
		return render.Stale, "not checked yet"
	case s.Pending:
		return render.Stale, "changes not rendered yet"
	case s.outcome == outcomeFailed:
		return render.Stale, s.why
	case s.outcome == outcomeHeld:
		return render.Stale, "claude-mem's database cannot be read"
	case s.outcome == outcomeNothing:
		return render.Missing, "nothing to render"
	case s.outcome == render.Archived.String():
		return render.Cleared, "cleared"
	}
	return render.Fresh, ""
}
