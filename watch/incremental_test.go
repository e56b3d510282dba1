package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
// own path after each chunk, and checks that the bottle is byte for byte
// the one a one-shot render of the same bytes gives: before the last
// chunk, which the daemon read comparing only the bytes before each
// append, and after it, read comparing every byte (see renderStep), when
// every transcript's time counts too.
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
				last := off+n == len(data)
				if last {
					equalsOneShot(t, d, s, readTranscripts(t, id, path), now)
				}
				appendAged(t, path, data[off:off+n])
				off += n
				renderStep(t, d, s, last)
			}
			equalsOneShot(t, d, s, readTranscripts(t, id, path), now)
		})
	}
}

// readTranscripts reads the transcripts of session id, whose own is at
// path, in full.
func readTranscripts(t *testing.T, id, path string) []*sources.Transcript {
	t.Helper()
	chain, err := sources.ReadChain(id, path)
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

// renderStep renders session s through the daemon's path after an
// append; verified, reading its transcripts as the daemon does after a
// rescan found one rewritten, comparing every byte read before
// (sources.Transcript.UpdateVerified): that bottle then records every
// transcript's time, which equalsOneShot compares.
func renderStep(t *testing.T, d *Daemon, s *session, verified bool) {
	t.Helper()
	s.verify = verified
	if res := d.renderSession(context.Background(), s, false); res.err != nil {
		t.Fatal(res.err)
	}
	if paths := appendedOnly(s); verified && len(paths) > 0 {
		t.Fatalf("after a verified read, the daemon compared only the tails of %v", paths)
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

// equalsOneShot checks that the bottle the daemon wrote for session s is
// byte for byte the one a one-shot render of chain gives (and that there
// is none if that render fails), but for the times (FileState.Mod) of the
// transcripts the daemon last read only appended lines of (see
// appendedOnly).
func equalsOneShot(t *testing.T, d *Daemon, s *session, chain []*sources.Transcript, now time.Time) {
	t.Helper()
	got, gotErr := os.ReadFile(bottles.BottlePath(d.store.Dir, s.id))
	want, wantErr := render.Render(render.Input{SessionID: s.id, Spine: sources.BuildSpine(s.id, chain), Now: now, Location: time.Local})
	switch {
	case wantErr != nil:
		if gotErr == nil {
			t.Fatalf("one-shot render failed (%v) but the daemon wrote a bottle", wantErr)
		}
	case gotErr != nil:
		t.Fatalf("no bottle from the daemon's path: %v", gotErr)
	default:
		appended := appendedOnly(s)
		if g, w := withoutAppendedTimes(t, got, appended, true), withoutAppendedTimes(t, want.Bytes, appended, false); !bytes.Equal(g, w) {
			t.Fatalf("the daemon's incremental bottle differs from the one-shot render:\n%s\n----\n%s", g, w)
		}
	}
}

// appendedOnly is the paths of the session's transcripts that the
// daemon's last read of appended lines compared only the few KiB before
// them (sources.Transcript.CheckedWhole): their state records no time,
// by design, where a one-shot read of the whole file records the file's.
func appendedOnly(s *session) map[string]bool {
	paths := map[string]bool{}
	for _, tr := range s.chain {
		if !tr.CheckedWhole() {
			paths[tr.Path] = true
		}
	}
	return paths
}

// withoutAppendedTimes is bottle b with the times of the transcripts in
// appended left out of its state line, and its byte count, which counts
// the digits of those times, left out too. A bottle the daemon wrote
// (daemon) must record no time for them already: a time vouches for
// every byte before the offset, which a read of appended lines did not
// compare. Every other transcript's time is kept, so that a time the
// daemon's path did not take again when it read a file again differs.
func withoutAppendedTimes(t *testing.T, b []byte, appended map[string]bool, daemon bool) []byte {
	t.Helper()
	st, err := render.StateOf(b)
	if err != nil {
		t.Fatalf("the bottle has no state line (%v):\n%s", err, b)
	}
	for i, fs := range st.Transcripts {
		if !appended[fs.Path] {
			continue
		}
		if daemon && fs.Mod != 0 {
			t.Fatalf("the daemon's bottle records time %d for %s, whose appended lines it read comparing only the bytes before them", fs.Mod, fs.Path)
		}
		st.Transcripts[i].Mod = 0
	}
	st.Bytes = 0
	lines := bytes.SplitAfterN(b, []byte("\n"), 5)
	line, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	lines[3] = append(line, '\n')
	return bytes.Join(lines, nil)
}

// appendAged appends data to the file at path, as growfile.Append, and
// then dates the file a minute back: a reader then finds its time settled
// (sources.Settled) however soon it reads, as the daemon's renders, which
// follow a write by more than the settling time, do. Without it whether
// a read records the file's time would hang on the machine's speed.
func appendAged[T string | []byte](t *testing.T, path string, data T) {
	t.Helper()
	growfile.Append(t, path, data)
	aged := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, aged, aged); err != nil {
		t.Fatal(err)
	}
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
			for !slices.EqualFunc(offs, datas, func(off int, data []byte) bool { return off == len(data) }) {
				ns := make([]int, len(datas))
				last := true
				for k, data := range datas {
					if offs[k] < len(data) {
						ns[k] = min(len(data)-offs[k], 1+rng.IntN(max(len(data)/20, 64)))
					}
					last = last && offs[k]+ns[k] == len(data)
				}
				if last {
					equalsOneShot(t, d, s, readTranscripts(t, id, path), now)
				}
				for k, data := range datas {
					if ns[k] == 0 {
						continue
					}
					if k > 0 && offs[k] == 0 {
						if err := os.MkdirAll(filepath.Dir(dsts[k]), 0o700); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(dsts[k], nil, 0o600); err != nil {
							t.Fatal(err)
						}
					}
					appendAged(t, dsts[k], data[offs[k]:offs[k]+ns[k]])
					offs[k] += ns[k]
				}
				renderStep(t, d, s, last)
			}
			equalsOneShot(t, d, s, readTranscripts(t, id, path), now)
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
