package inject

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/internal/synth"
)

// BenchmarkSessionStartFresh is the compact hook's own work in process,
// without the process start that BenchmarkHookProcess (cmd/bottled)
// includes: a 10 MB generated transcript whose bottle is fresh.
func BenchmarkSessionStartFresh(b *testing.B) {
	root := b.TempDir()
	e := &env{claude: filepath.Join(root, "claude"), data: filepath.Join(root, "mem"), id: "4c1f7b2e-9d3a-4e5f-8a6b-1c2d3e4f5a6b"}
	e.transcript = filepath.Join(e.claude, "projects", "-home-dev-app", e.id+".jsonl")
	if _, err := synth.File(e.transcript, e.id, 10<<20, 3); err != nil {
		b.Fatal(err)
	}
	if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil {
			b.Fatal(err)
		}
	}
}
