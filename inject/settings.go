package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Registration is how bottled's hooks are registered in Claude Code's
// settings.json: under hooks.SessionStart with matcher "compact|resume"
// and hooks.SessionEnd with matcher "clear", each a command hook running
// the bottled binary.
type Registration struct {
	// Command is the bottled binary and its global flags, each one word.
	Command []string
	// MCPTools says that bottled's MCP server is registered with Claude
	// Code: the SessionStart hook then tells the model about its tools
	// (flag MCPToolsFlag), without reading Claude Code's state file at
	// every compaction.
	MCPTools bool
}

// MCPToolsFlag names the session-start hook's flag that says bottled's
// MCP tools are there to read and search bottles with.
const MCPToolsFlag = "mcp-tools"

// Matchers and timeouts of bottled's hooks. The SessionStart timeout
// leaves room for an inline render (DefaultTimeout) and process start;
// SessionEnd hooks share a short budget that a per-hook timeout raises.
const (
	startMatcher = "compact|resume"
	endMatcher   = "clear"
	startTimeout = 15
	endTimeout   = 5
)

func (r Registration) command(sub string) string {
	words := append(append([]string{}, r.Command...), "hook", sub)
	if sub == "session-start" && r.MCPTools {
		words = append(words, "--"+MCPToolsFlag)
	}
	for i, w := range words {
		words[i] = ShellQuote(w)
	}
	return strings.Join(words, " ")
}

// ValidSettings reports whether settings is a file bottled can edit: a
// JSON object whose values on the paths bottled reads and edits have the
// types Claude Code gives them, or nothing (no file). If not, the error is
// ErrMalformedSettings or a *TypeError, with the reason.
func ValidSettings(settings []byte) error {
	_, err := parseSettings(settings)
	return err
}

// ErrMalformedSettings reports a settings.json bottled will not touch.
var ErrMalformedSettings = errors.New("settings file is not a JSON object")

// TypeError reports a value on a path bottled reads or edits whose type is
// not the one Claude Code gives it there. bottled refuses the file rather
// than replace the user's value or misread it.
type TypeError struct {
	Key  string // where the value is: permissions.allow[1]
	Is   string // what it is: "a number"
	Want string // what Claude Code expects there: "a string"
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("%s is %s, where Claude Code expects %s: correct it and run bottled again", e.Key, e.Is, e.Want)
}

// checkShape refuses settings in which a value on a path bottled reads or
// edits has the wrong type: hooks and its SessionStart and SessionEnd
// lists down to each hook's command, permissions and its allow,
// additionalDirectories and blockReadsOutsideWorkingDirectories.
func checkShape(root *node) error {
	hooks, err := field(root, "", "hooks", kindObject, "an object")
	if err != nil {
		return err
	}
	for _, ev := range ourEvents {
		groups, err := field(hooks, "hooks", ev.event, kindArray, "an array of matcher groups")
		if err != nil {
			return err
		}
		for i, g := range elements(groups) {
			key := fmt.Sprintf("hooks.%s[%d]", ev.event, i)
			if err := expect(g, key, kindObject, "an object"); err != nil {
				return err
			}
			list, err := field(g, key, "hooks", kindArray, "an array of hooks")
			if err != nil {
				return err
			}
			for j, h := range elements(list) {
				key := fmt.Sprintf("%s.hooks[%d]", key, j)
				if err := expect(h, key, kindObject, "an object"); err != nil {
					return err
				}
				if _, err := field(h, key, "command", kindString, "a string"); err != nil {
					return err
				}
			}
		}
	}
	perms, err := field(root, "", "permissions", kindObject, "an object")
	if err != nil {
		return err
	}
	for _, key := range []string{"allow", "additionalDirectories"} {
		list, err := field(perms, "permissions", key, kindArray, "an array of strings")
		if err != nil {
			return err
		}
		for i, v := range elements(list) {
			if err := expect(v, fmt.Sprintf("permissions.%s[%d]", key, i), kindString, "a string"); err != nil {
				return err
			}
		}
	}
	_, err = field(perms, "permissions", "blockReadsOutsideWorkingDirectories", kindBool, "a boolean")
	return err
}

// Kinds of scalar that checkShape tells apart, beside kindObject and
// kindArray.
const (
	kindString nodeKind = -1 - iota
	kindBool
)

// field returns the value under key in obj (nil if obj or the value is
// absent), or a TypeError if it is not of the kind wanted.
func field(obj *node, at, key string, kind nodeKind, want string) (*node, error) {
	if obj == nil {
		return nil, nil
	}
	v := obj.get(key)
	if at != "" {
		key = at + "." + key
	}
	if v == nil {
		return nil, nil
	}
	return v, expect(v, key, kind, want)
}

func expect(v *node, key string, kind nodeKind, want string) error {
	if typeOf(v) != kind {
		return &TypeError{Key: key, Is: describe(v), Want: want}
	}
	return nil
}

// typeOf is the node's kind, with strings and booleans told apart from
// other scalars.
func typeOf(n *node) nodeKind {
	if n.kind != kindRaw || len(n.raw) == 0 {
		return n.kind
	}
	switch n.raw[0] {
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	}
	return kindRaw
}

// describe names the type of a JSON value, with its article.
func describe(n *node) string {
	switch n.kind {
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	switch {
	case len(n.raw) == 0:
		return "empty"
	case n.raw[0] == '"':
		return "a string"
	case n.raw[0] == 't' || n.raw[0] == 'f':
		return "a boolean"
	case n.raw[0] == 'n':
		return "null"
	}
	return "a number"
}

// elements are the elements of an array node, none for nil.
func elements(n *node) []*node {
	if n == nil {
		return nil
	}
	return n.arr
}

// RegisterHooks returns settings with bottled's hooks registered (an
// earlier registration, under any binary path, is replaced), and whether
// that changed anything. Everything else in the file is kept, keys in
// their order. Empty or missing settings give a new object.
func RegisterHooks(settings []byte, r Registration) ([]byte, bool, error) {
	root, err := parseSettings(settings)
	if err != nil {
		return nil, false, err
	}
	hooks := root.objectAt("hooks")
	for _, ev := range ourEvents {
		groups := hooks.arrayAt(ev.event)
		removeOurs(groups, ev.sub)
		groups.arr = append(groups.arr, &node{kind: kindObject, obj: []member{
			{"matcher", str(ev.matcher)},
			{"hooks", &node{kind: kindArray, arr: []*node{{kind: kindObject, obj: []member{
				{"type", str("command")},
				{"command", str(r.command(ev.sub))},
				{"timeout", &node{kind: kindRaw, raw: json.RawMessage(fmt.Sprint(ev.timeout))}},
			}}}}},
		}})
	}
	return encodeChanged(settings, root)
}

// UnregisterHooks returns settings without bottled's hooks, removing the
// groups, event lists and hooks object that are left empty, and whether
// that changed anything.
func UnregisterHooks(settings []byte) ([]byte, bool, error) {
	return removeWithin(settings, "hooks", func(hooks *node) {
		for _, ev := range ourEvents {
			groups := hooks.get(ev.event)
			if groups == nil || groups.kind != kindArray {
				continue
			}
			removeOurs(groups, ev.sub)
			if len(groups.arr) == 0 {
				hooks.delete(ev.event)
			}
		}
	})
}

// removeWithin is how bottled takes out what it added under one key of
// the settings: it applies remove to the object under key, if there is
// one, removes that object if remove left it empty, and returns the
// settings and whether that changed anything.
func removeWithin(settings []byte, key string, remove func(obj *node)) ([]byte, bool, error) {
	root, err := parseSettings(settings)
	if err != nil {
		return nil, false, err
	}
	obj := root.get(key)
	if obj == nil || obj.kind != kindObject {
		return settings, false, nil
	}
	remove(obj)
	if len(obj.obj) == 0 {
		root.delete(key)
	}
	return encodeChanged(settings, root)
}

// ourEvents are the hook events bottled registers, each with its matcher,
// the hook subcommand it runs and its timeout.
var ourEvents = []struct {
	event, matcher, sub string
	timeout             int
}{
	{"SessionStart", startMatcher, "session-start", startTimeout},
	{"SessionEnd", endMatcher, "session-end", endTimeout},
}

// hookGroup is the hooks list of one matcher group of an event bottled
// registers, with the subcommand bottled runs for that event.
type hookGroup struct {
	sub   string
	hooks *node
}

// ourGroups lists the matcher groups of the events bottled registers.
func ourGroups(root *node) []hookGroup {
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != kindObject {
		return nil
	}
	var out []hookGroup
	for _, ev := range ourEvents {
		groups := hooks.get(ev.event)
		if groups == nil || groups.kind != kindArray {
			continue
		}
		for _, g := range groups.arr {
			if hs := g.get("hooks"); g.kind == kindObject && hs != nil && hs.kind == kindArray {
				out = append(out, hookGroup{ev.sub, hs})
			}
		}
	}
	return out
}

// removeOurs drops bottled's hook entries for sub from a list of matcher
// groups, and the groups they leave empty.
func removeOurs(groups *node, sub string) {
	kept := groups.arr[:0]
	for _, g := range groups.arr {
		hs := g.get("hooks")
		if g.kind != kindObject || hs == nil || hs.kind != kindArray {
			kept = append(kept, g)
			continue
		}
		before := len(hs.arr)
		others := hs.arr[:0]
		for _, h := range hs.arr {
			if !isOurs(h, sub) {
				others = append(others, h)
			}
		}
		hs.arr = others
		if len(others) > 0 || before == 0 {
			kept = append(kept, g)
		}
	}
	groups.arr = kept
}

// isOurs recognises a hook bottled registered: a command hook whose
// program is named bottled and whose last words are "hook <sub>" and the
// hook's own flags.
func isOurs(h *node, sub string) bool {
	c := h.get("command")
	if h.kind != kindObject || c == nil || c.kind != kindRaw {
		return false
	}
	var cmd string
	if json.Unmarshal(c.raw, &cmd) != nil {
		return false
	}
	words := shellSplit(cmd)
	for len(words) > 0 && strings.HasPrefix(words[len(words)-1], "--") {
		words = words[:len(words)-1]
	}
	n := len(words)
	return n >= 3 && words[n-2] == "hook" && words[n-1] == sub && filepath.Base(words[0]) == "bottled"
}
