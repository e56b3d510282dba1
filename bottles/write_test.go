package bottles

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// bottleAt renders a minimal full bottle whose transcript was read to
// offset, with an optional memory cursor.
func bottleAt(t *testing.T, id string, offset int64, mem *sources.ClaudeMemCursor, mode render.Mode) *render.Bottle {
	t.Helper()
	in := render.Input{SessionID: id, Now: testNow}
	switch mode {
	case render.ModeFull:
		in.Spine = &sources.Spine{SessionID: id, Entries: []sources.Entry{{Kind: sources.EntryUser, Text: "hello at " + string(rune('a'+offset%26))}},
			Files: []sources.FileState{{Session: id, Path: "/p/" + id + ".jsonl", ID: sources.FileID{Dev: 1, Ino: 2}, Offset: offset}}}
	case render.ModeReconstructed:
		in.ClaudeMem = &sources.ClaudeMem{ContentSessionID: id, Prompts: []sources.Prompt{{ID: 1, Number: 1, Text: "stored prompt"}}}
	}
	if mem != nil {
		if in.ClaudeMem == nil {
			in.ClaudeMem = &sources.ClaudeMem{ContentSessionID: id}
		}
		in.ClaudeMem.Cursor = *mem
	}
	b, err := render.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteNeverMovesBackwards(t *testing.T) {
	cur := func(obs int64) *sources.ClaudeMemCursor {
		return &sources.ClaudeMemCursor{DB: sources.FileID{Ino: 9}, Observation: obs}
	}
	const full, recon = render.ModeFull, render.ModeReconstructed
	// src is what a render of the session read: its transcript up to
	// offset, claude-mem's records up to mem.
	type src struct {
		offset int64
		mem    *sources.ClaudeMemCursor
		mode   render.Mode
	}
	tests := []struct {
		name        string
		first, then src
		want        Outcome
		keepFirst   bool
	}{
		{"newer transcript replaces",
			src{100, nil, full}, src{200, nil, full}, Written, false},
		{"older transcript is refused",
			src{200, nil, full}, src{100, nil, full}, Covered, true},
		{"same sources is a no-op",
			src{100, cur(5), full}, src{100, cur(5), full}, Covered, true},
		{"newer memory replaces",
			src{100, cur(5), full}, src{100, cur(6), full}, Written, false},
		{"older memory is refused",
			src{100, cur(6), full}, src{100, cur(5), full}, Covered, true},
		{"crossed (newer transcript, older memory) is refused",
			src{100, cur(6), full}, src{200, cur(5), full}, Crossed, true},
		{"crossed (older transcript, newer memory) is refused",
			src{200, cur(5), full}, src{100, cur(6), full}, Crossed, true},
		{"rows of a database that is gone are not dropped for want of one",
			src{100, cur(6), full}, src{200, nil, full}, Crossed, true},
		{"a cursor of another database file is not taken for the one there is",
			src{100, cur(6), full}, src{100, &sources.ClaudeMemCursor{DB: sources.FileID{Ino: 10}, Observation: 1}, full}, Crossed, true},
		{"full is never replaced by reconstructed",
			src{100, cur(5), full}, src{0, cur(50), recon}, KeptFull, true},
		{"reconstructed is replaced by full",
			src{0, cur(5), recon}, src{100, cur(5), full}, Written, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bottles")
			first := bottleAt(t, "s", tc.first.offset, tc.first.mem, tc.first.mode)
			then := bottleAt(t, "s", tc.then.offset, tc.then.mem, tc.then.mode)
			if got, err := storeAt(dir).Write(first); err != nil || got != Written {
				t.Fatalf("first Write = %v, %v", got, err)
			}
			got, err := storeAt(dir).Write(then)
			if err != nil || got != tc.want {
				t.Fatalf("second Write = %v, %v; want %v", got, err, tc.want)
			}
			onDisk, err := os.ReadFile(BottlePath(dir, "s"))
			if err != nil {
				t.Fatal(err)
			}
			want := then.Bytes
			if tc.keepFirst {
				want = first.Bytes
			}
			if string(onDisk) != string(want) {
				t.Errorf("bottle on disk is not the expected one")
			}
			assertNoTemp(t, dir)
		})
	}
}

// TestWriteReplacedDatabase replaces claude-mem's database by another
// file: a bottle read from the file that is there now replaces one read
// from the file that is gone, and not the other way round.
func TestWriteReplacedDatabase(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "bottles")
	if err := os.WriteFile(sources.ClaudeMemFile(data), []byte("a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(sources.ClaudeMemFile(data))
	if err != nil {
		t.Fatal(err)
	}
	old := &sources.ClaudeMemCursor{DB: sources.FileID{Ino: 1}, MemorySessionID: "m-old", Observation: 871}
	now := &sources.ClaudeMemCursor{DB: sources.FileIDOf(info), MemorySessionID: "m-new", Observation: 1}
	if got, err := storeAt(dir).Write(bottleAt(t, "s", 100, old, render.ModeFull)); err != nil || got != Written {
		t.Fatalf("first Write = %v, %v", got, err)
	}
	if got, err := storeAt(dir).Write(bottleAt(t, "s", 100, now, render.ModeFull)); err != nil || got != Written {
		t.Fatalf("Write of a bottle read from the database there is now = %v, %v; want written", got, err)
	}
	if got, err := storeAt(dir).Write(bottleAt(t, "s", 100, old, render.ModeFull)); err != nil || got != Covered {
		t.Fatalf("Write of a bottle read from the database that is gone = %v, %v; want unchanged (kept)", got, err)
	}
}

func TestWritePermissions(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "bottles")
	if err := os.MkdirAll(dir, 0o755); err != nil { // made by someone else, too open
		t.Fatal(err)
	}
	if _, err := storeAt(dir).Write(bottleAt(t, "s", 1, nil, render.ModeFull)); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, BottlePath(dir, "s"): 0o600} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s mode = %v, want %v", path, got, want)
		}
	}
	fresh := filepath.Join(t.TempDir(), "new", "bottles")
	if _, err := storeAt(fresh).Write(bottleAt(t, "s", 1, nil, render.ModeFull)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{fresh, filepath.Dir(fresh)} {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, err %v; want 0700", d, info.Mode().Perm(), err)
		}
	}
}

// TestWriteConcurrent races writers of the same session with different
// source offsets: whatever the interleaving, the bottle left on disk is
// complete and is the newest.
func TestWriteConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bottles")
	const writers = 16
	bottles := make([]*render.Bottle, writers)
	for i := range bottles {
		bottles[i] = bottleAt(t, "s", int64(100+i), nil, render.ModeFull)
	}
	var wg sync.WaitGroup
	for round := 0; round < 20; round++ {
		for i := range bottles {
			wg.Go(func() {
				if _, err := storeAt(dir).Write(bottles[(i*7+round)%writers]); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	got, err := os.ReadFile(BottlePath(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(bottles[writers-1].Bytes) {
		t.Errorf("bottle on disk is not the newest one")
	}
	assertNoTemp(t, dir)
}

func TestCleanTemp(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	stale := filepath.Join(dir, tempPrefix+"s-1.md")
	fresh := filepath.Join(dir, tempPrefix+"s-2.md")
	keep := filepath.Join(dir, "s.md")
	for _, p := range []string{stale, fresh, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(stale, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	n, young, err := storeAt(dir, now).CleanTemp()
	if err != nil || n != 1 || young != 1 {
		t.Fatalf("CleanTemp = %d removed, %d young, %v; want 1 and 1", n, young, err)
	}
	for p, exists := range map[string]bool{stale: false, fresh: true, keep: true} {
		if _, err := os.Stat(p); (err == nil) != exists {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), err == nil, exists)
		}
	}
	if n, _, err := storeAt(filepath.Join(dir, "absent"), now).CleanTemp(); err != nil || n != 0 {
		t.Errorf("CleanTemp of a missing dir = %d, %v", n, err)
	}
}

func TestReadState(t *testing.T) {
	dir := t.TempDir()
	b := bottleAt(t, "s", 42, &sources.ClaudeMemCursor{Prompt: 3}, render.ModeFull)
	if _, err := storeAt(dir).Write(b); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(BottlePath(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Covers(&b.State) || !b.State.Covers(st) || st.Transcripts[0].Offset != 42 || st.ClaudeMem.Prompt != 3 {
		t.Errorf("state read back = %+v, want %+v", st, b.State)
	}
	for name, content := range map[string]string{
		"not a bottle":     "# notes\nline\nline\nline\n",
		"short":            "# x\n",
		"broken json":      "a\nb\nc\n" + stateOpen + "{nope" + stateClose + "\n",
		"state on line 5":  "a\nb\nc\n\n" + stateOpen + "{}" + stateClose + "\n",
		"unterminated tag": "a\nb\nc\n" + stateOpen + "{}\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".md")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadState(p); err == nil {
			t.Errorf("%s: ReadState succeeded", name)
		}
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestWriteAfterRewrite renders a transcript, rewrites the file shorter in
// place (same inode) and renders again: the first bottle's offset is
// larger, but it describes bytes the file no longer holds, so it goes.
func TestWriteAfterRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	line := func(uuid, text string) string {
		return `{"type":"user","uuid":"` + uuid + `","parentUuid":null,"message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	render := func() *render.Bottle {
		tr, err := sources.ReadTranscript("s", path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := render.Render(render.Input{SessionID: "s", Spine: sources.BuildSpine("s", []*sources.Transcript{tr}), Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := os.WriteFile(path, []byte(line("u1", "OLD first prompt")+line("u2", "OLD second prompt")), 0o600); err != nil {
		t.Fatal(err)
	}
	bottles := filepath.Join(dir, "bottles")
	if _, err := storeAt(bottles).Write(render()); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line("v1", "NEW prompt"))
	f.Close()
	newer := render()
	if got, err := storeAt(bottles).Write(newer); err != nil || got != Written {
		t.Fatalf("Write after rewrite = %v, %v; want Written", got, err)
	}
	if got, err := storeAt(bottles).Write(newer); err != nil || got != Covered {
		t.Fatalf("second Write = %v, %v; want Covered", got, err)
	}
	data, _ := os.ReadFile(BottlePath(bottles, "s"))
	if !strings.Contains(string(data), "NEW prompt") || strings.Contains(string(data), "OLD") {
		t.Errorf("bottle does not show the rewritten transcript:\n%s", data)
	}
}
