package bottles

import (
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/render"
)

// TestPurgeTakenBeforeAWrite: a purge that took the marker before a write
// that drops what its bottle showed was renamed in (its listing may have
// missed that bottle) leaves the marker that write left, for the next.
func TestPurgeTakenBeforeAWrite(t *testing.T) {
	const id = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9"
	s := storeAt(filepath.Join(t.TempDir(), "bottles"))
	first := bottleAt(t, id, 100, nil, render.ModeFull)
	if _, err := s.Write(first); err != nil {
		t.Fatal(err)
	}
	if err := s.AskPurge(); err != nil {
		t.Fatal(err)
	}
	req, asked := s.TakePurge()
	if !asked {
		t.Fatal("no purge asked")
	}
	next := bottleAt(t, id, 200, nil, render.ModeFull)
	next.Rewritten = true
	if out, err := s.Write(next); err != nil || out != Written {
		t.Fatalf("Write = %v, %v", out, err)
	}
	if err := req.Done(); err != nil {
		t.Fatal(err)
	}
	if _, asked := s.TakePurge(); !asked {
		t.Error("the purge that took the marker before the write removed the one the write left")
	}
}
