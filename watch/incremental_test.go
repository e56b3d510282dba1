package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestIncrementalRenderEqualsOneShot grows a copy of every real fixture in
// random chunks (cutting lines anywhere), rendering through the daemon's
// own path after each chunk, and checks that the final bottle is byte for
// byte the one a one-shot render of the whole file gives.
func TestIncrementalRenderEqualsOneShot(t *testing.T) {
	t.Parallel()
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
			d, path := incrementalDaemon(t, id, now)
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s := &session{id: id}
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for off := 0; off < len(data); {
				n := min(len(data)-off, 1+rng.IntN(max(len(data)/40, 64)))
				growfile.Append(t, path, data[off:off+n])
				off += n
				if res := d.renderSession(context.Background(), s, false); res.err != nil {
					t.Fatal(res.err)
				}
			}
			tr, err := sources.ReadTranscript(id, path)
			if err != nil {
				t.Fatal(err)
			}
			equalsOneShot(t, d, id, []*sources.Transcript{tr}, now)
		})
	}
}

// incrementalDaemon makes a daemon, not running, on new directories, with
// the clock stopped at now, that knows session id's transcript to be at
// path, in a project directory made for it.
func incrementalDaemon(t *testing.T, id string, now time.Time) (d *Daemon, path string) {
	t.Helper()
	root := t.TempDir()
	d = New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data"), Now: func() time.Time { return now }})
	path = filepath.Join(root, "claude", "projects", "p", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	d.paths[id] = path
	return d, path
}

// equalsOneShot checks that the bottle of session id that d wrote is byte
// for byte the one a one-shot render of chain gives (and that there is
// none if that render fails), but for the transcripts' times in its state
// (see withoutTimes).
func equalsOneShot(t *testing.T, d *Daemon, id string, chain []*sources.Transcript, now time.Time) {
	t.Helper()
	got, gotErr := os.ReadFile(bottles.BottlePath(d.store.Dir, id))
	want, wantErr := render.Render(render.Input{SessionID: id, Spine: sources.BuildSpine(id, chain), Now: now, Location: time.Local})
	switch {
	case wantErr != nil:
		if gotErr == nil {
			t.Fatalf("one-shot render failed (%v) but the daemon wrote a bottle", wantErr)
		}
	case gotErr != nil:
		t.Fatalf("no bottle from the daemon's path: %v", gotErr)
	case !bytes.Equal(withoutTimes(t, got), withoutTimes(t, want.Bytes)):
		t.Fatalf("the daemon's incremental bottle differs from the one-shot render:\n%s\n----\n%s", got, want.Bytes)
	}
}

// withoutTimes is bottle b with the transcripts' times (FileState.Mod)
// left out of its state line, and its byte count made again: a read of
// the whole file records the file's time, once old enough to be trusted,
// and a read of appended lines records none (sources.CheckedWhole), so
// the two paths differ there by design.
func withoutTimes(t *testing.T, b []byte) []byte {
	t.Helper()
	st, err := render.StateOf(b)
	if err != nil {
		t.Fatalf("the bottle has no state line (%v):\n%s", err, b)
	}
	for i := range st.Transcripts {
		st.Transcripts[i].Mod = 0
	}
	st.Bytes = 0
	lines := bytes.SplitAfterN(b, []byte("\n"), 5)
	line, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	lines[3] = line
	return bytes.Join(lines, nil)
}

// TestIncrementalCasesEqualOneShot is TestIncrementalRenderEqualsOneShot
// over the synthetic render cases (testdata/render) that are one
// transcript, with the side-question transcripts beside it growing along
// with it: the queue replay, undelivered messages and asides give, at
// every cut, what a one-shot read of the same bytes gives.
func TestIncrementalCasesEqualOneShot(t *testing.T) {
	t.Parallel()
	cases, _ := filepath.Glob(filepath.Join("..", "testdata", "render", "*", "transcript.jsonl"))
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/render")
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i, c := range cases {
		dir := filepath.Dir(c)
		if _, err := os.Stat(filepath.Join(dir, "predecessor.jsonl")); err == nil {
			continue // chains: see chain_test.go
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			id := caseSession(t, dir)
			d, path := incrementalDaemon(t, id, now)
			srcs := []string{c}
			dsts := []string{path}
			asides, _ := filepath.Glob(filepath.Join(dir, "subagents", "*.jsonl"))
			for _, a := range asides {
				srcs = append(srcs, a)
				dsts = append(dsts, filepath.Join(sources.SubagentsDir(path), filepath.Base(a)))
			}
			var datas [][]byte
			for k, src := range srcs {
				data, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				datas = append(datas, data)
				if k == 0 {
					if err := os.WriteFile(dsts[k], nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			s := &session{id: id}
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			offs := make([]int, len(datas))
			for done := false; !done; {
				done = true
				for k, data := range datas {
					if offs[k] == len(data) {
						continue
					}
					n := min(len(data)-offs[k], 1+rng.IntN(max(len(data)/20, 64)))
					if k > 0 && offs[k] == 0 {
						if err := os.MkdirAll(filepath.Dir(dsts[k]), 0o700); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(dsts[k], nil, 0o600); err != nil {
							t.Fatal(err)
						}
					}
					growfile.Append(t, dsts[k], data[offs[k]:offs[k]+n])
					offs[k] += n
					done = done && offs[k] == len(data)
				}
				if res := d.renderSession(context.Background(), s, false); res.err != nil {
					t.Fatal(res.err)
				}
			}
			chain, err := sources.ReadChain(id, path)
			if err != nil {
				t.Fatal(err)
			}
			equalsOneShot(t, d, id, chain, now)
		})
	}
}

// caseSession reads the "# session:" line of a render case's expect.txt.
func caseSession(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if s, ok := strings.CutPrefix(line, "# session:"); ok {
			return strings.TrimSpace(s)
		}
	}
	t.Fatalf("%s/expect.txt has no '# session:' line", dir)
	return ""
}
