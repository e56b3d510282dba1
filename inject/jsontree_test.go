package inject

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEncodeIndents: a settings tree is written as Claude Code writes the
// file, two spaces an indent, empty objects and arrays on one line, as
// json.MarshalIndent does (its keys sorted here, so that the order agrees).
func TestEncodeIndents(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"a":{},"b":[],"c":"x"}`,
		`{"a":[1,{"d":"x","e":[]},[[],{}]],"b":{"c":{"d":[true,null]}},"z":"a && b"}`,
	} {
		tree, err := parseSettings([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var got bytes.Buffer
		tree.encode(&got, "")
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s encoded as\n%s\nwant\n%s", in, got.String(), want.String())
		}
	}
}
