package index

import (
	"context"
	"fmt"
	"hash/fnv"
	"path"
	"strconv"
	"strings"

	"github.com/ncruces/go-sqlite3"

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

// projectScope returns scope with its directory made the project it is in (see
// Scope.Project), and whether it is in one. Called with mu held.
func (ix *Index) projectScope(scope Scope) (Scope, bool, error) {
	dir := scope.dir()
	if dir == "" {
		return scope, false, nil
	}
	for d := dir; d != "/"; d = path.Dir(d) {
		found := false
		err := ix.query(`SELECT 1 FROM bottles WHERE project = ? LIMIT 1`, func(*sqlite3.Stmt) error {
			found = true
			return nil
		}, d)
		if err != nil {
			return scope, false, err
		}
		if found {
			scope.Project = d
			return scope, true, nil
		}
	}
	scope.Project = dir
	return scope, false, nil
}

// Extent is what a search or a list in a scope covers, for what is said
// with its results: what was searched, and how to widen it.
type Extent struct {
	// Project is the directory whose sessions were searched (see
	// Scope.Project), "" for every project.
	Project string
	// InProject reports whether Project is a directory sessions were
	// started in; if not, no session was started in the scope's directory
	// or above it, and the sessions under it were searched.
	InProject bool
	// Sessions counts the sessions in scope (time bounds aside), Cleared
	// the cleared sessions of the project left out (Scope.Archived unset),
	// All the sessions of every project (cleared ones as Scope.Archived
	// says).
	Sessions, Cleared, All int
	// Build is how far the index got, when it is still being built (nil
	// once it is complete): searches cover the bottles indexed so far.
	Build *BuildState
}

// Extent reports what a search or a list in scope covers, as the index
// knows it (the query before brought it up to date).
func (ix *Index) Extent(ctx context.Context, scope Scope) (Extent, error) {
	var ext Extent
	err := ix.do(ctx, func() error {
		in, ok, err := ix.projectScope(scope)
		if err != nil {
			return err
		}
		ext = Extent{Project: in.dir(), InProject: ok}
		count := func(n *int, sql string, args ...any) error {
			return ix.query(sql, func(s *sqlite3.Stmt) error {
				*n = s.ColumnInt(0)
				return nil
			}, args...)
		}
		if err := count(&ext.Sessions, `SELECT count(*) FROM bottles b WHERE `+scopeSQL, in.args()...); err != nil {
			return err
		}
		if err := count(&ext.All, `SELECT count(*) FROM bottles b WHERE `+shownSQL, in.Archived); err != nil {
			return err
		}
		if !in.Archived {
			cleared := in
			cleared.Archived = true
			var shown int
			if err := count(&shown, `SELECT count(*) FROM bottles b WHERE `+scopeSQL, cleared.args()...); err != nil {
				return err
			}
			ext.Cleared = shown - ext.Sessions
		}
		ext.Build, err = ix.buildState()
		return err
	})
	return ext, err
}
