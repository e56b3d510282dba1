// Package mcpserver is bottled's MCP server (`bottled mcp`), one more of
// bottled's interfaces to Claude Code beside the hooks: three small tools
// through which the model reads a bottle in parts that each fit one tool
// result, searches every bottle, and lists sessions. Claude Code starts it
// on stdio, one per Claude Code process.
//
// It reads bottles (rendering a stale or missing one first, as the
// SessionStart hook does) and the search index; it never writes anything
// but bottles and the index.
package mcpserver

import (
	"context"
	"errors"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/sources"
)

// Tunables.
const (
	// DefaultRenderTimeout bounds rendering a stale or missing bottle
	// before a read, as the SessionStart hook's inline render.
	DefaultRenderTimeout = 5 * time.Second
	// indexWait is how long a search waits for the index to open before
	// saying it is not ready yet: long enough for the common case, short
	// of Claude Code's patience.
	indexWait = 15 * time.Second
)

// Config is what the server needs to know. Its Reader's Location is the
// zone of the times it shows and reads, its Log stderr only (stdout
// carries the protocol), its RenderTimeout DefaultRenderTimeout if 0.
type Config struct {
	bottles.Reader
	// Launched is the session Claude Code started the server in
	// (CLAUDE_CODE_SESSION_ID); "" when not started by Claude Code.
	Launched string
	// Project is the directory of "this project" (CLAUDE_PROJECT_DIR,
	// else the working directory).
	Project string
	Version string
}

// Server serves bottled's tools.
type Server struct {
	cfg     Config
	tracker *sources.SessionTracker

	// The index is opened in the background, on the first search or
	// list, and an unfinished build of it continued there (Index.Build)
	// while the tools answer from it. mu guards attempt (the opening in
	// flight or the last one) and closed. A failed attempt is replaced by
	// a new one at the next call, so that a fault fixed meanwhile (a full
	// disk) does not leave search broken for the rest of the Claude Code
	// session. openCtx ends the openers (and their builds), which opener
	// counts, at Close.
	mu      sync.Mutex
	attempt *openAttempt
	closed  bool
	openCtx context.Context
	cancel  context.CancelFunc
	opener  sync.WaitGroup
}

// openAttempt is one opening of the index: done is closed once ix or err
// is set.
type openAttempt struct {
	done chan struct{}
	ix   *index.Index
	err  error
}

// failed reports whether the attempt is over and failed.
func (a *openAttempt) failed() bool {
	select {
	case <-a.done:
		return a.err != nil
	default:
		return false
	}
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	cfg.Defaults(DefaultRenderTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{cfg: cfg, tracker: sources.NewSessionTracker(cfg.ClaudeDir, cfg.Launched), openCtx: ctx, cancel: cancel}
}

// Run serves the tools on t until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	defer s.Close()
	return s.MCP().Run(ctx, t)
}

// MCP returns the protocol server with bottled's tools.
func (s *Server) MCP() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "bottled", Version: s.cfg.Version}, &sdk.ServerOptions{Logger: s.cfg.Log})
	sdk.AddTool(srv, readTool, s.read)
	sdk.AddTool(srv, searchTool, s.search)
	sdk.AddTool(srv, sessionsTool, s.sessions)
	return srv
}

// Close stops the index opener and closes the index.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.opener.Wait()
	if a := s.attempt; a != nil && a.ix != nil {
		a.ix.Close()
	}
}

// current is the session the server runs in now, "" if unknown.
func (s *Server) current() string { return s.tracker.Current() }

// errNotReady says the index is still being built.
var errNotReady = errors.New("the search index is still being built from the bottles; try again in a minute")

// errClosed answers a call that comes after Close.
var errClosed = errors.New("server closed")

// index returns the search index, opening it on first use, or again after
// an opening failed. It waits for the opening at most indexWait (or until
// ctx ends).
func (s *Server) index(ctx context.Context) (*index.Index, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	a := s.attempt
	if a == nil || a.failed() {
		a = &openAttempt{done: make(chan struct{})}
		s.attempt = a
		s.opener.Go(func() { s.openIndex(s.openCtx, a) })
	}
	s.mu.Unlock()
	select {
	case <-a.done:
		return a.ix, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(indexWait):
		return nil, errNotReady
	}
}

// openIndex opens the index for attempt a (index.OpenForReader: searches
// answer from the newest sessions indexed so far while it is being built),
// then finishes its build if it is unfinished (waiting while another
// process builds it), until ctx ends.
func (s *Server) openIndex(ctx context.Context, a *openAttempt) {
	a.ix, a.err = index.OpenForReader(ctx, s.cfg.DataDir, s.cfg.Location, s.cfg.Log)
	close(a.done)
	if a.err == nil {
		a.ix.FinishBuild(ctx, s.cfg.Log)
	}
}
