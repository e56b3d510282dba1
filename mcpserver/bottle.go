package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"bottled/render"
	"bottled/sources"
)

// minPrefix is the shortest session id prefix accepted for a session.
const minPrefix = 6

// bottleFile is a bottle found for a read.
type bottleFile struct {
	session  string
	path     string
	archived bool
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
	if path := render.ArchivedPath(dir, id); path != "" && !exists(render.BottlePath(dir, id)) {
		// Cleared: the archive is what there is, unless the session
		// was resumed since (then a render brings the bottle back).
		if b, err := s.fresh(ctx, id); err == nil && b != nil {
			return b, nil
		}
		return &bottleFile{session: id, path: path, archived: true}, nil
	}
	b, err := s.fresh(ctx, id)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("no bottle for session %s: it has no transcript with messages and no claude-mem records", id)
	}
	return b, nil
}

// fresh makes sure the bottle of session id reflects its sources,
// rendering it within the render timeout if not, and returns it (nil when
// there is nothing to render).
func (s *Server) fresh(ctx context.Context, id string) (*bottleFile, error) {
	dir := render.BottlesDir(s.cfg.DataDir)
	transcript, _ := sources.FindTranscript(s.cfg.ClaudeDir, id)
	db, dbErr := sources.OpenMemoryDB(ctx, sources.MemoryFile(s.cfg.DataDir))
	if dbErr == nil {
		defer db.Close()
	} else {
		db = nil
	}
	if f, _, _, err := render.Check(dir, id, transcript, render.CursorNow(ctx, db, id), render.VerifyHook); err == nil && f == render.Fresh {
		return &bottleFile{session: id, path: render.BottlePath(dir, id)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RenderTimeout)
	defer cancel()
	req := render.Request{SessionID: id, Transcript: transcript, ClaudeDir: s.cfg.ClaudeDir, Memory: db, MemoryErr: dbErr}
	b, err := render.FromDisk(ctx, req, s.cfg.Now(), s.cfg.Location)
	if errors.Is(err, render.ErrNothing) {
		if exists(render.BottlePath(dir, id)) {
			return &bottleFile{session: id, path: render.BottlePath(dir, id)}, nil
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out, err := render.Write(dir, b)
	if err != nil {
		return nil, err
	}
	return &bottleFile{session: id, path: out.Path(dir, id), archived: out == render.Archived}, nil
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
			if !ok || strings.HasPrefix(name, ".") {
				continue
			}
			if sub != dir {
				_, name, _ = strings.Cut(name, "-") // <UTC time>-<id>
			}
			add(name)
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
