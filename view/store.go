package view

import (
	"context"
	"strings"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// The view's use of the bottle store, in one place: find a session by
// its id or the start of one (as `bottled show`), read its bottle brought
// up to date first (as `bottled show` and the MCP server), or as it is on
// disk (after a change the watcher saw, which is the newest there is).

// store is the data directory's bottles, at the view's clock and zone.
func (s *Server) store() *bottles.Store {
	return bottles.Open(s.cfg.DataDir, s.cfg.Now, s.cfg.Location)
}

// findSession resolves a session id or the start of one
// (bottles.Store.FindSession); a start several sessions have is an
// *bottles.AmbiguousError.
func (s *Server) findSession(arg string) (string, error) {
	return s.store().FindSession(s.cfg.ClaudeDir, arg)
}

// ensure reads the bottle of id, rendered first if it is stale or missing
// (bottles.Store.EnsureRead); when that fails the bottle on disk comes
// with the error, if there is one.
func (s *Server) ensure(ctx context.Context, id string) (*bottles.Current, error) {
	return s.store().EnsureRead(ctx, bottles.ReadRequest{SessionID: id, ClaudeDir: s.cfg.ClaudeDir,
		Timeout: s.cfg.RenderTimeout, Rules: s.rules()})
}

// rules are the data directory's redaction rules, read for each render
// (the view logs a patterns file it cannot use: bottles.LoadRulesOrWarn).
func (s *Server) rules() *redact.Rules { return bottles.LoadRulesOrWarn(s.cfg.DataDir, s.cfg.Log) }

// onDisk reads the bottle of id as it is: the live one, else its newest
// archived one; nil if it has neither.
func (s *Server) onDisk(id string) (*bottles.Current, error) {
	st := s.store()
	cur, err := st.ReadCurrent(id)
	if cur != nil || err != nil {
		return cur, err
	}
	path := st.ArchivedPath(id)
	if path == "" {
		return nil, nil
	}
	cur, err = bottles.ReadBottle(path)
	if cur != nil {
		cur.Archived = true
	}
	return cur, err
}

// bottlesDirs are the directories whose changes move the pages: the
// bottles and the archive.
func (s *Server) bottlesDirs() (dir, archive string) {
	dir = bottles.BottlesDir(s.cfg.DataDir)
	return dir, bottles.ArchiveDir(dir)
}

// sessionOfFile is the session a file in the bottles directory (or, when
// archived, in the archive) is the bottle of, "" if it is none.
func sessionOfFile(name string, archived bool) string {
	if archived {
		id, _ := bottles.ArchivedSession(name)
		return id
	}
	if id, ok := strings.CutSuffix(name, ".md"); ok && sources.ValidSessionID(id) {
		return id
	}
	return ""
}
