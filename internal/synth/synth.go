// Package synth generates large synthetic Claude Code transcripts for
// benchmarks. It is test support only.
//
// The transcripts are shaped like real 2.1.x sessions: most bytes are tool
// results (file contents, command output, duplicated in toolUseResult), tool
// inputs and thinking; a few percent are the user's prompts and the
// assistant's text. Strings carry the escapes real code does (quotes,
// backslashes, newlines, tabs), which is what a JSON scanner pays for.
package synth

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Stats describes a generated transcript.
type Stats struct {
	Bytes      int64
	Lines      int
	Prompts    int // genuine user prompts
	TextBlocks int // assistant text blocks
	TextBytes  int // bytes of assistant text and prompts (unescaped)
}

// Generator writes records of one session.
type Generator struct {
	w       *bufio.Writer
	rng     *rand.Rand
	session string
	parent  string
	clock   time.Time
	seq     int
	Stats   Stats
}

// New returns a generator for session id, deterministic for a seed.
func New(w io.Writer, session string, seed uint64) *Generator {
	return &Generator{
		w: bufio.NewWriterSize(w, 1<<20), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		session: session, clock: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
	}
}

// Transcript writes a whole session of at least size bytes.
func Transcript(w io.Writer, session string, size int64, seed uint64) (Stats, error) {
	g := New(w, session, seed)
	for g.Stats.Bytes < size {
		if err := g.Turn(); err != nil {
			return g.Stats, err
		}
	}
	return g.Stats, g.Flush()
}

// File writes a whole session of at least size bytes (Transcript) to a
// new file at path, making its directory (0700) if need be.
func File(path, session string, size int64, seed uint64) (Stats, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Stats{}, err
	}
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	st, err := Transcript(f, session, size, seed)
	return st, errors.Join(err, f.Close())
}

// Flush writes buffered records out.
func (g *Generator) Flush() error { return g.w.Flush() }

// Turn writes one user prompt and the assistant's work on it: several API
// messages of thinking, text and tool calls, each call followed by its
// result, with hook records between.
func (g *Generator) Turn() error {
	prompt := g.sentence(12+g.rng.IntN(40)) + " " + g.code(1+g.rng.IntN(3))
	if err := g.user(prompt); err != nil {
		return err
	}
	g.Stats.Prompts++
	g.Stats.TextBytes += len(prompt)
	for m, n := 0, 3+g.rng.IntN(8); m < n; m++ {
		msg := fmt.Sprintf("msg_%016x", g.rng.Uint64())
		if err := g.block(msg, map[string]any{"type": "thinking", "thinking": g.prose(800 + g.rng.IntN(6000)), "signature": g.base64(400)}); err != nil {
			return err
		}
		if m == n-1 || g.rng.IntN(2) == 0 {
			text := g.prose(200 + g.rng.IntN(2400))
			g.Stats.TextBlocks++
			g.Stats.TextBytes += len(text)
			if err := g.block(msg, map[string]any{"type": "text", "text": text}); err != nil {
				return err
			}
		}
		if m == n-1 {
			break
		}
		for c, calls := 0, 1+g.rng.IntN(3); c < calls; c++ {
			if err := g.toolCall(msg); err != nil {
				return err
			}
		}
	}
	return g.system("turn_duration")
}

func (g *Generator) toolCall(msg string) error {
	id := fmt.Sprintf("toolu_%024x", g.rng.Uint64())
	var input map[string]any
	var result string
	switch g.rng.IntN(4) {
	case 0:
		input = map[string]any{"file_path": "/home/u/src/app/" + g.word() + ".go"}
		result = g.code(40 + g.rng.IntN(600))
	case 1:
		input = map[string]any{"command": "go test ./... -run " + g.word(), "description": g.sentence(8)}
		result = g.log(20 + g.rng.IntN(300))
	case 2:
		input = map[string]any{"file_path": "/home/u/src/app/" + g.word() + ".go", "old_string": g.code(5 + g.rng.IntN(40)), "new_string": g.code(5 + g.rng.IntN(60))}
		result = "The file has been updated."
	default:
		input = map[string]any{"pattern": g.word(), "path": "/home/u/src"}
		result = g.log(5 + g.rng.IntN(80))
	}
	if err := g.block(msg, map[string]any{"type": "tool_use", "id": id, "name": "Tool", "input": input}); err != nil {
		return err
	}
	if err := g.write(g.envelope("user", map[string]any{
		"message":       map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result}}},
		"toolUseResult": map[string]any{"stdout": result, "stderr": "", "interrupted": false},
	})); err != nil {
		return err
	}
	return g.write(g.envelope("progress", map[string]any{"data": map[string]any{"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Tool", "command": "node hook.js"}}))
}

func (g *Generator) user(text string) error {
	return g.write(g.envelope("user", map[string]any{"message": map[string]any{"role": "user", "content": text}}))
}

func (g *Generator) block(msg string, b map[string]any) error {
	return g.write(g.envelope("assistant", map[string]any{
		"message":   map[string]any{"id": msg, "type": "message", "role": "assistant", "model": "claude-opus", "content": []any{b}, "usage": map[string]any{"input_tokens": 3, "output_tokens": 900}},
		"requestId": fmt.Sprintf("req_%016x", g.rng.Uint64()),
	}))
}

func (g *Generator) system(subtype string) error {
	return g.write(g.envelope("system", map[string]any{"subtype": subtype, "durationMs": g.rng.IntN(90000)}))
}

// envelope makes the next record of the session's chain.
func (g *Generator) envelope(typ string, fields map[string]any) map[string]any {
	g.seq++
	g.clock = g.clock.Add(time.Duration(200+g.rng.IntN(4000)) * time.Millisecond)
	uuid := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", g.seq, g.rng.IntN(1<<16), g.rng.IntN(1<<12), g.rng.IntN(1<<12), g.rng.Uint64()&(1<<48-1))
	r := Rec{Session: g.session, UUID: uuid, Parent: g.parent, At: g.clock, CWD: "/home/u/src/app"}.envelope(typ)
	r["gitBranch"] = "main"
	for k, v := range fields {
		r[k] = v
	}
	g.parent = uuid
	return r
}

func (g *Generator) write(r map[string]any) error {
	b := marshalLine(r)
	g.Stats.Bytes += int64(len(b))
	g.Stats.Lines++
	_, err := g.w.Write(b)
	return err
}

var words = strings.Fields("the a retry loop client server config handler request response error value " +
	"test build cache index file path parser buffer stream token session render bottle state offset " +
	"queue worker timeout context deadline signal lock write read append flush sync commit schema")

func (g *Generator) word() string { return words[g.rng.IntN(len(words))] }

func (g *Generator) sentence(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.word())
	}
	return b.String()
}

// prose is roughly n bytes of sentences.
func (g *Generator) prose(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(g.sentence(6 + g.rng.IntN(14)))
		b.WriteString(". ")
		if g.rng.IntN(6) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// code is n lines of Go-looking source with quotes, escapes and tabs.
func (g *Generator) code(n int) string {
	var b strings.Builder
	for i := range n {
		switch g.rng.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "\tif err := %s(%q); err != nil {\n\t\treturn fmt.Errorf(\"%s: %%w\", err)\n\t}\n", g.word(), g.word()+"\\n", g.word())
		case 1:
			fmt.Fprintf(&b, "%d\tfunc (s *%s) %s(ctx context.Context) error {\n", i, g.word(), g.word())
		default:
			fmt.Fprintf(&b, "\t%s := %s.%s(%d, `%s`)\n", g.word(), g.word(), g.word(), g.rng.IntN(1000), g.word())
		}
	}
	return b.String()
}

// log is n lines of command output.
func (g *Generator) log(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "=== RUN   Test%s%d\n--- PASS: Test%s%d (0.%02ds)\n", g.word(), i, g.word(), i, g.rng.IntN(100))
	}
	return b.String()
}

func (g *Generator) base64(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}
