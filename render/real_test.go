package render

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fixtures"
)

// rewound lists the fixtures with abandoned rewind branches, whose
// assistant text is rightly not all in the bottle.
var rewound = map[string]bool{"daaain__claude-code-log__-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl": true}

// TestRealFixturesRender renders every real transcript of both corpora
// (subagent files included) and checks that the reader classified every
// line or knows it to be harmless (no malformed line, nothing unknown: a
// real transcript that shows something else is a rule to write), then
// checks the bottle against facts read from the same file with
// encoding/json, independently of the spine: every assistant text block
// is in it verbatim (quoted where it looks like the bottle's structure),
// and no tool input, tool output or thinking text is.
func TestRealFixturesRender(t *testing.T) {
	files := fixtures.All(t)
	probed := 0 // tool and thinking texts checked, over all files
	defer func() {
		if probed < 1000 {
			t.Errorf("only %d tool or thinking texts were checked", probed)
		}
	}()
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(filepath.Base(filepath.Dir(f))+"/"+name, func(t *testing.T) {
			sp := spineOf(t, f)
			// Every line is one the reader classified, or one it knows to
			// be harmless: a real transcript that shows anything else is a
			// rule to write.
			if sp.Malformed > 0 {
				t.Errorf("%d lines could not be read", sp.Malformed)
			}
			if !sp.Unknown.Empty() {
				t.Errorf("lines the reader does not know: %s", sp.Unknown.String())
			}
			b := renderSpine(t, sp)
			facts := readFacts(t, f)
			if b == nil {
				if len(facts.said) > 0 {
					t.Fatalf("nothing rendered from a transcript where the assistant said %d things", len(facts.said))
				}
				return // a subagent's file, or a session without a message
			}
			bottle := string(b.Bytes)
			if !rewound[name] {
				for _, s := range facts.said {
					if want := verbatim(shown(nil, s)); !strings.Contains(bottle, want) {
						t.Errorf("assistant text missing: %.80q", want)
					}
				}
			}
			checked := 0
			for _, s := range facts.hidden {
				probe := probeOf(s)
				if len(probe) < 40 || facts.inText(probe) {
					continue // too short to be telling, or also said in the conversation
				}
				checked++
				if strings.Contains(bottle, probe) {
					t.Errorf("tool or thinking text leaked into the bottle: %.80q", probe)
				}
			}
			probed += checked
			if b.State.Bytes != len(b.Bytes) || b.State.Lines != strings.Count(bottle, "\n") {
				t.Errorf("state size %d bytes %d lines, bottle has %d bytes %d lines", b.State.Bytes, b.State.Lines, len(b.Bytes), strings.Count(bottle, "\n"))
			}
		})
	}
}

// trailArguments are the tool input fields a trail line may show (the
// start of): files, commands, task descriptions, URLs, queries, patterns.
var trailArguments = map[string]bool{"file_path": true, "notebook_path": true, "command": true,
	"description": true, "subagent_type": true, "url": true, "query": true, "pattern": true,
	"path": true, "skill": true}

// facts are what encoding/json finds in a transcript's main thread.
type facts struct {
	said   []string // assistant text blocks
	texts  []string // every user and assistant text, to tell coincidences
	hidden []string // tool inputs and outputs, thinking
}

func (f *facts) inText(probe string) bool {
	for _, s := range f.texts {
		if strings.Contains(s, probe) {
			return true
		}
	}
	return false
}

// probeOf is a stretch of s to search for: its longest line, trimmed and
// cut to 120 bytes at a rune boundary.
func probeOf(s string) string {
	best := ""
	for line := range strings.Lines(s) {
		if l := strings.TrimSpace(line); len(l) > len(best) {
			best = l
		}
	}
	for len(best) > 120 {
		best = strings.ToValidUTF8(best[:120], "")
	}
	return best
}

func readFacts(t *testing.T, path string) *facts {
	t.Helper()
	var out facts
	for line := range fixtures.Lines(t, path) {
		var r struct {
			Type          string          `json:"type"`
			IsSidechain   bool            `json:"isSidechain"`
			ToolUseResult json.RawMessage `json:"toolUseResult"`
			Message       struct {
				Model   string          `json:"model"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &r) != nil || r.IsSidechain {
			continue
		}
		var blocks []map[string]any
		var str string
		if json.Unmarshal(r.Message.Content, &str) == nil {
			out.texts = append(out.texts, str)
		}
		_ = json.Unmarshal(r.Message.Content, &blocks)
		for _, b := range blocks {
			switch b["type"] {
			case "text":
				s, _ := b["text"].(string)
				out.texts = append(out.texts, s)
				if r.Type == "assistant" && r.Message.Model != "<synthetic>" && strings.TrimSpace(s) != "" {
					out.said = append(out.said, strings.TrimSpace(s))
				}
			case "thinking":
				s, _ := b["thinking"].(string)
				out.hidden = append(out.hidden, s)
			case "tool_use":
				// The trail names a call by its main argument; the rest
				// of the input is never shown.
				input, _ := b["input"].(map[string]any)
				for k, v := range input {
					if trailArguments[k] {
						out.texts = append(out.texts, stringsIn(v)...)
					} else {
						out.hidden = append(out.hidden, stringsIn(v)...)
					}
				}
			case "tool_result":
				out.hidden = append(out.hidden, stringsIn(b["content"])...)
			}
		}
		if len(r.ToolUseResult) > 0 {
			var v any
			_ = json.Unmarshal(r.ToolUseResult, &v)
			out.hidden = append(out.hidden, stringsIn(v)...)
		}
	}
	return &out
}

// stringsIn collects every string inside a decoded JSON value.
func stringsIn(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	}
	return nil
}
