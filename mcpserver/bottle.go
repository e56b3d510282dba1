package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// minPrefix is the shortest session id prefix accepted for a session.
const minPrefix = 6

// bottleFile is a bottle found for a read, with the bytes and state read
// from it together.
type bottleFile struct {
	session  string
	path     string
	archived bool
	data     []byte
	state    *render.State
}

func fileOf(session string, c *render.Current) *bottleFile {
	return &bottleFile{session: session, path: c.Path, archived: c.Archived, data: c.Data, state: c.State}
}

// findBottle resolves the session a read names ("" for this session,
// current) and returns its bottle, rendered first when it is stale or
// missing and its session was not cleared.
func (s *Server) findBottle(ctx context.Context, arg, current string) (*bottleFile, error) {
	id := arg
	if id == "" {
		if id = current; id == "" {
			return nil, errors.New("bottled does not know which session this is (the server was not started by Claude Code): give a session id")
		}
	}
	dir := render.BottlesDir(s.cfg.DataDir)
	if !sources.ValidSessionID(id) {
		return nil, fmt.Errorf("invalid session id %q", id)
	}
	if !exists(render.BottlePath(dir, id)) && render.ArchivedPath(dir, id) == "" {
		if full, err := s.byPrefix(dir, id); err == nil {
			id = full
		} else if arg != "" && !s.hasTranscript(id) {
			return nil, err
		}
	}
	return s.ensure(ctx, id)
}

// ensure returns the session's bottle as the SessionStart hook would point
// to it (render.Ensure): fresh, rendered within the render timeout if
// stale or missing, or archived if the session was cleared and gained
// nothing since. When there is nothing to render now, the bottle there is
// is read as it is.
func (s *Server) ensure(ctx context.Context, id string) (*bottleFile, error) {
	dir := render.BottlesDir(s.cfg.DataDir)
	transcript, _ := sources.FindTranscript(s.cfg.ClaudeDir, id)
	db, dbErr := sources.OpenMemoryDB(ctx, sources.MemoryFile(s.cfg.DataDir))
	if dbErr == nil {
		defer db.Close()
	} else {
		db = nil
	}
	cur, err := render.ReadCurrent(dir, id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RenderTimeout)
	defer cancel()
	req := render.Request{SessionID: id, Transcript: transcript, ClaudeDir: s.cfg.ClaudeDir, Memory: db, MemoryErr: dbErr}
	b, _, err := render.Ensure(ctx, dir, cur, req, render.VerifyHook, s.cfg.Now, s.cfg.Location)
	switch {
	case err == nil:
		return fileOf(id, b), nil
	case !errors.Is(err, render.ErrNothing):
		return nil, err
	case cur != nil:
		return fileOf(id, cur), nil
	}
	// Nothing to render: the archived bottle as it is. Neither it nor a
	// live bottle is read through a symbolic link (which bottled never
	// makes, and which may point anywhere), as the index takes none in.
	if arch := render.ArchivedPath(dir, id); arch != "" {
		c, err := render.ReadBottle(arch)
		if err != nil || c == nil {
			return nil, fmt.Errorf("archived bottle of session %s: %w", id, cmp.Or(err, fs.ErrNotExist))
		}
		c.Archived = true
		return fileOf(id, c), nil
	}
	if _, err := render.ReadBottle(render.BottlePath(dir, id)); errors.Is(err, render.ErrNotRegular) {
		return nil, fmt.Errorf("no bottle for session %s: %w", id, err)
	}
	return nil, fmt.Errorf("no bottle for session %s: it has no transcript with messages and no claude-mem records", id)
}

// byPrefix finds the one session whose bottle's id starts with prefix.
func (s *Server) byPrefix(dir, prefix string) (string, error) {
	if len(prefix) < minPrefix {
		return "", fmt.Errorf("no bottle for session %q", prefix)
	}
	var found []string
	add := func(id string) {
		if strings.HasPrefix(id, prefix) && !slices.Contains(found, id) {
			found = append(found, id)
		}
	}
	for _, sub := range []string{dir, render.ArchiveDir(dir)} {
		entries, _ := os.ReadDir(sub)
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if sub != dir {
				name, ok = render.ArchivedSession(e.Name())
			}
			if ok && !strings.HasPrefix(name, ".") {
				add(name)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no bottle for session %q", prefix)
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", fmt.Errorf("%q names %d sessions (%s): give more of the id", prefix, len(found), strings.Join(found[:min(len(found), 4)], ", "))
}

func (s *Server) hasTranscript(id string) bool {
	_, err := sources.FindTranscript(s.cfg.ClaudeDir, id)
	return err == nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
