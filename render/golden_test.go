package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/sources"
)

var update = flag.Bool("update", false, "rewrite the golden bottles in testdata/render")

// goldenNow is the render time of every golden bottle.
var goldenNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// TestGolden renders every case in testdata/render (see its README): the
// bottle must match bottle.golden.md byte for byte (rewrite with -update),
// and must satisfy the case's expect.txt and order.txt oracles, which were
// written independently of the renderer.
func TestGolden(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, b := renderCase(t, dir)
			checkOracles(t, dir, in, b.Bytes)
			golden := filepath.Join(dir, "bottle.golden.md")
			if *update {
				if err := os.WriteFile(golden, b.Bytes, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./render -run TestGolden -update)", err)
			}
			if !bytes.Equal(b.Bytes, want) {
				t.Errorf("bottle differs from %s (rerun with -update and review the diff):\n%s", golden, firstDiff(want, b.Bytes))
			}
		})
	}
}

// loadCase installs a case's transcripts as a project directory (so that
// the chain is found the way the daemon finds it) and builds the input.
// File identities and paths are replaced by fixed ones so the golden
// bottle does not depend on where the test runs.
func loadCase(t *testing.T, dir string) Input {
	t.Helper()
	in := Input{Now: goldenNow, Location: time.UTC, SessionID: expectedSession(t, dir)}
	if data, err := os.ReadFile(filepath.Join(dir, "memory.json")); err == nil {
		in.ClaudeMem = &sources.ClaudeMem{}
		if err := json.Unmarshal(data, in.ClaudeMem); err != nil {
			t.Fatalf("memory.json: %v", err)
		}
	}
	main := filepath.Join(dir, "transcript.jsonl")
	if _, err := os.Stat(main); err != nil {
		return in
	}
	project := t.TempDir()
	var path string
	for _, name := range []string{"predecessor2.jsonl", "predecessor.jsonl", "transcript.jsonl"} {
		src := filepath.Join(dir, name)
		data, err := os.ReadFile(src)
		if err != nil {
			continue
		}
		id := fileSession(t, data)
		if name == "transcript.jsonl" {
			id = in.SessionID
		}
		dst := filepath.Join(project, id+".jsonl")
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
		path = dst
	}
	installSubagents(t, dir, filepath.Join(project, in.SessionID))
	chain, err := sources.ReadChain(in.SessionID, path)
	if err != nil {
		t.Fatal(err)
	}
	in.Spine = sources.BuildSpine(in.SessionID, chain)
	for i := range in.Spine.Files {
		f := &in.Spine.Files[i]
		rel, err := filepath.Rel(project, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		f.Path = "/home/u/.claude/projects/-case/" + filepath.ToSlash(rel)
		f.ID, f.Mod = sources.FileID{}, 0 // machine-dependent
	}
	return in
}

// installSubagents copies a case's subagents/ files (side-question
// transcripts) to where Claude Code keeps them: <sessionId>/subagents/
// beside the session's transcript.
func installSubagents(t *testing.T, dir, sessionDir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "subagents", "*.jsonl"))
	if err != nil || len(files) == 0 {
		return
	}
	dst := filepath.Join(sessionDir, "subagents")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// expectLine returns the rest of the first line of a case's expect.txt
// that starts with prefix, and whether there is one.
func expectLine(t *testing.T, dir, prefix string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if s, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(s), true
		}
	}
	return "", false
}

// expectedSession reads the "# session:" line of expect.txt.
func expectedSession(t *testing.T, dir string) string {
	t.Helper()
	s, ok := expectLine(t, dir, "# session:")
	if !ok {
		t.Fatalf("%s/expect.txt has no '# session:' line", dir)
	}
	return s
}

// fileSession is the sessionId of the first record that has one.
func fileSession(t *testing.T, data []byte) string {
	t.Helper()
	for line := range bytes.Lines(data) {
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &r) == nil && r.SessionID != "" {
			return r.SessionID
		}
	}
	t.Fatal("no sessionId in file")
	return ""
}

func checkOracles(t *testing.T, dir string, in Input, bottle []byte) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "+ "):
			if !bytes.Contains(bottle, []byte(line[2:])) {
				t.Errorf("bottle lacks %q", line[2:])
			}
		case strings.HasPrefix(line, "- "):
			if bytes.Contains(bottle, []byte(line[2:])) {
				t.Errorf("bottle contains %q", line[2:])
			}
		case strings.HasPrefix(line, "users "), strings.HasPrefix(line, "assistants "):
			kind, n, _ := strings.Cut(line, " ")
			want, _ := strconv.Atoi(n)
			if got := countKind(in, bottle, kind); got != want {
				t.Errorf("%s = %d, want %d", kind, got, want)
			}
		case strings.HasPrefix(line, "lines "):
			n, prefix, _ := strings.Cut(line[len("lines "):], " ")
			want, _ := strconv.Atoi(n)
			if got := linesStarting(bottle, prefix); got != want {
				t.Errorf("lines starting %q = %d, want %d", prefix, got, want)
			}
		}
	}
	checkOutline(t, bottle)
	data, err := os.ReadFile(filepath.Join(dir, "order.txt"))
	if err != nil {
		return
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rest := bottle
		for _, want := range strings.Split(line, " >> ") {
			i := bytes.Index(rest, []byte(want))
			if i < 0 {
				t.Errorf("order %q: %q not found after the previous item", line, want)
				break
			}
			rest = rest[i+len(want):]
		}
	}
}

// linesStarting counts the bottle's lines that start with prefix.
func linesStarting(bottle []byte, prefix string) int {
	n := 0
	for line := range bytes.Lines(bottle) {
		if bytes.HasPrefix(line, []byte(prefix)) {
			n++
		}
	}
	return n
}

// checkOutline checks that every outline entry points at the heading of a
// turn or a leg, whatever the messages hold.
func checkOutline(t *testing.T, bottle []byte) {
	t.Helper()
	lines := strings.Split(string(bottle), "\n")
	for _, l := range lines {
		rest, ok := strings.CutPrefix(l, "- line ")
		if !ok {
			if l == "## Original request" || strings.HasPrefix(l, "---") {
				return // the outline is over
			}
			continue
		}
		num, _, _ := strings.Cut(rest, " ")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > len(lines) {
			t.Errorf("outline entry %q points nowhere", l)
			continue
		}
		target := lines[n-1]
		if !strings.HasPrefix(target, "**User") && !strings.HasPrefix(target, "## Leg") &&
			!strings.HasPrefix(target, "**Assistant") && target != "*What happened:*" {
			t.Errorf("outline entry %q points at %q", l, target)
		}
	}
}

// countKind counts the spine's user messages or assistant messages with
// text; in reconstructed mode, the user messages the bottle shows.
func countKind(in Input, bottle []byte, kind string) int {
	n := 0
	if in.Spine == nil {
		if kind == "users" {
			return bytes.Count(bottle, []byte("\n**User**"))
		}
		return bytes.Count(bottle, []byte("\n**Assistant**"))
	}
	for _, e := range in.Spine.Entries {
		switch {
		case kind == "users" && e.Kind == sources.EntryUser,
			kind == "assistants" && e.Kind == sources.EntryAssistant && e.Text != "":
			n++
		}
	}
	return n
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(no line differs)"
}
