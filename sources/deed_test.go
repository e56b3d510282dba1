package sources

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestLineChange(t *testing.T) {
	for _, c := range []struct {
		old, new       string
		added, removed int
	}{
		{"", "", 0, 0},
		{"a", "b", 1, 1},
		// Raw JSON strings, as the input holds them: \n is a newline escape.
		{``, `a\nb\n`, 2, 0},
		{`a\nb\n`, ``, 0, 2},
		{`a\nb\nc`, `a\nB\nB2\nc`, 2, 1}, // shared first and last lines left out
		{`a\nb`, `a\nb\nc`, 1, 0},
		{`x\ny`, `x\ny`, 0, 0},
		{`say \"hi\"\nbye`, `say \"hi\"`, 0, 1}, // escapes are compared as written
		{`a\\nb`, `a\\nc`, 1, 1},                // an escaped backslash before n is no newline
	} {
		a, r := lineChange([]byte(c.old), []byte(c.new))
		if a != c.added || r != c.removed {
			t.Errorf("lineChange(%q, %q) = +%d −%d, want +%d −%d", c.old, c.new, a, r, c.added, c.removed)
		}
	}
}

// TestArgumentNeverCutsAnEscape: a long argument is cut at an escape's
// edge, so what is kept is the start of the decoded string.
func TestArgumentNeverCutsAnEscape(t *testing.T) {
	for _, unit := range []string{`\n`, `\u00e9`, `\"`, `é`, `\\`, `x`, `x `} {
		for pad := range 7 {
			raw := strings.Repeat("a", pad) + strings.Repeat(unit, 2*targetMax)
			got := argument([]byte(raw))
			full := unescape([]byte(raw))
			if !strings.HasPrefix(full, got) || len(got) == 0 || len(got) > targetMax+wordMax {
				t.Errorf("unit %q pad %d: %d bytes kept, not a prefix of the decoded string", unit, pad, len(got))
			}
		}
	}
}

// TestArgumentNeverCutsAWord: a long argument is cut at a blank, so that
// the word its first targetMax bytes end in (a credential, maybe) is
// kept whole, or, when it runs on past wordMax more, left out whole
// (a "…" standing for an argument that was all one such word).
func TestArgumentNeverCutsAWord(t *testing.T) {
	lead := strings.Repeat("w ", targetMax/2-4)
	word := func(n int) string { return strings.Repeat("k", n) }
	for _, c := range []struct{ name, raw, want string }{
		{"word kept whole", lead + word(100) + " after", lead + word(100)},
		{"word to the end", lead + word(100), lead + word(100)},
		{"word after a newline", lead + `x\n` + word(100) + `\nnext`, lead + "x\n" + word(100)},
		{"blank at the cut", strings.Repeat("w", targetMax) + " " + word(50), strings.Repeat("w", targetMax)},
		{"word too long", lead + word(targetMax+wordMax) + " after", strings.TrimSuffix(lead, " ")},
		{"one word too long", word(targetMax + wordMax + 1), "…"},
	} {
		if got := argument([]byte(c.raw)); got != c.want {
			t.Errorf("%s: %d bytes kept (…%q), want %d (…%q)", c.name, len(got), got[max(0, len(got)-20):], len(c.want), c.want[max(0, len(c.want)-20):])
		}
	}
}

// TestSpineDeeds reads tool calls and their results and checks the deeds
// the spine gives each assistant message: kind, argument, line counts, a
// failure from is_error, a new file from the result's type or from a path
// no earlier call touched; sidechain calls and abandoned branches give
// none.
func TestSpineDeeds(t *testing.T) {
	var lines []string
	n := 0
	parent := ""
	rec := func(v map[string]any) string {
		n++
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		v["uuid"], v["sessionId"], v["timestamp"] = id, "s", fmt.Sprintf("2026-05-04T10:00:%02d.000Z", n)
		if parent != "" {
			v["parentUuid"] = parent
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		if v["isSidechain"] != true {
			parent = id
		}
		return id
	}
	call := func(msg, id, name string, input map[string]any, result map[string]any, isErr bool) {
		rec(map[string]any{"type": "assistant", "message": map[string]any{"id": msg, "role": "assistant",
			"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
		if result == nil {
			return
		}
		block := map[string]any{"type": "tool_result", "tool_use_id": id, "content": "OUTPUT"}
		if isErr {
			block["is_error"] = true
		}
		rec(map[string]any{"type": "user", "toolUseResult": result,
			"message": map[string]any{"role": "user", "content": []any{block}}})
	}
	ok := map[string]any{}
	fork := rec(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "first"}})
	call("m1", "t1", "Read", map[string]any{"file_path": "/w/a.go"}, ok, false)
	call("m1", "t2", "Edit", map[string]any{"file_path": "/w/a.go", "old_string": "x\ny", "new_string": "x\nz\nw"}, ok, false)
	call("m2", "t3", "Bash", map[string]any{"command": "go test ./...", "description": "tests"}, ok, true)
	call("m3", "t4", "Write", map[string]any{"file_path": "/w/new.go", "content": "a\nb\n"}, map[string]any{"type": "create"}, false)
	call("m3", "t5", "Write", map[string]any{"file_path": "/w/old.go", "content": "a"}, map[string]any{"type": "update"}, false)
	call("m3", "t6", "Write", map[string]any{"file_path": "/w/a.go", "content": "a"}, ok, false)      // read before: written over
	call("m3", "t7", "Write", map[string]any{"file_path": "/w/fresh.go", "content": "a"}, ok, false)  // never seen: created
	call("m3", "t7f", "Write", map[string]any{"file_path": "/w/denied.go", "content": "a"}, ok, true) // failed: made nothing
	call("m4", "t8", "Task", map[string]any{"description": "Review", "subagent_type": "reviewer", "prompt": "PROMPT"}, ok, false)
	rec(map[string]any{"type": "assistant", "isSidechain": true, "message": map[string]any{"id": "side", "role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": "ts", "name": "Bash", "input": map[string]any{"command": "SIDECHAIN"}}}}})
	call("m5", "t9", "mcp__gh__issue", map[string]any{"title": "T"}, ok, false)
	call("m5", "t10", "MultiEdit", map[string]any{"file_path": "/w/a.go", "edits": []any{
		map[string]any{"old_string": "a", "new_string": "b"}, map[string]any{"old_string": "", "new_string": "c\nd"}}}, ok, false)
	// A rewind: the first branch of the second prompt is abandoned.
	parent = fork
	rec(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "second, abandoned"}})
	call("m6", "t11", "Bash", map[string]any{"command": "ABANDONED"}, ok, false)
	parent = fork
	rec(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "second"}})
	call("m7", "t12", "WebFetch", map[string]any{"url": "https://example.com/x", "prompt": "P"}, nil, false)

	sp := spineFromString(t, strings.Join(lines, "\n")+"\n")
	var got []string
	for _, e := range sp.Entries {
		for _, d := range e.Deeds {
			got = append(got, fmt.Sprintf("%s %d %q %s +%d-%d lines=%v created=%v failed=%v",
				d.Tool, d.Kind, d.Target, d.Agent, d.Added, d.Removed, d.Lines, d.Created, d.Failed))
		}
	}
	want := []string{
		`Read 7 "/w/a.go"  +0-0 lines=false created=false failed=false`,
		`Edit 1 "/w/a.go"  +2-1 lines=true created=false failed=false`,
		`Bash 3 "go test ./..."  +0-0 lines=false created=false failed=true`,
		`Write 2 "/w/new.go"  +2-0 lines=true created=true failed=false`,
		`Write 2 "/w/old.go"  +1-0 lines=true created=false failed=false`,
		`Write 2 "/w/a.go"  +1-0 lines=true created=false failed=false`,
		`Write 2 "/w/fresh.go"  +1-0 lines=true created=true failed=false`,
		`Write 2 "/w/denied.go"  +1-0 lines=true created=false failed=true`,
		`Task 4 "Review" reviewer +0-0 lines=false created=false failed=false`,
		`mcp__gh__issue 9 ""  +0-0 lines=false created=false failed=false`,
		`MultiEdit 1 "/w/a.go"  +3-1 lines=true created=false failed=false`,
		`WebFetch 5 "https://example.com/x"  +0-0 lines=false created=false failed=false`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("deeds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
