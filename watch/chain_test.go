package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestChainScanShared asks for the predecessors of the last session of a
// chain of 18 transcripts from many renders at once, as the catch-up's
// workers do when they start on a project directory together: every one
// gets the whole chain, however the first one's scan of the directory's
// links and the others' requests interleave (one that did not wait for the
// scan rendered a bottle without the chain's first sessions, and nothing
// rendered it again).
func TestChainScanShared(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "claude", "projects", "-p")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var chain []string
	for i := range 18 {
		chain = append(chain, fmt.Sprintf("c4a10000-0000-4000-8000-%012d", i))
	}
	for i, id := range chain {
		recs := `{"type":"user","sessionId":"` + id + `","uuid":"u","message":{"role":"user","content":"go on"}}` + "\n"
		if i+1 < len(chain) {
			recs += `{"type":"continued-in","sessionId":"` + id + `","continuedInSessionId":"` + chain[i+1] + `"}` + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(recs), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]string, 0, len(chain)-1)
	for _, id := range chain[:len(chain)-1] {
		want = append(want, filepath.Join(dir, id+".jsonl"))
	}
	for round := range 20 {
		d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data")})
		start := make(chan struct{})
		var wg sync.WaitGroup
		got := make([][]string, 8)
		for i := range got {
			wg.Go(func() {
				<-start
				got[i] = d.predecessorPaths(chain[len(chain)-1], dir)
			})
		}
		close(start)
		wg.Wait()
		for i, g := range got {
			if !slices.Equal(g, want) {
				t.Fatalf("round %d, render %d: %d predecessors, want all %d", round, i, len(g), len(want))
			}
		}
	}
}
