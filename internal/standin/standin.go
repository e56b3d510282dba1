// Package standin is a stand-in for Anthropic's Messages API, for running
// the real Claude Code CLI in tests without the network. It listens on
// 127.0.0.1 only, answers POST /v1/messages (streamed as server-sent
// events, or as one JSON body) and POST /v1/messages/count_tokens, records
// every request for the test to inspect, and answers each model request as
// the test's Script says. Anything else gets a 404 and is recorded too.
//
// Claude Code makes model requests of several kinds besides the main turn
// (a compaction summary, a session title…); the Script sees each parsed
// request and decides. Compaction requests are recognised here, since every
// test needs them answered the same way: with a <summary>.
package standin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is a running stand-in.
type Server struct {
	// URL is the base URL to give Claude Code as ANTHROPIC_BASE_URL.
	URL string

	srv *http.Server
	ln  net.Listener

	// mu guards everything below: requests arrive on the HTTP server's
	// goroutines while the test reads them.
	mu       sync.Mutex
	script   Script
	compact  func(*Request) // before a compaction is answered (SetBeforeCompaction)
	requests []*Request
	nextID   int
}

// Script decides the answer to a model request. It is called with the
// server's lock released, once per POST /v1/messages.
type Script func(r *Request) Answer

// Answer is what the stand-in streams back for one model request.
type Answer struct {
	// Text is the assistant's text block ("" for none).
	Text string
	// Tool, when set, follows the text as a tool_use block and the
	// answer stops for tool use.
	Tool *ToolUse
	// InputTokens is reported in usage; a large value makes Claude Code
	// compact on its next turn.
	InputTokens int
	// Status, when not 0 or 200, answers with this HTTP status and an API
	// error body instead of a message.
	Status int
}

// ToolUse is a tool call the stand-in makes as the model.
type ToolUse struct {
	Name  string
	Input map[string]any
}

// Request is one recorded HTTP request.
type Request struct {
	Time   time.Time
	Method string
	Path   string // without the query
	Query  string
	Body   []byte
	// Parsed, for model and token-count requests.
	System   string // the system prompt's text blocks, joined
	Messages []Message
	Tools    []json.RawMessage
	Stream   bool
	// Kind is KindTurn, KindCompaction, KindCountTokens or KindOther.
	Kind string
}

// Request kinds.
const (
	KindTurn        = "turn"
	KindCompaction  = "compaction"
	KindCountTokens = "count_tokens"
	KindOther       = "other"
)

// Message is one message of a request, its content flattened into blocks.
type Message struct {
	Role   string
	Blocks []Block
}

// Block is one content block of a request message.
type Block struct {
	Type      string // text, tool_use, tool_result, image…
	Text      string // text; for tool_result, its text content joined
	ToolUseID string // tool_result
	IsError   bool   // tool_result
	Name      string // tool_use
	Input     json.RawMessage
}

// Text is the message's text blocks (and tool results' text) joined.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// LastUser returns the request's last message with role user, or nil.
func (r *Request) LastUser() *Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return &r.Messages[i]
		}
	}
	return nil
}

// AllText is every text in the request's messages, in order, joined: what
// the model would read, hook context included.
func (r *Request) AllText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String()
}

// ToolResults returns the request's tool_result blocks, in order.
func (r *Request) ToolResults() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// Start starts a stand-in on 127.0.0.1 and a free port. It stops when ctx
// is done or Close is called.
func Start(ctx context.Context, script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("stand-in listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, script: script}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }() // ends when Close shuts the server down
	go func() {
		<-ctx.Done()
		s.Close()
	}()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// SetScript replaces the script for the requests that follow.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// SetBeforeCompaction has the stand-in call f before it answers each
// compaction request that follows (nil: none), on the request's own
// goroutine: the model takes seconds to summarise a conversation, during
// which Claude Code goes on writing, which the stand-in's instant answer
// does not wait for.
func (s *Server) SetBeforeCompaction(f func(*Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compact = f
}

// Since returns the requests recorded after the first n.
func (s *Server) Since(n int) []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > len(s.requests) {
		return nil
	}
	return append([]*Request(nil), s.requests[n:]...)
}

// Count is the number of requests recorded so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Turns returns the recorded requests of kind KindTurn among rs.
func Turns(rs []*Request) []*Request {
	var out []*Request
	for _, r := range rs {
		if r.Kind == KindTurn {
			out = append(out, r)
		}
	}
	return out
}

// maxBody bounds a request body; Claude Code's requests with a long
// conversation run to a few MB.
const maxBody = 64 << 20

func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r := &Request{Time: time.Now(), Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Body: body, Kind: KindOther}
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		s.parse(r)
		r.Kind = KindTurn
		if isCompaction(r) {
			r.Kind = KindCompaction
		}
		s.answer(w, r)
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		s.parse(r)
		r.Kind = KindCountTokens
		s.record(r)
		// Claude Code's token counting keeps its connection open after it
		// exits, and the process waits ~30 s for it; closing it here lets
		// the process end at once.
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": CountTokens(r)})
	default:
		s.record(r)
		writeJSON(w, http.StatusNotFound, apiError("not_found_error", "the stand-in does not serve "+hr.URL.Path))
	}
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// answer asks the script (or answers a compaction itself), records the
// request and writes the message.
func (s *Server) answer(w http.ResponseWriter, r *Request) {
	var a Answer
	if r.Kind == KindCompaction {
		s.mu.Lock()
		before := s.compact
		s.mu.Unlock()
		if before != nil {
			before(r)
		}
		a = Answer{Text: "<summary>\n1. Primary Request and Intent: the conversation so far, summarised by the stand-in.\n</summary>"}
	} else {
		s.mu.Lock()
		script := s.script
		s.mu.Unlock()
		if script != nil {
			a = script(r)
		} else {
			a = Answer{Text: "ok"}
		}
	}
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf("msg_standin_%06d_%d", s.nextID, time.Now().UnixNano())
	s.requests = append(s.requests, r)
	s.mu.Unlock()
	if a.Status != 0 && a.Status != http.StatusOK {
		writeJSON(w, a.Status, apiError("api_error", a.Text))
		return
	}
	if r.Stream {
		streamMessage(w, id, a)
		return
	}
	writeJSON(w, http.StatusOK, message(id, a))
}

func isCompaction(r *Request) bool {
	u := r.LastUser()
	return u != nil && strings.Contains(u.Text(), "create a detailed summary")
}

func apiError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// model is the model name answers carry.
const model = "claude-standin-1"

func usage(a Answer) map[string]any {
	in := a.InputTokens
	if in == 0 {
		in = 100
	}
	return map[string]any{"input_tokens": in, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func contentBlocks(a Answer) []map[string]any {
	var out []map[string]any
	if a.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": a.Text})
	}
	if a.Tool != nil {
		out = append(out, map[string]any{"type": "tool_use", "id": toolID(), "name": a.Tool.Name, "input": a.Tool.Input})
	}
	return out
}

func stopReason(a Answer) string {
	if a.Tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

var toolSeq struct {
	sync.Mutex
	n int
}

func toolID() string {
	toolSeq.Lock()
	defer toolSeq.Unlock()
	toolSeq.n++
	return fmt.Sprintf("toolu_standin_%06d_%d", toolSeq.n, time.Now().UnixNano()%1e9)
}

func message(id string, a Answer) map[string]any {
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": contentBlocks(a), "stop_reason": stopReason(a), "stop_sequence": nil, "usage": usage(a),
	}
}

// streamMessage writes the answer as the server-sent events the Messages
// API streams.
func streamMessage(w http.ResponseWriter, id string, a Answer) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	event := func(name string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
	}
	start := message(id, Answer{InputTokens: a.InputTokens})
	start["content"] = []any{}
	start["stop_reason"] = nil
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, blk := range contentBlocks(a) {
		switch blk["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": blk["text"]}})
		case "tool_use":
			input, _ := json.Marshal(blk["input"])
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": blk["id"], "name": blk["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		flush()
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason(a), "stop_sequence": nil}, "usage": usage(a)})
	event("message_stop", map[string]any{"type": "message_stop"})
	flush()
}

// parse fills the request's parsed fields from its JSON body. A body that
// is not the expected shape leaves them empty; the request is still
// recorded.
func (s *Server) parse(r *Request) {
	var body struct {
		Stream   bool              `json:"stream"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return
	}
	r.Stream, r.Tools = body.Stream, body.Tools
	r.System = strings.Join(textsOf(body.System), "\n")
	for _, raw := range body.Messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Blocks: blocksOf(m.Content)})
	}
}

// textsOf returns the text of a content value: a string, or the text
// blocks of a list.
func textsOf(raw json.RawMessage) []string {
	var out []string
	for _, b := range blocksOf(raw) {
		if b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return out
}

// blocksOf reads a content value, a string or a list of blocks.
func blocksOf(raw json.RawMessage) []Block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return []Block{{Type: "text", Text: str}}
	}
	var list []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Content   json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]Block, 0, len(list))
	for _, b := range list {
		blk := Block{Type: b.Type, Text: b.Text, ToolUseID: b.ToolUseID, IsError: b.IsError, Name: b.Name, Input: b.Input}
		if b.Type == "tool_result" {
			blk.Text = strings.Join(textsOf(b.Content), "\n")
		}
		out = append(out, blk)
	}
	return out
}
