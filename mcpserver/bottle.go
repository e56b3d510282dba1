package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/sources"
)

// findBottle resolves the session a read names ("" for this session,
// current; else an id or the start of one, bottles.Store.FindSession) and
// returns its id and its bottle as bottles.Reader.EnsureRead gives it:
// rendered first, within the render timeout, when it is stale or missing
// and its session was not cleared.
func (s *Server) findBottle(ctx context.Context, arg, current string) (string, *bottles.Current, error) {
	id := arg
	switch {
	case arg != "":
		var err error
		if id, err = s.cfg.FindSession(arg); err != nil {
			return "", nil, err
		}
	case current == "":
		return "", nil, errors.New("bottled does not know which session this is (the server was not started by Claude Code): give a session id")
	case !sources.ValidSessionID(current):
		return "", nil, fmt.Errorf("invalid session id %q", current)
	default:
		id = current
	}
	cur, err := s.cfg.EnsureRead(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return id, cur, nil
}
