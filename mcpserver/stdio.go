package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport (IOTransport, v1.8.0) reads stdin with one
// streaming json.Decoder and ends the session on the first line that is not
// a JSON-RPC message, or on one over its 16 MiB frame limit, without a
// reply (go-sdk issue #1209): the server then exits, and Claude Code loses
// bottled's tools for the rest of its session. Lines is the same
// newline-delimited JSON-RPC, read a line at a time: a bad line is answered
// with a JSON-RPC error and skipped, in bounded memory, and the session goes
// on.

// MaxFrame is the longest line read as a message, the SDK's own limit. The
// tools' arguments are ids, queries and numbers, far shorter; a longer line
// is skipped, holding at most this much of it.
const MaxFrame = sdk.DefaultMaxLineLength

// idWindow is how much of the start and of the end of a line that is not a
// message is kept to find the id of the request it meant to be, so that
// the client waiting for that id gets its error.
const idWindow = 64 << 10

// Lines is an sdk.Transport of newline-delimited JSON-RPC messages on a
// reader and a writer (stdin and stdout), neither of which it closes.
type Lines struct {
	Reader io.Reader
	Writer io.Writer
	Log    *slog.Logger // what was refused, and why; nil: nothing
}

// Connect starts reading lines. The reading goroutine ends at the end of
// the reader, or, once the connection is closed, when the read it is in
// returns (a read of stdin cannot be interrupted, as in the SDK's
// transport).
func (t *Lines) Connect(context.Context) (sdk.Connection, error) {
	log := t.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &lineConn{frames: make(chan frame), closed: make(chan struct{}), w: t.Writer, log: log}
	go c.readFrames(bufio.NewReaderSize(t.Reader, 64<<10))
	return c, nil
}

// lineConn is a connection of Lines.
type lineConn struct {
	frames    chan frame    // from the reading goroutine, unbuffered
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	log       *slog.Logger
	// wmu keeps each message one whole line on w, written by the SDK's
	// goroutines and by Read's error replies.
	wmu sync.Mutex
	w   io.Writer
}

// frame is one line read: its bytes (without the line end), or, for a line
// over MaxFrame, its size and the ends kept to find its id; err ends the
// stream.
type frame struct {
	line       []byte
	size       int64
	head, tail []byte // of a line over MaxFrame only
	err        error
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// Read returns the next message, answering the lines that are not one.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var f frame
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case f = <-c.frames:
		}
		if f.err != nil {
			return nil, f.err
		}
		if msg, refusal := decodeFrame(f); refusal == nil {
			return msg, nil
		} else if err := c.refuse(ctx, refusal); err != nil {
			return nil, err
		}
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return c.writeLine(ctx, data)
}

func (c *lineConn) writeLine(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.closed:
		return errors.New("connection closed")
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// readFrames sends every line of r to Read, then the error that ended r
// (io.EOF at its end).
func (c *lineConn) readFrames(r *bufio.Reader) {
	for {
		f := readFrame(r)
		blank := f.head == nil && len(bytes.Trim(f.line, " \t\r")) == 0
		if !blank && !c.deliver(frame{line: f.line, size: f.size, head: f.head, tail: f.tail}) {
			return
		}
		if f.err != nil {
			c.deliver(frame{err: f.err})
			return
		}
	}
}

func (c *lineConn) deliver(f frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-c.closed:
		return false
	}
}

// readFrame reads one line (a last one may lack its line end), holding at
// most MaxFrame of it, or its ends when it is longer. A byte-order mark is
// not part of it.
func readFrame(r *bufio.Reader) frame {
	var f frame
	for {
		chunk, err := r.ReadSlice('\n')
		if f.size == 0 {
			chunk = bytes.TrimPrefix(chunk, []byte("\xef\xbb\xbf"))
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		f.add(chunk)
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(f.tail) > idWindow {
			f.tail = f.tail[len(f.tail)-idWindow:]
		}
		f.err = err
		return f
	}
}

// add appends a part of the line, keeping only its ends once it is over
// MaxFrame.
func (f *frame) add(chunk []byte) {
	f.size += int64(len(chunk))
	switch {
	case f.head == nil && f.size <= MaxFrame:
		if need := len(f.line) + len(chunk); need > cap(f.line) {
			// Doubling, where append grows a large slice by a quarter:
			// a line of MaxFrame then costs twice its size, not five times.
			grown := make([]byte, len(f.line), min(max(2*cap(f.line), need), MaxFrame))
			copy(grown, f.line)
			f.line = grown
		}
		f.line = append(f.line, chunk...)
		return
	case f.head == nil:
		f.head = bytes.Clone(f.line[:min(len(f.line), idWindow)])
		f.tail = bytes.Clone(f.line[max(0, len(f.line)-idWindow):])
		f.line = nil
	}
	f.tail = append(f.tail, chunk...)
	if len(f.tail) > 2*idWindow {
		f.tail = append(f.tail[:0], f.tail[len(f.tail)-idWindow:]...)
	}
}

// refusal is a JSON-RPC error reply to a line that is not a message.
type refusal struct {
	Version string        `json:"jsonrpc"`
	ID      any           `json:"id"` // null when it could not be read
	Error   jsonrpc.Error `json:"error"`
	Size    int64         `json:"-"` // of the line
}

func (c *lineConn) refuse(ctx context.Context, r *refusal) error {
	c.log.Warn("refused a line that is not a JSON-RPC message", "error", r.Error.Message, "id", r.ID, "bytes", r.Size)
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode error reply: %w", err)
	}
	return c.writeLine(ctx, data)
}

// decodeFrame returns the message a line holds, or the error reply it
// gets: -32700 for a line that is not JSON, -32600 for JSON that is not a
// JSON-RPC message bottled takes (batches included: MCP dropped them in
// 2025-06-18), and for a line over MaxFrame.
func decodeFrame(f frame) (jsonrpc.Message, *refusal) {
	refuse := func(code int64, id any, format string, a ...any) *refusal {
		return &refusal{Version: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, a...)}, Size: f.size}
	}
	switch {
	case f.head != nil:
		return nil, refuse(jsonrpc.CodeInvalidRequest, findID(f.head, f.tail),
			"message of %d bytes is over the limit of %d bytes; it was skipped", f.size, MaxFrame)
	case !json.Valid(f.line):
		return nil, refuse(jsonrpc.CodeParseError, findID(f.line, f.line), "parse error: the line is not JSON")
	}
	switch bytes.TrimLeft(f.line, " \t\r")[0] {
	case '[':
		return nil, refuse(jsonrpc.CodeInvalidRequest, nil, "invalid request: batches are not supported")
	case '{':
	default:
		return nil, refuse(jsonrpc.CodeInvalidRequest, nil, "invalid request: not a JSON-RPC message object")
	}
	msg, err := jsonrpc.DecodeMessage(f.line)
	if err != nil {
		return nil, refuse(jsonrpc.CodeInvalidRequest, findID(f.line, nil), "invalid request: %v", err)
	}
	return msg, nil
}

// findID returns the id of the request a line that is not a message meant
// to be, or nil: a top-level "id" read from the line's start (before
// whatever made it bad), else a last top-level "id" its end shows (the
// MCP TypeScript SDK writes the id last).
func findID(head, tail []byte) any {
	if id, ok := leadingID(head); ok {
		return id
	}
	if m := trailingID.FindSubmatch(tail); m != nil {
		var v any
		if json.Unmarshal(m[1], &v) == nil {
			if id, ok := validID(v); ok {
				return id
			}
		}
	}
	return nil
}

// trailingID matches an id that is the last member of the outermost
// object: after its value, the one brace that closes it, then the end.
var trailingID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*}\s*$`)

// leadingID reads the members of the object data starts with until it
// finds "id" or cannot read on.
func leadingID(data []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		if key == "id" {
			var v any
			if dec.Decode(&v) != nil {
				return nil, false
			}
			return validID(v)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil, false
		}
	}
	return nil, false
}

// validID is v as a JSON-RPC id (a string or an integer), if it is one.
func validID(v any) (any, bool) {
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return nil, false
	}
	return id.Raw(), true
}
