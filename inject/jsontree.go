package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// An order-preserving JSON tree: settings.json is parsed into it, edited
// and encoded back with its owner's key order and scalars as they were
// written, so that bottled changes nothing but its own entries.

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
	if err := checkShape(n); err != nil {
		return nil, err
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

// objectAt returns the object under key, creating it if there is none
// (checkShape refused a value of another type).
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
		encodeItems(b, indent, "{", "}", len(n.obj), func(i int, inner string) {
			b.Write(marshal(n.obj[i].key))
			b.WriteString(": ")
			n.obj[i].val.encode(b, inner)
		})
	case kindArray:
		encodeItems(b, indent, "[", "]", len(n.arr), func(i int, inner string) { n.arr[i].encode(b, inner) })
	}
}

// encodeItems writes the n items of an object or an array between opening
// and closing, one a line indented two spaces deeper than indent (item
// writes item i at that indent); with none, opening and closing alone.
func encodeItems(b *bytes.Buffer, indent, opening, closing string, n int, item func(i int, inner string)) {
	if n == 0 {
		b.WriteString(opening + closing)
		return
	}
	b.WriteString(opening + "\n")
	for i := range n {
		b.WriteString(indent + "  ")
		item(i, indent+"  ")
		if i < n-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + closing)
}
