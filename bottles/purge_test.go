package bottles

import (
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
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
	if r, err := s.Put(next, true); err != nil || r.Outcome != Written {
		t.Fatalf("Put = %+v, %v", r, err)
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

// TestPutReportsPurge: the result of a write says whether it left the
// purge marker, for Store.Put and Batch.Put alike, so that the caller
// that keeps the search index (the daemon) purges it for every marker
// left and for none that was not: a bottle made by other rules, from a
// transcript replaced or rewritten (as its reader says) asks; one
// that only adds, or one not written (the bottle on disk covers it, even
// though its reader found a rewrite), does not.
func TestPutReportsPurge(t *testing.T) {
	const id = "3d4e5f60-7182-4930-a4b5-c6d7e8f9a0b1"
	user := acmeRules(t)
	made := func(rules *redact.Rules, ino uint64, offset int64) *render.Bottle {
		return fileBottle(t, id, "PUTPURGE-P1 hello", rules, ino, offset)
	}
	tests := []struct {
		name      string
		onDisk    *render.Bottle
		next      *render.Bottle
		rewritten bool
		want      Result
	}{
		{"appended", made(nil, 2, 100), made(nil, 2, 200), false, Result{Outcome: Written}},
		{"other rules", made(user, 2, 100), made(nil, 2, 100), false, Result{Outcome: Written, AskedPurge: true}},
		{"transcript replaced by another file", made(nil, 2, 100), made(nil, 3, 100), false, Result{Outcome: Written, AskedPurge: true}},
		{"rewritten, as its reader found", made(nil, 2, 100), made(nil, 2, 200), true, Result{Outcome: Written, AskedPurge: true}},
		{"covered, though its reader found a rewrite", made(nil, 2, 200), made(nil, 2, 200), true, Result{Outcome: Covered}},
	}
	for _, tc := range tests {
		for _, how := range []string{"store", "batch"} {
			t.Run(tc.name+", "+how, func(t *testing.T) {
				s := storeAt(filepath.Join(t.TempDir(), "bottles"))
				if out, err := s.Write(tc.onDisk); err != nil || out != Written {
					t.Fatalf("first Write = %v, %v", out, err)
				}
				put := s.Put
				if how == "batch" {
					put = s.NewBatch().Put
				}
				got, err := put(tc.next, tc.rewritten)
				if err != nil {
					t.Fatal(err)
				}
				_, marked := s.TakePurge()
				if got != tc.want || got.AskedPurge != marked {
					t.Errorf("Put = %+v with the purge marker left: %v; want %+v", got, marked, tc.want)
				}
			})
		}
	}
}

// acmeRules are the built-in rules and a user's pattern for Acme's
// tokens: a bottle made by them was made by other rules than the built-in
// ones alone.
func acmeRules(t *testing.T) *redact.Rules {
	t.Helper()
	rules, err := redact.Builtin().With([]redact.Rule{{Kind: "Acme token", Pattern: `acme_[0-9a-f]{32}`}})
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// fileBottle is the bottle, made by rules, of session id whose transcript
// (inode ino, read up to offset) holds prompt.
func fileBottle(t *testing.T, id, prompt string, rules *redact.Rules, ino uint64, offset int64) *render.Bottle {
	t.Helper()
	b, err := render.Render(render.Input{SessionID: id, Now: testNow, Rules: rules, Spine: &sources.Spine{SessionID: id,
		Entries: []sources.Entry{{Kind: sources.EntryUser, Time: testNow, Text: prompt}},
		Files:   []sources.FileState{{Session: id, Path: "/p/" + id + ".jsonl", ID: sources.FileID{Dev: 1, Ino: ino}, Offset: offset}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
