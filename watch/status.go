package watch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bottled-dev/bottled/sources"
)

// Status is what a running daemon reports on its socket, as JSON. Field
// names are stable; fields may be added.
type Status struct {
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started"`
	ClaudeDir string    `json:"claudeDir"`
	DataDir   string    `json:"dataDir"`
	// Roots are the directories watched (or waited for).
	Roots    []Root `json:"roots"`
	Projects int    `json:"projects"` // project directories watched
	// Sessions and Observer are Bottles' Transcripts and Observer.
	Sessions int `json:"sessions"` // transcripts known
	Observer int `json:"observer"` // claude-mem's own observer sessions, not bottled
	// Unwatched are the directories that could not be watched (the inotify
	// watch limit, a directory that cannot be read): changes in them reach
	// their bottles at the rescan, if it can read them. UnwatchedWhy says
	// why for each, in the file watcher's words.
	Unwatched    []string          `json:"unwatched,omitempty"`
	UnwatchedWhy map[string]string `json:"unwatchedWhy,omitempty"`
	// Blocked says why no bottle can be written now (the bottles
	// directory is a symbolic link, which bottled does not follow); empty
	// while bottles are written.
	Blocked string `json:"blocked,omitempty"`
	// Redaction is what the daemon redacts bottles with.
	Redaction Redaction `json:"redaction"`
	DB        DB        `json:"db"`
	Search    Search    `json:"search"`
	Renders   Renders   `json:"renders"`
	CatchUp   CatchUp   `json:"catchUp"`
	// Rescans counts the periodic checks of every transcript and bottle
	// (Config.Rescan) finished since start.
	Rescans int `json:"rescans"`
	// Errors are the most recent failures, newest first (never null).
	Errors []Failure `json:"errors"`
	// Recent are the sessions changed or rendered last, newest first
	// (never null).
	Recent []SessionStatus `json:"recent"`
	// Bottles is what the daemon knows of every transcript's bottle, in
	// the shape of a disk survey (Source "daemon").
	Bottles *Survey `json:"bottles,omitempty"`
}

// WhyWatchLimit is why a directory is not watched (Status.UnwatchedWhy)
// when the inotify watch limit is reached: the daemon's log says how to
// raise it.
const WhyWatchLimit = "inotify watch limit reached"

// Root is a watched directory.
type Root struct {
	Path    string `json:"path"`
	Watched bool   `json:"watched"` // false while it does not exist
}

// DB is the state of claude-mem's database as the daemon sees it.
type DB struct {
	Path          string `json:"path"`
	Reachable     bool   `json:"reachable"`
	SchemaVersion int    `json:"schemaVersion,omitempty"`
	Error         string `json:"error,omitempty"`
	// Since is when the database could no longer be read (the daemon only).
	Since time.Time `json:"since,omitzero"`
	// Held counts the bottles kept as they are because they show records
	// the database cannot give now (the daemon only).
	Held int `json:"held,omitempty"`
}

// Redaction says which rules redact the bottles: the built-in ones and
// the user's patterns from the file Patterns, if it exists. Error says
// why the file, or some of its lines, cannot be used (bottles are then
// redacted with the built-in rules and the lines that can be used).
type Redaction struct {
	Rules    string `json:"rules"` // the rules' ID, as bottles' state lines record it
	Patterns string `json:"patterns"`
	User     int    `json:"userPatterns"` // how many of the user's patterns are in use
	Error    string `json:"error,omitempty"`
}

// Search is the state of bottled's search index as the daemon keeps it.
type Search struct {
	// State is opening (being built, or brought up to date with the
	// bottles), ready, or unavailable (Error says why; the daemon tries
	// again at Retry).
	State string    `json:"state"`
	Since time.Time `json:"since,omitzero"` // when it entered the state
	Error string    `json:"error,omitempty"`
	Retry time.Time `json:"retry,omitzero"`
	// Done and Total are the bytes of bottles indexed so far and in all
	// while opening takes in bottles (0 otherwise).
	Done  int64 `json:"done,omitempty"`
	Total int64 `json:"total,omitempty"`
}

// States of the search index.
const (
	SearchOpening     = "opening"
	SearchReady       = "ready"
	SearchUnavailable = "unavailable"
)

// Renders counts renders since start, with latency percentiles: from the
// first change a render covers to the bottle being written.
type Renders struct {
	Written   int     `json:"written"`   // bottles replaced or created
	Unchanged int     `json:"unchanged"` // sources already reflected
	Failed    int     `json:"failed"`
	Samples   int     `json:"samples"` // latencies the percentiles are over
	P50ms     float64 `json:"p50ms"`
	P90ms     float64 `json:"p90ms"`
	P99ms     float64 `json:"p99ms"`
	MaxMs     float64 `json:"maxms"`
}

// CatchUp is the progress of the start-up catch-up.
type CatchUp struct {
	Total int  `json:"total"`
	Done  int  `json:"done"`
	Over  bool `json:"over"`
}

// Failure is one failed render or watch error.
type Failure struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Error   string    `json:"error"`
}

// SessionStatus is the state of one session's bottle.
type SessionStatus struct {
	Session string `json:"session"`
	// Transcript is the session's transcript (absent when it has none).
	Transcript string `json:"transcript,omitempty"`
	// Changed is when the daemon last saw a change to the session's
	// sources; absent for a session the start-up catch-up rendered and
	// nothing changed since (the change came while the daemon was down).
	Changed  time.Time `json:"changed,omitzero"`
	Rendered time.Time `json:"rendered,omitzero"` // last render that finished
	Mode     string    `json:"mode,omitempty"`
	Outcome  string    `json:"outcome,omitempty"` // written, unchanged, kept-full, archived, nothing, observer, held, failed
	Pending  bool      `json:"pending"`           // a change is not rendered yet
	// Unknown is what the last render met in the transcript that bottled
	// does not know (nil when nothing).
	Unknown *sources.Unknown `json:"unknown,omitempty"`
}

const (
	// keepLatencies is how many recent render latencies the percentiles are
	// computed over: enough for a p99, bounded memory.
	keepLatencies = 1024
	keepErrors    = 20
	keepRecent    = 20
)

// recorder accumulates the daemon's status. Its mutex guards every field;
// it is written by the loop and the render workers and read by the socket
// server.
type recorder struct {
	mu        sync.Mutex
	st        Status
	latencies []time.Duration // ring of the last keepLatencies
	next      int
	// sessions is what is known of every session the daemon changed,
	// checked or rendered (see session).
	sessions map[string]*sessionRecord
	// survey, if set, makes the survey a status answer carries.
	survey func(map[string]*sessionRecord) *Survey
}

// sessionRecord is what the recorder knows of one session: what Recent
// shows of it, and what its last check or render says of its bottle.
type sessionRecord struct {
	SessionStatus
	// outcome is the last check's or render's: Outcome, or what a
	// catch-up check found, which Recent does not show.
	outcome string
	why     string // the error of a failed render
}

// listed reports whether the session is one Recent may list: one that
// changed or was rendered, not one a catch-up only checked.
func (s *sessionRecord) listed() bool { return !s.Changed.IsZero() || !s.Rendered.IsZero() }

func newRecorder(st Status) *recorder {
	return &recorder{st: st, sessions: map[string]*sessionRecord{}}
}

func (r *recorder) update(f func(st *Status)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.st)
}

// session returns what is known of a session, to change while holding the
// lock: a copy, which replaces the record in sessions. A record once
// stored is never changed, so a snapshot reads the records it took
// without the lock.
func (r *recorder) session(id string) *sessionRecord {
	s := &sessionRecord{SessionStatus: SessionStatus{Session: id}}
	if old := r.sessions[id]; old != nil {
		*s = *old
	}
	r.sessions[id] = s
	return s
}

// changed notes a change to a session.
func (r *recorder) changed(id, transcript string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.session(id)
	s.Changed, s.Pending = at, true
	if transcript != "" {
		s.Transcript = transcript
	}
}

// checked records a check, begun at began (the catch-up's, or the
// rescan's), that found a bottle needed no render: outcome is
// outcomeFresh, archived or outcomeNothing. A change or a render the
// session had since says more than the check: the check is then left out.
func (r *recorder) checked(id, outcome string, began time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.sessions[id]; old != nil && (old.Changed.After(began) || old.Rendered.After(began)) {
		return
	}
	s := r.session(id)
	s.outcome, s.why = outcome, ""
}

// rendered records a finished render.
func (r *recorder) rendered(id string, res result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.session(id)
	s.Rendered, s.Outcome, s.Pending = res.finished, res.outcome, res.pendingAfter
	if res.transcript != "" {
		s.Transcript = res.transcript
	}
	if res.mode != "" {
		s.Mode, s.Unknown = res.mode, res.unknown
	}
	s.outcome, s.why = res.outcome, ""
	if res.err != nil {
		s.why = res.err.Error()
	}
	switch {
	case res.err != nil:
		r.st.Renders.Failed++
		r.fail(Failure{Time: res.finished, Session: id, Error: res.err.Error()})
		return
	case res.outcome == outcomeWritten:
		r.st.Renders.Written++
	default:
		r.st.Renders.Unchanged++
	}
	if !res.since.IsZero() {
		lat := res.finished.Sub(res.since)
		if len(r.latencies) < keepLatencies {
			r.latencies = append(r.latencies, lat)
		} else {
			r.latencies[r.next] = lat
			r.next = (r.next + 1) % keepLatencies
		}
	}
}

func (r *recorder) fail(f Failure) {
	r.st.Errors = append([]Failure{f}, r.st.Errors...)
	if len(r.st.Errors) > keepErrors {
		r.st.Errors = r.st.Errors[:keepErrors]
	}
}

// failure records an error that is not a render's (a watch error).
func (r *recorder) failure(f Failure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail(f)
}

// stateCopy is what a status is made of, copied under the recorder's lock
// (the loop and the render workers wait for it meanwhile), so that the
// status is made from it without the lock.
type stateCopy struct {
	st        Status
	latencies []time.Duration
	sessions  map[string]*sessionRecord
	survey    func(map[string]*sessionRecord) *Survey
}

func (r *recorder) copyLocked() stateCopy {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := stateCopy{st: r.st, latencies: slices.Clone(r.latencies), survey: r.survey, sessions: maps.Clone(r.sessions)}
	c.st.Roots = slices.Clone(c.st.Roots)
	c.st.Unwatched, c.st.UnwatchedWhy = slices.Clone(c.st.Unwatched), maps.Clone(c.st.UnwatchedWhy)
	c.st.Errors = append([]Failure{}, c.st.Errors...) // [] rather than null
	return c
}

// status is the copy's status, without survey, percentiles computed.
func (c stateCopy) status() Status {
	st, lat := c.st, c.latencies
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	st.Renders.Samples = len(lat)
	st.Renders.P50ms, st.Renders.P90ms, st.Renders.P99ms = pct(0.50), pct(0.90), pct(0.99)
	if len(lat) > 0 {
		st.Renders.MaxMs = float64(lat[len(lat)-1].Microseconds()) / 1000
	}
	st.Recent = recent(c.sessions)
	return st
}

// recent returns the keepRecent sessions that changed or were rendered
// last, newest first.
func recent(sessions map[string]*sessionRecord) []SessionStatus {
	var all []*sessionRecord
	for _, s := range sessions {
		if s.listed() {
			all = append(all, s)
		}
	}
	latest := func(s *sessionRecord) time.Time {
		if s.Rendered.After(s.Changed) {
			return s.Rendered
		}
		return s.Changed
	}
	all = firstK(all, keepRecent, func(a, b *sessionRecord) int {
		return cmp.Or(latest(b).Compare(latest(a)), strings.Compare(a.Session, b.Session))
	})
	recent := []SessionStatus{}
	for _, s := range all {
		recent = append(recent, s.SessionStatus)
	}
	return recent
}

// firstK moves the k first elements of s by cmp to its front, in order,
// and returns them; the rest of s is left in any order. It costs about
// len(s) comparisons where sorting s would cost len(s)·log len(s) (a
// status lists the 20 newest of 20,000 sessions).
func firstK[E any](s []E, k int, cmp func(a, b E) int) []E {
	k = min(k, len(s))
	if k == 0 {
		return s[:0]
	}
	slices.SortFunc(s[:k], cmp)
	for i := k; i < len(s); i++ {
		if cmp(s[i], s[k-1]) >= 0 {
			continue
		}
		s[i], s[k-1] = s[k-1], s[i]
		for j := k - 1; j > 0 && cmp(s[j], s[j-1]) < 0; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[:k]
}

// snapshotWithSurvey is snapshot with what the daemon knows of every
// bottle, computed outside the lock; the transcripts it counts are the
// status's.
func (r *recorder) snapshotWithSurvey() Status {
	c := r.copyLocked()
	st := c.status()
	if c.survey != nil {
		st.Bottles = c.survey(c.sessions)
		st.Bottles.DB = st.DB
		st.Sessions, st.Observer = st.Bottles.Transcripts, st.Bottles.Observer
	}
	return st
}

// listenStatus creates the status socket, owner-only. A socket left by a
// daemon that crashed is removed first; the caller holds the lock, so no
// live daemon owns it.
func listenStatus(dataDir string) (*unixListener, error) {
	path := filepath.Join(dataDir, SocketFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	return listenUnix(path)
}

// ErrNotRunning reports that no daemon answers on the data directory's
// socket; Query's error is then a *NotRunningError, which says why.
var ErrNotRunning = errors.New("no bottled daemon is running")

// NotRunningError says why no daemon answers on a data directory's socket.
// It matches ErrNotRunning.
type NotRunningError struct {
	Socket string // the socket's path
	Why    string // "no socket at …", or "nothing answers at …"
}

func (e *NotRunningError) Error() string { return ErrNotRunning.Error() + ": " + e.Why }

func (e *NotRunningError) Is(target error) bool { return target == ErrNotRunning }

// ErrBusy reports that the daemon runs but answered as many status
// requests as it takes at once until the query's deadline.
var ErrBusy = errors.New("the bottled daemon is too busy to answer status")

const (
	// queryTimeout bounds a status query when the context has no deadline.
	queryTimeout = 3 * time.Second
	// queryRetry is how long a query waits before asking a busy daemon
	// again: answers take microseconds, so a slot is soon free.
	queryRetry = 20 * time.Millisecond
)

// Query asks the daemon for dataDir for its status, again while it says it
// is busy, until ctx's deadline (or queryTimeout).
func Query(ctx context.Context, dataDir string) (*Status, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, queryTimeout)
		defer cancel()
	}
	var busy error // the last time it said it was busy
	for {
		st, err := query(ctx, dataDir)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded) && busy != nil:
			return nil, busy // asking once more ran out of time
		case !errors.Is(err, ErrBusy):
			return st, err
		}
		busy = err
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(queryRetry):
		}
	}
}

// query asks once.
func query(ctx context.Context, dataDir string) (*Status, error) {
	path := filepath.Join(dataDir, SocketFile)
	conn, err := dialUnix(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &NotRunningError{Socket: path, Why: "no socket at " + path}
	case errors.Is(err, syscall.ECONNREFUSED):
		// A daemon killed before it could remove it leaves its socket.
		return nil, &NotRunningError{Socket: path, Why: "nothing answers at " + path}
	case errors.Is(err, syscall.EAGAIN):
		return nil, fmt.Errorf("%w: its socket's queue is full", ErrBusy)
	case err != nil:
		return nil, fmt.Errorf("query daemon: %w", err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	data, err := readAll(conn, deadline)
	if err != nil {
		return nil, fmt.Errorf("read daemon status: %w", err)
	}
	var refused struct {
		Busy string `json:"busy"`
	}
	if json.Unmarshal(data, &refused) == nil && refused.Busy != "" {
		return nil, fmt.Errorf("%w: %s", ErrBusy, refused.Busy)
	}
	var st Status
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read daemon status: %w", err)
	}
	return &st, nil
}
