package index

import (
	"fmt"
	"hash/fnv"
	"path"
	"strconv"
	"strings"

	"github.com/bottled-dev/bottled/render"
)

// A search in a project must not read through every match in other
// projects, so each indexed block also carries words naming its project in
// a second column, "scope", and the project is part of the FTS5 query:
// FTS5 then intersects the word's matches with the project's instead of
// bottled filtering them one by one. The words are hashes, which nothing
// a user types can produce, and the user's words are matched against the
// body column only.

// scopeWords are the scope column of a block of a bottle of project: one
// word per directory from the project up to the root, so that a search in
// a directory finds the sessions of the directories under it, or, for a
// reconstructed bottle, the project's name as claude-mem records it (the
// base name of its directory).
func scopeWords(project string, mode render.Mode) string {
	if project == "" {
		return ""
	}
	if mode == render.ModeReconstructed {
		return nameWord(project)
	}
	var words []string
	for dir := cleanDir(project); ; dir = path.Dir(dir) {
		words = append(words, dirWord(dir))
		if dir == "/" || dir == "." {
			break
		}
	}
	return strings.Join(words, " ")
}

// scopeQuery is the FTS5 condition on the scope column that keeps the
// blocks of the sessions of dir (cleaned) and the directories under it.
func scopeQuery(dir string) string {
	return `{scope}: ("` + dirWord(dir) + `" OR "` + nameWord(path.Base(dir)) + `")`
}

// dir is the project directory the scope keeps, cleaned, or "" to keep
// every project: the root, which every project is under, is no filter.
func (s Scope) dir() string {
	if s.Project == "" {
		return ""
	}
	if dir := cleanDir(s.Project); dir != "/" {
		return dir
	}
	return ""
}

// shownSQL is the condition on the bottles b that stand for their sessions
// in a search or a list (see roleCurrent); its argument is Scope.Archived.
var shownSQL = fmt.Sprintf(`(b.role = %d OR (? AND b.role = %d))`, roleCurrent, roleArchived)

// scopeSQL is the condition on the bottles b that a Scope keeps, the
// list's counterpart of the scope words; its arguments come from args.
var scopeSQL = shownSQL + `
	AND (? = '' OR b.project = ? OR substr(b.project, 1, length(?) + 1) = ? || '/' OR (b.mode = '` + string(render.ModeReconstructed) + `' AND b.project = ?))`

func (s Scope) args() []any {
	dir, base := s.dir(), ""
	if dir != "" {
		base = path.Base(dir) // reconstructed bottles name the project as claude-mem does
	}
	return []any{s.Archived, dir, dir, dir, dir, base}
}

func cleanDir(dir string) string { return path.Clean("/" + strings.TrimPrefix(dir, "/")) }

func dirWord(dir string) string   { return "p" + hash64(dir) }
func nameWord(name string) string { return "n" + hash64(name) }

func hash64(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}
