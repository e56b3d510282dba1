package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// outsideBottle writes, outside the data directory, a file that passes for
// the bottle of session id and holds word.
func outsideBottle(t *testing.T, id, word string) string {
	t.Helper()
	b, err := render.Render(render.Input{SessionID: id, Now: testNow, Location: time.UTC, Spine: &sources.Spine{SessionID: id,
		Entries: []sources.Entry{{Kind: sources.EntryUser, Text: word + " from outside", Time: testNow}}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "elsewhere.md")
	if err := os.WriteFile(path, b.Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadRefusesLinkedBottles: a bottle, live or archived, that is a
// symbolic link (bottled makes none) is never read through, as the index
// never takes one in: read says so, and where the session has a transcript
// it renders the bottle anew in place of the link, leaving what the link
// pointed to alone.
func TestReadRefusesLinkedBottles(t *testing.T) {
	tests := []struct {
		name       string
		archived   bool
		transcript bool
	}{
		{"live, no transcript", false, false},
		{"archived, no transcript", true, false},
		{"live, with a transcript", false, true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "", "/p")
			id := []string{"linked-live", "linked-archived", "linked-rendered"}[i]
			outside := outsideBottle(t, id, "OUTSIDEWORD")
			dir := bottles.BottlesDir(e.data)
			link := bottles.BottlePath(dir, id)
			if tc.archived {
				link = filepath.Join(bottles.ArchiveDir(dir), "20261130T120000Z-"+id+".1.md")
			}
			if err := safefile.MkdirPrivate(filepath.Dir(link)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			if tc.transcript {
				path := filepath.Join(e.claude, "projects", "-p", id+".jsonl")
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				rec := synth.Rec{Session: id, UUID: "u1", At: testNow, CWD: "/p"}.User("INSIDEWORD from the transcript")
				if err := os.WriteFile(path, []byte(rec), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			text, isErr := e.call(t, "read", map[string]any{"session": id})
			if strings.Contains(text, "OUTSIDEWORD") {
				t.Fatalf("read served the file the link points to: %.300q", text)
			}
			switch {
			case tc.transcript && (isErr || !strings.Contains(text, "INSIDEWORD")):
				t.Errorf("read = %v %.300q; want the bottle rendered from the transcript", isErr, text)
			case !tc.transcript && (!isErr || !strings.Contains(text, "symbolic link")):
				t.Errorf("read = %v %.300q; want an error naming the link", isErr, text)
			}
			if b, err := os.ReadFile(outside); err != nil || !strings.Contains(string(b), "OUTSIDEWORD") {
				t.Errorf("the file the link points to changed: %v", err)
			}
		})
	}
}

// TestReadLongState: a bottle whose state line is longer than any read
// buffer (a session continued over many transcripts with long paths) is
// read like any other.
func TestReadLongState(t *testing.T) {
	e := newEnv(t, "", "/p")
	const id = "long-state"
	sp := &sources.Spine{SessionID: id, CWD: "/" + strings.Repeat("deep/", 1000),
		Entries: []sources.Entry{{Kind: sources.EntryUser, Text: "LONGWORD a prompt", Time: testNow}}}
	for i := range 20 {
		sp.Files = append(sp.Files, sources.FileState{Session: id, Path: "/" + strings.Repeat("x", 300) + "/" + id + ".jsonl",
			ID: sources.FileID{Dev: 1, Ino: uint64(i + 1)}, Offset: 10})
	}
	b, err := render.Render(render.Input{SessionID: id, Spine: sp, Now: testNow, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
		t.Fatal(err)
	}
	if text := e.ok(t, "read", map[string]any{"session": id, "from": 1}); !strings.Contains(text, "LONGWORD a prompt") {
		t.Errorf("read: %.300q", text)
	}
}
