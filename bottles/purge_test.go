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

// TestResealRacedBySameRules: a reseal that finds, once it holds the
// lock, the bottle made by the rules in use already (another process
// resealed it, or rendered it again, after this one looked) leaves it as
// it is: it writes nothing and asks for no purge, which would rewrite the
// whole search index for nothing.
func TestResealRacedBySameRules(t *testing.T) {
	const id = "2c3d4e5f-6071-4829-93a4-b5c6d7e8f9a0"
	s := storeAt(filepath.Join(t.TempDir(), "bottles"))
	if _, err := s.Write(bottleAt(t, id, 100, nil, render.ModeFull)); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := resealLocked(s.Dir, s.Path(id), nil) // the step after the lock, as a process that looked before the other resealed
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		t.Error("a bottle made by the rules in use was written again")
	}
	if _, asked := s.TakePurge(); asked {
		t.Error("a purge was asked for a bottle made by the rules in use")
	}
}
