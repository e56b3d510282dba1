package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestReadFrames reads a stream of lines through a buffer smaller than most
// of them: each line is one frame, whole, whatever the buffer; blank lines
// are none; a last line without its line end is one; a line over MaxFrame
// keeps only its ends.
func TestReadFrames(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", MaxFrame) + `","id":"last"}`
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"",
		"  \r",
		"\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\r",
		long,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n")
	c := &lineConn{frames: make(chan frame), closed: make(chan struct{})}
	go c.readFrames(bufio.NewReaderSize(strings.NewReader(input), 16))
	var got []string
	for f := range c.frames {
		if f.err != nil {
			if f.err != io.EOF {
				t.Errorf("ended with %v, want io.EOF", f.err)
			}
			break
		}
		switch {
		case f.head != nil:
			if f.size != int64(len(long)) || len(f.head) > idWindow || len(f.tail) > idWindow || !strings.HasSuffix(long, string(f.tail)) {
				t.Errorf("the long line: size %d, head %d bytes, tail %d bytes", f.size, len(f.head), len(f.tail))
			}
			got = append(got, fmt.Sprintf("long %v", findID(f.head, f.tail)))
		default:
			got = append(got, string(f.line))
		}
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\r",
		"long last",
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("frames:\n%q\nwant\n%q", got, want)
	}
}

// TestDecodeFrame: the error reply each kind of bad line gets, with the id
// of the request it meant to be when that can be read from it.
func TestDecodeFrame(t *testing.T) {
	for _, tc := range []struct {
		line string
		code int64
		id   string // JSON
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":5,"result":{}}`, 0, ""},
		{`{bad`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"`, jsonrpc.CodeParseError, `"a"`},
		{`{"method":"tools/call","params":{"x":1},"jsonrpc":"2.0","id":12} junk`, jsonrpc.CodeParseError, "12"},
		{`{"method":"tools/call","params":{"text":"\"id\":4}"} junk"}`, jsonrpc.CodeParseError, "null"},
		{`{"params":{"id":9}} }`, jsonrpc.CodeParseError, "null"},
		{`null`, jsonrpc.CodeInvalidRequest, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"id":3,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "3"},
		{`{"jsonrpc":"2.0"}`, jsonrpc.CodeInvalidRequest, "null"},
	} {
		msg, r := decodeFrame(frame{line: []byte(tc.line), size: int64(len(tc.line))})
		if tc.code == 0 {
			if r != nil || msg == nil {
				t.Errorf("%s: refused with %+v, want a message", tc.line, r)
			}
			continue
		}
		if r == nil {
			t.Errorf("%s: a message, want error %d", tc.line, tc.code)
			continue
		}
		id, _ := json.Marshal(r.ID)
		if r.Error.Code != tc.code || string(id) != tc.id {
			t.Errorf("%s: error %d with id %s (%s), want %d with id %s", tc.line, r.Error.Code, id, r.Error.Message, tc.code, tc.id)
		}
	}
}
