package bottles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// longBottle renders a full bottle whose header or state line is far over
// a read buffer: a working directory of cwd bytes, and a chain of chain
// transcripts with paths of pathLen bytes, the session's own read to
// offset.
func longBottle(t *testing.T, cwd, chain, pathLen int, offset int64) *render.Bottle {
	t.Helper()
	const id = "s"
	sp := &sources.Spine{SessionID: id, CWD: "/" + strings.Repeat("d", max(cwd-1, 0)),
		Entries: []sources.Entry{{Kind: sources.EntryUser, Text: "a long state"}}}
	for i := range chain {
		session := fmt.Sprintf("p%02d", i)
		if i == chain-1 {
			session = id
		}
		path := "/" + strings.Repeat("x", max(pathLen-len(session)-8, 1)) + "/" + session + ".jsonl"
		sp.Files = append(sp.Files, sources.FileState{Session: session, Path: path, ID: sources.FileID{Dev: 1, Ino: uint64(10 + i)}, Offset: 1000})
	}
	sp.Files[len(sp.Files)-1].Offset = offset
	b, err := render.Render(render.Input{SessionID: id, Spine: sp, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLongStateLine: a bottle whose header or state line is longer than
// any read buffer (a deep working directory, a session chained over many
// transcripts with long paths) has its state read back, by path and from
// its bytes, and a bottle rendered from older sources still does not
// replace it.
func TestLongStateLine(t *testing.T) {
	tests := []struct {
		name                string
		cwd, chain, pathLen int
	}{
		{"short", 10, 1, 40},
		{"cwd of 5 KB", 5000, 1, 40},
		{"cwd of 64 KB", 64 << 10, 1, 40},
		{"17 chained transcripts", 10, 17, 250},
		{"64 chained transcripts of 4 KB paths", 10, 64, 4000},
		{"both", 300 << 10, 64, 4000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bottles")
			newer := longBottle(t, tc.cwd, tc.chain, tc.pathLen, 2000)
			if got, err := storeAt(dir).Write(newer); err != nil || got != Written {
				t.Fatalf("Write = %v, %v", got, err)
			}
			if st, err := ReadState(BottlePath(dir, "s")); err != nil {
				t.Errorf("ReadState: %v", err)
			} else if !st.Covers(&newer.State) || !newer.State.Covers(st) || len(st.Transcripts) != tc.chain {
				t.Errorf("state read back covers %d transcripts, want %d", len(st.Transcripts), tc.chain)
			}
			if _, err := render.StateOf(newer.Bytes); err != nil {
				t.Errorf("StateOf: %v", err)
			}
			if p, err := render.Parse(newer.Bytes, nil); err != nil {
				t.Errorf("Parse: %v", err)
			} else if len(p.Project) != tc.cwd {
				t.Errorf("Parse: project of %d bytes, want %d", len(p.Project), tc.cwd)
			}
			older := longBottle(t, tc.cwd, tc.chain, tc.pathLen, 1500)
			if got, err := storeAt(dir).Write(older); err != nil || got != Covered {
				t.Errorf("Write of a bottle read from older sources = %v, %v; want %v", got, err, Covered)
			}
			if onDisk, _ := os.ReadFile(BottlePath(dir, "s")); string(onDisk) != string(newer.Bytes) {
				t.Error("the bottle on disk moved backwards")
			}
		})
	}
}
