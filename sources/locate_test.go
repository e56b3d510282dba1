package sources

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestChainBack(t *testing.T) {
	tests := []struct {
		name  string
		links map[string]string
		from  string
		want  []string
	}{
		{"none", map[string]string{"x": "y"}, "a", nil},
		{"two back", map[string]string{"a": "b", "b": "c"}, "c", []string{"a", "b"}},
		{"a loop ends", map[string]string{"a": "b", "b": "a"}, "b", []string{"a"}},
		{"a loop through itself ends", map[string]string{"a": "b", "b": "c", "c": "a"}, "c", []string{"a", "b"}},
		{"two claim one successor: the same pick every time", map[string]string{"z": "c", "m": "c"}, "c", []string{"m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order must not matter
				if got := ChainBack(tc.links, tc.from); !slices.Equal(got, tc.want) {
					t.Fatalf("ChainBack = %v, want %v", got, tc.want)
				}
			}
		})
	}
	long := map[string]string{}
	for i := range maxChain + 10 {
		long[string(rune('A'+i))] = string(rune('A' + i + 1))
	}
	if got := ChainBack(long, string(rune('A'+maxChain+10))); len(got) != maxChain {
		t.Errorf("a chain of %d predecessors gave %d, want the cap %d", maxChain+10, len(got), maxChain)
	}
}

// TestProjectKey checks Claude Code's project directory names, with
// expected values from the JavaScript the reference quotes, run in node.
func TestProjectKey(t *testing.T) {
	long := "/home/u/" + strings.Repeat("très-long-répertoire/", 12) + "😀/.claude-mem/observer-sessions"
	tests := []struct{ path, want string }{
		{"/home/u/.claude-mem/observer-sessions", "-home-u--claude-mem-observer-sessions"},
		{"/Users/me/.agents", "-Users-me--agents"},
		{`C:\Users\x`, "C--Users-x"},
		{"/tmp/é😀x", "-tmp----x"},
		{long, "-home-u-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr-s-long-r-pertoire-tr--p0ikag"},
	}
	for _, tc := range tests {
		if got := ProjectKey(tc.path); got != tc.want {
			t.Errorf("ProjectKey(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestIsObserverSession(t *testing.T) {
	const data = "/home/u/.claude-mem"
	tests := []struct {
		path, cwd string
		want      bool
	}{
		{"/home/u/.claude/projects/-home-u--claude-mem-observer-sessions/s.jsonl", "", true},
		{"/home/u/.claude/projects/-x/s.jsonl", "/home/u/.claude-mem/observer-sessions", true},
		{"/home/u/.claude/projects/-x/s.jsonl", "/home/u/.claude-mem/observer-sessions/sub", true},
		{"/home/u/.claude/projects/-x/s.jsonl", "/home/u/.claude-mem/observer-sessions-2", false},
		{"/home/u/.claude/projects/-home-u-app/s.jsonl", "/home/u/app", false},
	}
	for _, tc := range tests {
		if got := IsObserverSession(tc.path, tc.cwd, data); got != tc.want {
			t.Errorf("IsObserverSession(%q, %q) = %v, want %v", tc.path, tc.cwd, got, tc.want)
		}
	}
}

// TestLinks reads the links at the tails of a directory's transcripts, in
// the directory's order: a file read after a longer one with a link (its
// tail read into the same room) has none of its own, nor has one whose
// link is further back than the window searched.
func TestLinks(t *testing.T) {
	link := func(to string) string {
		return `{"type":"continued-in","continuedInSessionId":"` + to + `"}` + "\n"
	}
	filler := func(n int) string {
		return strings.Repeat(`{"type":"user","message":{"content":"x"}}`+"\n", n/42+1)
	}
	files := []struct{ name, content string }{
		{"a1.jsonl", filler(2*continuedInWindow) + link("b1")},
		{"a2.jsonl", filler(100)}, // shorter, after a1: a1's tail must not be read as its own
		{"a3.jsonl", link("b3") + filler(2*continuedInWindow)},
		{"a4.jsonl", filler(10) + link("b4")},
		{"a5.jsonl", ""},
		{"agent-a6.jsonl", link("b6")},
		{"notes.txt", link("b7")},
	}
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Links(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a1": "b1", "a4": "b4"}; !maps.Equal(got, want) {
		t.Fatalf("Links = %v, want %v", got, want)
	}
}
