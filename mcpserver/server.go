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
	"fmt"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"bottled/index"
	"bottled/sources"
)

// Tunables.
const (
	// DefaultRenderTimeout bounds rendering a stale or missing bottle
	// before a read, as the SessionStart hook's inline render.
	DefaultRenderTimeout = 5 * time.Second
	// indexWait is how long a search waits for the index to open (or be
	// built) before saying it is not ready yet: long enough for the
	// common case, short of Claude Code's patience.
	indexWait = 15 * time.Second
)

// Config is what the server needs to know.
type Config struct {
	ClaudeDir string
	DataDir   string
	// Launched is the session Claude Code started the server in
	// (CLAUDE_CODE_SESSION_ID); "" when not started by Claude Code.
	Launched string
	// Project is the directory of "this project" (CLAUDE_PROJECT_DIR,
	// else the working directory).
	Project  string
	Version  string
	Location *time.Location // times shown and read (time.Local if nil)
	Now      func() time.Time
	Log      *slog.Logger // stderr only: stdout carries the protocol
	// RenderTimeout bounds an inline render (DefaultRenderTimeout if 0).
	RenderTimeout time.Duration
}

func (c *Config) defaults() {
	if c.Location == nil {
		c.Location = time.Local
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.RenderTimeout <= 0 {
		c.RenderTimeout = DefaultRenderTimeout
	}
}

// Server serves bottled's tools.
type Server struct {
	cfg     Config
	tracker *sources.SessionTracker

	// The index is opened (and built if need be) once, in the
	// background, on the first search or list; ready is closed when
	// openIndex has set ix or ixErr. The opener is stopped by Close.
	once   sync.Once
	ready  chan struct{}
	ix     *index.Index
	ixErr  error
	cancel context.CancelFunc
	opener sync.WaitGroup
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	cfg.defaults()
	return &Server{cfg: cfg, tracker: sources.NewSessionTracker(cfg.ClaudeDir, cfg.Launched), ready: make(chan struct{})}
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
	// Either the opener was started (and s.cancel is set) or it never
	// will be.
	s.once.Do(func() {
		s.ixErr = errors.New("server closed")
		close(s.ready)
	})
	if s.cancel != nil {
		s.cancel()
	}
	s.opener.Wait()
	if s.ix != nil {
		s.ix.Close()
	}
}

// current is the session the server runs in now, "" if unknown.
func (s *Server) current() string { return s.tracker.Current() }

// errNotReady says the index is still being built.
var errNotReady = errors.New("the search index is still being built from the bottles; try again in a minute")

// index returns the search index, opening it on first use. It waits for
// the opening at most indexWait (or until ctx ends).
func (s *Server) index(ctx context.Context) (*index.Index, error) {
	s.once.Do(func() {
		octx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		s.opener.Go(func() { s.openIndex(octx) })
	})
	select {
	case <-s.ready:
		return s.ix, s.ixErr
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(indexWait):
		return nil, errNotReady
	}
}

func (s *Server) openIndex(ctx context.Context) {
	defer close(s.ready)
	ix, err := index.Open(ctx, s.cfg.DataDir, index.Options{Location: s.cfg.Location})
	if err != nil {
		s.ixErr = fmt.Errorf("open the search index: %w", err)
		return
	}
	// Without a watch every query looks at every bottle's file; slower,
	// still right.
	if err := ix.Watch(); err != nil {
		s.cfg.Log.Warn("watch bottles", "err", err)
	}
	s.ix = ix
}
