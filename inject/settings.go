package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// EditSettings applies edit to the settings file at path and, if that
// changes it and dryRun is false, writes the result atomically, keeping a
// copy of the previous file at path+".bottled.bak" and the file's mode. A
// missing file is edited as an empty one. It reports whether the settings
// changed (or would have).
func EditSettings(path string, dryRun bool, edit func([]byte) ([]byte, bool, error)) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	existed := err == nil
	updated, changed, err := edit(old)
	if err != nil {
		return false, fmt.Errorf("%s: %w (bottled left it unchanged)", path, err)
	}
	if !changed || dryRun {
		return changed, nil
	}
	mode := fs.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if existed {
		if err := os.WriteFile(path+".bottled.bak", old, mode); err != nil {
			return false, fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(updated)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// ValidSettings reports whether settings is a file bottled can edit (a
// JSON object, or empty), with ErrMalformedSettings and the reason if not.
func ValidSettings(settings []byte) error {
	_, err := parseSettings(settings)
	return err
}

// ErrMalformedSettings reports a settings.json bottled will not touch.
var ErrMalformedSettings = errors.New("settings file is not a JSON object")

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
	root, err := parseSettings(settings)
	if err != nil {
		return nil, false, err
	}
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != kindObject {
		return settings, false, nil
	}
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
	if len(hooks.obj) == 0 {
		root.delete("hooks")
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

func encodeChanged(old []byte, root *node) ([]byte, bool, error) {
	var b bytes.Buffer
	root.encode(&b, "")
	b.WriteByte('\n')
	out := b.Bytes()
	// Compare meaning, not bytes: a file that only differs in layout is
	// unchanged and is not rewritten.
	same := len(bytes.TrimSpace(old)) > 0 && jsonEqual(old, out)
	return out, !same, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// node is a JSON value that keeps the order of object keys, so a settings
// file comes back as its owner wrote it, only with bottled's hooks added
// or removed. Scalars are kept as their raw text.
type node struct {
	kind nodeKind
	obj  []member
	arr  []*node
	raw  json.RawMessage
}

type member struct {
	key string
	val *node
}

type nodeKind int

const (
	kindRaw nodeKind = iota
	kindObject
	kindArray
)

func str(s string) *node { return &node{kind: kindRaw, raw: marshal(s)} }

// marshal encodes a scalar without escaping <, > and & (a user's "a && b"
// command stays readable).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func parseSettings(data []byte) (*node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &node{kind: kindObject}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err == nil {
		if _, tail := dec.Token(); tail != io.EOF {
			err = errors.New("trailing data after the JSON object")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedSettings, err)
	}
	if n.kind != kindObject {
		return nil, fmt.Errorf("%w: the top level is not an object", ErrMalformedSettings)
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: kindObject}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.obj = append(n.obj, member{k.(string), v})
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: kindArray}
			for dec.More() {
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return &node{kind: kindRaw, raw: marshal(t)}, nil
	}
}

func (n *node) get(key string) *node {
	for _, m := range n.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (n *node) delete(key string) {
	for i, m := range n.obj {
		if m.key == key {
			n.obj = append(n.obj[:i], n.obj[i+1:]...)
			return
		}
	}
}

// objectAt returns the object under key, creating it (or replacing a
// value of another type, which Claude Code would reject anyway).
func (n *node) objectAt(key string) *node {
	if v := n.get(key); v != nil && v.kind == kindObject {
		return v
	}
	return n.set(key, &node{kind: kindObject})
}

func (n *node) arrayAt(key string) *node {
	if v := n.get(key); v != nil && v.kind == kindArray {
		return v
	}
	return n.set(key, &node{kind: kindArray})
}

func (n *node) set(key string, v *node) *node {
	for i, m := range n.obj {
		if m.key == key {
			n.obj[i].val = v
			return v
		}
	}
	n.obj = append(n.obj, member{key, v})
	return v
}

// encode writes n indented by two spaces, as Claude Code writes the file.
func (n *node) encode(b *bytes.Buffer, indent string) {
	switch n.kind {
	case kindRaw:
		b.Write(n.raw)
	case kindObject:
		if len(n.obj) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range n.obj {
			b.WriteString(indent + "  ")
			b.Write(marshal(m.key))
			b.WriteString(": ")
			m.val.encode(b, indent+"  ")
			if i < len(n.obj)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case kindArray:
		if len(n.arr) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, v := range n.arr {
			b.WriteString(indent + "  ")
			v.encode(b, indent+"  ")
			if i < len(n.arr)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	}
}

// shellQuote quotes a word for the shell Claude Code runs hook commands
// with, leaving plain words as they are.
func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// shellSplit undoes shellQuote (single quotes and plain words; enough to
// recognise a command bottled wrote).
func shellSplit(s string) []string {
	var words []string
	var cur strings.Builder
	in, any := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			in, any = !in, true
		case !in && (c == ' ' || c == '\t'):
			if any {
				words = append(words, cur.String())
				cur.Reset()
				any = false
			}
		case !in && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			any = true
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	return words
}
