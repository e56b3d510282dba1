package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/inject"
	"github.com/bottled-dev/bottled/internal/standin"
)

// TestMCPTools: the MCP server that bottled install registered is started
// by Claude Code, and the model can use its three tools: it loads their
// definitions (Claude Code defers MCP tools behind ToolSearch), lists the
// project's sessions, searches them and reads a bottle; each result is in
// the next request. The definitions' size is measured from that request.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	w := newWorld(t, reply("We decided the retry budget is five attempts per minute."))
	first := w.newSession("What should the retry budget be? Decide it.")
	w.settled(first, "five attempts per minute")

	calls := []standin.ToolUse{
		{Name: "ToolSearch", Input: map[string]any{"query": "select:" + strings.Join(inject.MCPTools, ","), "max_results": 3}},
		{Name: "mcp__bottled__sessions", Input: map[string]any{}},
		{Name: "mcp__bottled__search", Input: map[string]any{"query": "retry budget"}},
		{Name: "mcp__bottled__read", Input: map[string]any{"session": first}},
	}
	next := 0
	w.api.SetScript(func(r *standin.Request) standin.Answer {
		if next < len(calls) {
			c := calls[next]
			next++
			return standin.Answer{Tool: &c}
		}
		return standin.Answer{Text: "Found it."}
	})
	second := newSessionID()
	n := w.api.Count()
	w.claudeP("What did we decide about the retry budget last time?", "--session-id", second)
	turns := w.turnsSince(n)
	if len(turns) != len(calls)+1 {
		t.Fatalf("%d model requests for %d tool calls", len(turns), len(calls))
	}
	results := make([]string, len(calls))
	for i := range calls {
		res := turns[i+1].ToolResults()
		if len(res) == 0 {
			t.Fatalf("no result for %s", calls[i].Name)
		}
		last := res[len(res)-1]
		if last.IsError {
			t.Fatalf("%s failed: %.500s", calls[i].Name, last.Text)
		}
		results[i] = last.Text
	}
	for i, want := range map[int][]string{
		1: {first, "What should the retry budget be?"},
		2: {first, "retry budget"},
		3: {"Outline", "What should the retry budget be?"},
	} {
		for _, s := range want {
			if !strings.Contains(results[i], s) {
				t.Errorf("%s's result lacks %q:\n%.1500s", calls[i].Name, s, results[i])
			}
		}
	}

	// The definitions the model was sent, once loaded.
	size := 0
	var names []string
	for _, raw := range turns[len(turns)-1].Tools {
		var def struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &def)
		if strings.HasPrefix(def.Name, "mcp__bottled__") {
			size += len(raw)
			names = append(names, def.Name)
		}
	}
	if len(names) != len(inject.MCPTools) {
		t.Fatalf("the request holds definitions of %v, want %v", names, inject.MCPTools)
	}
	t.Logf("tool definitions: %d bytes, about %d tokens by the stand-in's count", size, tokensOfDefs(turns[len(turns)-1].Tools))

	// After a compaction the pointer says the bottle can also be read
	// with the tool.
	w.api.SetScript(reply("Compacted."))
	w.claudeP("/compact", "--resume", second)
	req, _ := w.oneTurn("Go on.", "--resume", second)
	if p := pointerText(req); !strings.Contains(p, "mcp__bottled__read") {
		t.Errorf("the pointer does not name the MCP tool:\n%s", p)
	}
}

// tokensOfDefs counts the bottled tool definitions' tokens the way the
// stand-in counts a request's.
func tokensOfDefs(defs []json.RawMessage) int {
	n := 0
	for _, raw := range defs {
		if strings.Contains(string(raw), `"mcp__bottled__`) {
			n += standin.Tokens(string(raw))
		}
	}
	return n
}
