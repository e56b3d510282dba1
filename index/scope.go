package index

import (
	"hash/fnv"
	"path"
	"strconv"
	"strings"

	"bottled/render"
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
// blocks of the sessions of dir and the directories under it.
func scopeQuery(dir string) string {
	dir = cleanDir(dir)
	return `{scope}: ("` + dirWord(dir) + `" OR "` + nameWord(path.Base(dir)) + `")`
}

func cleanDir(dir string) string { return path.Clean("/" + strings.TrimPrefix(dir, "/")) }

func dirWord(dir string) string   { return "p" + hash64(dir) }
func nameWord(name string) string { return "n" + hash64(name) }

func hash64(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}
