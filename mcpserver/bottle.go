package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// store is the data directory's bottles, at the server's clock and time
// zone.
func (s *Server) store() *bottles.Store {
	return bottles.Open(s.cfg.DataDir, s.cfg.Now, s.cfg.Location)
}

// findBottle resolves the session a read names ("" for this session,
// current; else an id or the start of one, bottles.Store.FindSession) and
// returns its id and its bottle as bottles.Store.EnsureRead gives it:
// rendered first, within the render timeout, when it is stale or missing
// and its session was not cleared.
func (s *Server) findBottle(ctx context.Context, arg, current string) (string, *bottles.Current, error) {
	store := s.store()
	id := arg
	switch {
	case arg != "":
		var err error
		if id, err = store.FindSession(s.cfg.ClaudeDir, arg); err != nil {
			return "", nil, err
		}
	case current == "":
		return "", nil, errors.New("bottled does not know which session this is (the server was not started by Claude Code): give a session id")
	case !sources.ValidSessionID(current):
		return "", nil, fmt.Errorf("invalid session id %q", current)
	default:
		id = current
	}
	cur, err := store.EnsureRead(ctx, bottles.ReadRequest{SessionID: id, ClaudeDir: s.cfg.ClaudeDir, Timeout: s.cfg.RenderTimeout, Rules: s.rules()})
	if err != nil {
		return "", nil, err
	}
	return id, cur, nil
}

// rules are the data directory's redaction rules, read for each render
// (the server logs a patterns file it cannot use: bottles.LoadRulesOrWarn).
func (s *Server) rules() *redact.Rules { return bottles.LoadRulesOrWarn(s.cfg.DataDir, s.cfg.Log) }
