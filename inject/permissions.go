package inject

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bottled-dev/bottled/bottles"
)

// ReadAccess is the permission bottled adds to Claude Code's settings so
// that the model can Read the bottle a pointer names. Bottles live outside
// every project, and Claude Code refuses a Read there (headless) or stops
// for a dialog (interactive) unless a rule allows it.
//
// The narrowest grant that works in every permission mode is an allow
// rule for the bottles directory: Read(~/<dir>/**) under the home
// directory, Read(//<absolute dir>/**) elsewhere (a single leading slash
// would mean relative to the settings file). Where the settings set
// permissions.blockReadsOutsideWorkingDirectories, allow rules no longer
// apply to reads outside the working directories, and the bottles
// directory is added to permissions.additionalDirectories instead, which
// makes it a working directory of every session: wider, since then it is
// treated like part of the project.
type ReadAccess struct {
	Dir  string // the bottles directory, absolute
	Home string // the user's home directory ("" if unknown)
}

// Rule is the allow rule for the bottles directory, or "" when the path
// cannot be written as a rule (it holds pattern characters).
func (a ReadAccess) Rule() string {
	dir := filepath.ToSlash(filepath.Clean(a.Dir))
	if strings.ContainsAny(dir, "*?[]{}()\\!\n\r") {
		return ""
	}
	if a.Home != "" {
		home := filepath.ToSlash(filepath.Clean(a.Home))
		if rel, ok := strings.CutPrefix(dir, home+"/"); ok && home != "/" {
			return "Read(~/" + rel + "/**)"
		}
	}
	return "Read(/" + dir + "/**)"
}

// Grant describes what GrantRead did or would do, for install to report.
type Grant struct {
	// How is "rule" (an allow rule) or "directory" (additionalDirectories).
	How string
	// Entry is the rule or directory.
	Entry string
	// Why explains a directory grant.
	Why string
}

// GrantRead returns settings that let Claude Code read the bottles
// directory without asking, removing bottled's grants for earlier
// bottles directories (olds), and whether that changed anything.
func GrantRead(settings []byte, a ReadAccess, olds []ReadAccess) ([]byte, bool, Grant, error) {
	root, err := parseSettings(settings)
	if err != nil {
		return nil, false, Grant{}, err
	}
	perms := root.objectAt("permissions")
	for _, old := range olds {
		if old.Dir != a.Dir {
			revoke(perms, old)
		}
	}
	g := Grant{How: "rule", Entry: a.Rule()}
	switch {
	case flag(perms, "blockReadsOutsideWorkingDirectories"):
		g = Grant{How: "directory", Entry: a.Dir, Why: "permissions.blockReadsOutsideWorkingDirectories is set, so allow rules do not apply to reads outside the working directories"}
	case g.Entry == "":
		g = Grant{How: "directory", Entry: a.Dir, Why: "the bottles directory's path holds characters that a permission rule would read as a pattern"}
	}
	key := "allow"
	if g.How == "directory" { // a rule would not apply
		key = "additionalDirectories"
		dropString(perms, "allow", a.Rule())
	} else {
		dropString(perms, "additionalDirectories", a.Dir)
	}
	list := perms.arrayAt(key)
	if !slices.Contains(stringList(list), g.Entry) {
		list.arr = append(list.arr, str(g.Entry))
	}
	out, changed, err := encodeChanged(settings, root)
	return out, changed, g, err
}

// RevokeRead returns settings without bottled's grant for the bottles
// directory (rule or directory), removing the lists and the permissions
// object it leaves empty, and whether that changed anything.
func RevokeRead(settings []byte, a ReadAccess) ([]byte, bool, error) {
	return editPermissions(settings, func(perms *node) { revoke(perms, a) })
}

// editPermissions applies drop to the settings' permissions object, if
// there is one, and removes the lists and the object it leaves empty.
func editPermissions(settings []byte, drop func(perms *node)) ([]byte, bool, error) {
	return removeWithin(settings, "permissions", func(perms *node) {
		drop(perms)
		for _, key := range []string{"allow", "additionalDirectories"} {
			if l := perms.get(key); l != nil && l.kind == kindArray && len(l.arr) == 0 {
				perms.delete(key)
			}
		}
	})
}

// revoke removes a's rule from permissions.allow and its directory from
// permissions.additionalDirectories.
func revoke(perms *node, a ReadAccess) {
	dropString(perms, "allow", a.Rule())
	dropString(perms, "additionalDirectories", a.Dir)
}

// dropString removes entry from the list under key.
func dropString(perms *node, key, entry string) {
	l := perms.get(key)
	if l == nil || l.kind != kindArray || entry == "" {
		return
	}
	kept := l.arr[:0]
	for _, v := range l.arr {
		if s, ok := stringOf(v); !ok || s != entry {
			kept = append(kept, v)
		}
	}
	l.arr = kept
}

// CheckRead tells whether the settings still let Claude Code read the
// bottles directory without asking: bottled's rule, a rule for all Reads,
// or an additional directory that holds it (the only grant that works
// under blockReadsOutsideWorkingDirectories). The reason says what is
// missing.
func CheckRead(settings []byte, a ReadAccess) (bool, string) {
	root, err := parseSettings(settings)
	if err != nil {
		return false, err.Error()
	}
	return checkRead(root, a)
}

func checkRead(root *node, a ReadAccess) (bool, string) {
	perms := root.get("permissions")
	if perms == nil || perms.kind != kindObject {
		perms = &node{kind: kindObject}
	}
	for _, d := range stringList(perms.get("additionalDirectories")) {
		if within(a.Dir, expandHome(d, a.Home)) {
			return true, ""
		}
	}
	if flag(perms, "blockReadsOutsideWorkingDirectories") {
		return false, fmt.Sprintf("permissions.blockReadsOutsideWorkingDirectories is set and no additional directory holds %s: run bottled install", a.Dir)
	}
	for _, r := range stringList(perms.get("allow")) {
		if r == "Read" || r == "Read(**)" || (r == a.Rule() && r != "") {
			return true, ""
		}
	}
	if a.Rule() == "" {
		return false, fmt.Sprintf("no additional directory holds %s: run bottled install", a.Dir)
	}
	return false, fmt.Sprintf("permissions.allow has no %s: Claude Code will ask before the model reads a bottle; run bottled install", a.Rule())
}

// RegisteredDataDirs returns the --data-dir of every bottled hook the
// settings register: an install with another data directory leaves the
// earlier one's grant behind unless it is removed with its hooks.
func RegisteredDataDirs(settings []byte) []string {
	root, err := parseSettings(settings)
	if err != nil {
		return nil
	}
	return registeredDataDirs(root)
}

func registeredDataDirs(root *node) []string {
	var dirs []string
	for _, group := range ourGroups(root) {
		for _, h := range group.hooks.arr {
			if !isOurs(h, group.sub) {
				continue
			}
			cmd, _ := stringOf(h.get("command"))
			words := shellSplit(cmd)
			for i := 0; i+1 < len(words); i++ {
				if words[i] == "--data-dir" && !slices.Contains(dirs, words[i+1]) {
					dirs = append(dirs, words[i+1])
				}
			}
		}
	}
	return dirs
}

// flag reports whether key is true in the object.
func flag(obj *node, key string) bool {
	v := obj.get(key)
	return v != nil && v.kind == kindRaw && string(v.raw) == "true"
}

func stringOf(n *node) (string, bool) {
	if n == nil || n.kind != kindRaw {
		return "", false
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return "", false
	}
	return s, true
}

// stringList returns the string elements of an array node.
func stringList(n *node) []string {
	if n == nil || n.kind != kindArray {
		return nil
	}
	var out []string
	for _, v := range n.arr {
		if s, ok := stringOf(v); ok {
			out = append(out, s)
		}
	}
	return out
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Installation is what Claude Code's settings say about bottled, for
// status: a pointer is useless if the model cannot read the bottle it
// names, and no pointer comes without the hooks.
type Installation struct {
	Settings string `json:"settings"`
	// Hooks: bottled's hooks are registered, for this data directory.
	Hooks bool `json:"hooks"`
	// ReadAccess: the settings let Claude Code read the bottles without
	// asking.
	ReadAccess bool `json:"readAccess"`
	// Problem says what is wrong, and what to do, if anything is.
	Problem string `json:"problem,omitempty"`
}

// CheckInstallation reads the settings file at path and reports whether
// bottled is installed there for dataDir.
func CheckInstallation(path, dataDir, home string) Installation {
	in := Installation{Settings: path}
	file, err := settingsTarget(path)
	var snap snapshot
	if err == nil {
		snap, err = readSettings(file) // blocks on nothing, follows settings.json's own link
	}
	if err != nil {
		in.Problem = err.Error()
		return in
	}
	root, err := parseSettings(snap.data)
	if err != nil {
		in.Problem = err.Error()
		return in
	}
	dirs := registeredDataDirs(root)
	for _, d := range dirs {
		in.Hooks = in.Hooks || filepath.Clean(d) == filepath.Clean(dataDir)
	}
	in.ReadAccess, in.Problem = checkRead(root, ReadAccess{Dir: bottles.BottlesDir(dataDir), Home: home})
	switch {
	case len(dirs) == 0:
		in.Problem = "bottled's hooks are not registered: run bottled install"
	case !in.Hooks:
		in.Problem = fmt.Sprintf("the hooks are registered for the data directory %s, not %s: run bottled install with the data directory to use", strings.Join(dirs, ", "), dataDir)
	}
	return in
}

// MCPTools are the names of bottled's MCP tools (package mcpserver) as
// Claude Code calls them: mcp__<server>__<tool>.
var MCPTools = []string{"mcp__" + MCPServer + "__read", "mcp__" + MCPServer + "__search", "mcp__" + MCPServer + "__sessions"}

// GrantMCPTools returns settings whose permissions.allow lets the model
// use bottled's MCP tools without asking: `claude -p` refuses an MCP tool
// call that no rule allows, and the interactive screen asks. The tools
// only read bottles (read may render a stale one first, as the hook
// does). Each tool is named: a rule for the whole server would also allow
// tools a later bottled adds.
func GrantMCPTools(settings []byte) ([]byte, bool, error) {
	root, err := parseSettings(settings)
	if err != nil {
		return nil, false, err
	}
	allow := root.objectAt("permissions").arrayAt("allow")
	have := stringList(allow)
	for _, t := range MCPTools {
		if !slices.Contains(have, t) {
			allow.arr = append(allow.arr, str(t))
		}
	}
	return encodeChanged(settings, root)
}

// RevokeMCPTools returns settings without the rules GrantMCPTools adds.
func RevokeMCPTools(settings []byte) ([]byte, bool, error) {
	return editPermissions(settings, func(perms *node) {
		for _, t := range MCPTools {
			dropString(perms, "allow", t)
		}
	})
}
