package view

import (
	"strings"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/sources"
)

// The view finds a session by its id or the start of one, and reads its
// bottle brought up to date first, through its bottles.Reader (as the MCP
// server); it also reads a bottle as it is on disk (after a change the
// watcher saw, which is the newest there is).

// onDisk reads the bottle of id as it is: the live one, else its newest
// archived one; nil if it has neither.
func (s *Server) onDisk(id string) (*bottles.Current, error) { return s.cfg.Store().ReadLatest(id) }

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
