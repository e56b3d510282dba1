package watch

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestIncrementalRenderEqualsOneShot grows a copy of every real fixture in
// random chunks (cutting lines anywhere), rendering through the daemon's
// own path after each chunk, and checks that the final bottle is byte for
// byte the one a one-shot render of the whole file gives.
func TestIncrementalRenderEqualsOneShot(t *testing.T) {
	dir := fixtures.Real(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			const id = "s"
			root := t.TempDir()
			d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data"), Now: func() time.Time { return now }})
			path := filepath.Join(root, "claude", "projects", "p", id+".jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			d.paths[id] = path
			s := &session{id: id}
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for off := 0; off < len(data); {
				n := min(len(data)-off, 1+rng.IntN(max(len(data)/40, 64)))
				appendTo(t, path, data[off:off+n])
				off += n
				if off == len(data) {
					// The last render and the one-shot one both see the
					// file's time settled, so both record it in the state.
					waitSettled(t, path)
				}
				if res := d.renderSession(context.Background(), s, false); res.err != nil {
					t.Fatal(res.err)
				}
			}
			got, gotErr := os.ReadFile(bottles.BottlePath(d.store.Dir, id))

			tr, err := sources.ReadTranscript(id, path)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := render.Render(render.Input{SessionID: id, Spine: sources.BuildSpine(id, []*sources.Transcript{tr}), Now: now, Location: time.Local})
			switch {
			case wantErr != nil:
				if gotErr == nil {
					t.Fatalf("one-shot render failed (%v) but the daemon wrote a bottle", wantErr)
				}
			case gotErr != nil:
				t.Fatalf("no bottle from the daemon's path: %v", gotErr)
			case !bytes.Equal(got, want.Bytes):
				t.Fatalf("the daemon's incremental bottle differs from the one-shot render")
			}
		})
	}
}

// waitSettled waits until the file's modification time is old enough that
// a reader records it in a bottle's state (sources.Settled): which it is
// when read depends on the clock otherwise, and the state line with it.
func waitSettled(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if sources.Settled(info.ModTime(), time.Now()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's time never settled", path)
		}
	}
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}
