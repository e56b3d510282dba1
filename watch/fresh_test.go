package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestCheckFreshTellsBottlesWithoutTranscriptApart checks two bottles the
// daemon knows no transcript of (as catch-up checks the bottles whose
// transcript is gone), of the same size and modification time: finding
// one fresh says nothing of the other, which is stale.
func TestCheckFreshTellsBottlesWithoutTranscriptApart(t *testing.T) {
	root := t.TempDir()
	d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data")})
	const gone, grown = "0f1e0000-0000-4000-8000-000000000001", "0f1e0000-0000-4000-8000-000000000002"
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	paths := map[string]string{}
	for _, id := range []string{gone, grown} {
		path := filepath.Join(root, "claude", "projects", "-p", id+".jsonl")
		paths[id] = path
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		r := synth.Rec{Session: id, UUID: "u1", At: at, CWD: "/p"}
		if err := os.WriteFile(path, []byte(r.User("CHECK-P1 what time is it")), 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := sources.ReadTranscript(id, path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := render.Render(render.Input{SessionID: id, Spine: sources.BuildSpine(id, []*sources.Transcript{tr}), Now: at})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.store.Write(b); err != nil {
			t.Fatal(err)
		}
		// Long settled, and the same for both.
		if err := os.Chtimes(bottles.BottlePath(d.store.Dir, id), at, at); err != nil {
			t.Fatal(err)
		}
	}
	// One's transcript is gone (its bottle keeps what it had: fresh); the
	// other's has a new prompt (stale).
	if err := os.Remove(paths[gone]); err != nil {
		t.Fatal(err)
	}
	r := synth.Rec{Session: grown, UUID: "u2", Parent: "u1", At: at, CWD: "/p"}
	f, err := os.OpenFile(paths[grown], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(r.User("CHECK-P2 and the date")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	a, errA := os.Stat(bottles.BottlePath(d.store.Dir, gone))
	b, errB := os.Stat(bottles.BottlePath(d.store.Dir, grown))
	if errA != nil || errB != nil || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		t.Fatalf("the two bottles differ in size or time (%v, %v): the test needs them alike", errA, errB)
	}

	ctx := context.Background()
	for _, tailFirst := range []bool{false, true} { // the rescan's check, the catch-up's
		if out, _ := d.checkFresh(ctx, gone, "", fileStamp{}, tailFirst); out != outcomeFresh {
			t.Errorf("tailFirst %v: the bottle whose transcript is gone is %q, want fresh", tailFirst, out)
		}
		if out, _ := d.checkFresh(ctx, grown, "", fileStamp{}, tailFirst); out != "" {
			t.Errorf("tailFirst %v: the bottle whose transcript grew is %q, as the other bottle without a transcript path was", tailFirst, out)
		}
	}
}
