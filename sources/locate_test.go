package sources

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// TestFindTranscript: a session's transcript is found in whichever
// project holds it; what stands under its name but is not a regular file
// is reported as what it is (ErrNotRegular), not as no transcript.
func TestFindTranscript(t *testing.T) {
	const id = "3f9c2a71-5d0e-4b8a-9c61-2e7f0a4d8b15"
	fifo := func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	regular := func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	directory := func(t *testing.T, path string) {
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	type put func(t *testing.T, path string)
	tests := []struct {
		name     string
		projects map[string]put // project directory → what stands at id.jsonl in it
		want     string         // the project whose transcript is found
		wantErr  error
		wantMsg  string // in the error, after the path of what is there
	}{
		{name: "in one project", projects: map[string]put{"-home-dev-app": regular}, want: "-home-dev-app"},
		{name: "nowhere", projects: map[string]put{"-home-dev-app": nil}, wantErr: ErrNoTranscript},
		{name: "a named pipe", projects: map[string]put{"-home-dev-app": fifo}, wantErr: ErrNotRegular, wantMsg: " is a named pipe, not a regular file"},
		{name: "a directory", projects: map[string]put{"-home-dev-app": directory}, wantErr: ErrNotRegular, wantMsg: " is a directory, not a regular file"},
		{name: "a named pipe beside a transcript", projects: map[string]put{"-home-dev-app": fifo, "-home-dev-lib": regular}, want: "-home-dev-lib"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			claude := t.TempDir()
			var odd string
			for project, place := range tc.projects {
				dir := filepath.Join(ProjectsDir(claude), project)
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if place != nil {
					place(t, filepath.Join(dir, id+".jsonl"))
					odd = filepath.Join(dir, id+".jsonl")
				}
			}
			got, err := FindTranscript(claude, id)
			if tc.wantErr == nil {
				if want := filepath.Join(ProjectsDir(claude), tc.want, id+".jsonl"); err != nil || got != want {
					t.Errorf("FindTranscript = %q, %v; want %q", got, err, want)
				}
				return
			}
			if got != "" || !errors.Is(err, tc.wantErr) {
				t.Fatalf("FindTranscript = %q, %v; want an error that is %v", got, err, tc.wantErr)
			}
			if errors.Is(err, ErrNotRegular) && errors.Is(err, ErrNoTranscript) {
				t.Errorf("FindTranscript: %v is both ErrNoTranscript and ErrNotRegular", err)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), odd+tc.wantMsg) {
				t.Errorf("FindTranscript: %v; want it to say %q", err, odd+tc.wantMsg)
			}
		})
	}
}
