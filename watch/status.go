package watch

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// watch limit): changes in them reach their bottles at the rescan.
	Unwatched []string `json:"unwatched,omitempty"`
	// Blocked says why no bottle can be written now (the bottles
	// directory is a symbolic link, which bottled does not follow); empty
	// while bottles are written.
	Blocked string  `json:"blocked,omitempty"`
	DB      DB      `json:"db"`
	Search  Search  `json:"search"`
	Renders Renders `json:"renders"`
	CatchUp CatchUp `json:"catchUp"`
	// Errors are the most recent failures, newest first.
	Errors []Failure `json:"errors"`
	// Recent are the most recently changed sessions, newest first.
	Recent []SessionStatus `json:"recent"`
	// Bottles is what the daemon knows of every transcript's bottle, in
	// the shape of a disk survey (Source "daemon").
	Bottles *Survey `json:"bottles,omitempty"`
}

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
	Session    string    `json:"session"`
	Transcript string    `json:"transcript,omitempty"`
	Changed    time.Time `json:"changed"`            // last change seen
	Rendered   time.Time `json:"rendered,omitempty"` // last render that finished
	Mode       string    `json:"mode,omitempty"`
	Outcome    string    `json:"outcome,omitempty"` // written, unchanged, kept-full, archived, nothing, observer, failed
	Pending    bool      `json:"pending"`           // a change is not rendered yet
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
	// checked or rendered.
	sessions map[string]*sessionRecord
	// survey, if set, makes the survey a status answer carries.
	survey func(map[string]sessionRecord) *Survey
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

// session returns what is known of a session, to change.
func (r *recorder) session(id string) *sessionRecord {
	s := r.sessions[id]
	if s == nil {
		s = &sessionRecord{SessionStatus: SessionStatus{Session: id}}
		r.sessions[id] = s
	}
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

// checked records a catch-up check that found a bottle needed no render:
// outcome is outcomeFresh, archived or outcomeNothing.
func (r *recorder) checked(id, outcome string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.session(id)
	s.outcome, s.why = outcome, ""
}

// rendered records a finished render.
func (r *recorder) rendered(id string, res result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.session(id)
	s.Rendered, s.Outcome, s.Pending = res.finished, res.outcome, res.pendingAfter
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

// snapshot returns a copy of the status with percentiles computed.
func (r *recorder) snapshot() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Roots = slices.Clone(st.Roots)
	st.Unwatched = slices.Clone(st.Unwatched)
	st.Errors = slices.Clone(st.Errors)
	lat := slices.Clone(r.latencies)
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
	st.Recent = r.recent()
	return st
}

// recent returns the keepRecent sessions that changed last, newest first.
func (r *recorder) recent() []SessionStatus {
	var all []*sessionRecord
	for _, s := range r.sessions {
		if s.listed() {
			all = append(all, s)
		}
	}
	slices.SortFunc(all, func(a, b *sessionRecord) int {
		return cmp.Or(b.Changed.Compare(a.Changed), strings.Compare(a.Session, b.Session))
	})
	var recent []SessionStatus
	for _, s := range all[:min(keepRecent, len(all))] {
		recent = append(recent, s.SessionStatus)
	}
	return recent
}

// snapshotWithSurvey is snapshot with what the daemon knows of every
// bottle, computed outside the lock; the transcripts it counts are the
// status's.
func (r *recorder) snapshotWithSurvey() Status {
	st := r.snapshot()
	r.mu.Lock()
	survey := r.survey
	sessions := make(map[string]sessionRecord, len(r.sessions))
	for id, s := range r.sessions {
		sessions[id] = *s
	}
	r.mu.Unlock()
	if survey != nil {
		st.Bottles = survey(sessions)
		st.Bottles.DB = st.DB
		st.Sessions, st.Observer = st.Bottles.Transcripts, st.Bottles.Observer
	}
	return st
}

// serveStatus answers every connection on ln with one status snapshot.
// It returns when ln is closed.
func serveStatus(ln *unixListener, rec *recorder) {
	for {
		conn, err := ln.accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
			json.NewEncoder(conn).Encode(rec.snapshotWithSurvey())
		}()
	}
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
// socket.
var ErrNotRunning = errors.New("no bottled daemon is running")

// queryTimeout bounds a status query when the context has no deadline.
const queryTimeout = 3 * time.Second

// Query asks the daemon for dataDir for its status.
func Query(ctx context.Context, dataDir string) (*Status, error) {
	path := filepath.Join(dataDir, SocketFile)
	conn, err := dialUnix(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w for %s", ErrNotRunning, dataDir)
		}
		return nil, fmt.Errorf("query daemon: %w", err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(queryTimeout)
	}
	data, err := readAll(conn, deadline)
	if err != nil {
		return nil, fmt.Errorf("read daemon status: %w", err)
	}
	var st Status
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read daemon status: %w", err)
	}
	return &st, nil
}
