package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
)

// indexedWords returns an index over a few real bottles and, for each, a
// word only it holds.
func indexedWords(t *testing.T) (string, *Index, map[string]string) {
	t.Helper()
	data := t.TempDir()
	corpus := realBottles(t, false)[:6]
	ix := indexCorpus(t, data, corpus)
	words := uniqueWords(t, corpus)
	if len(words) < 3 {
		t.Fatalf("only %d bottles with a word of their own", len(words))
	}
	return data, ix, words
}

// checkFinds checks that every word finds its bottle.
func checkFinds(t *testing.T, ix *Index, words map[string]string) {
	t.Helper()
	for id, w := range words {
		if got := sessionsOf(search(t, ix, w, Scope{})); !slices.Equal(got, []string{id}) {
			t.Errorf("search %q: %v, want [%s]", w, got, id)
		}
	}
}

func currentGen(t *testing.T, data string) (string, int) {
	t.Helper()
	ix := &Index{dir: Dir(data)}
	_, gen, err := ix.readCurrent()
	if err != nil {
		t.Fatal(err)
	}
	return ix.genPath(gen), gen
}

// TestCorruptIndexRebuilt damages the database file in several ways; each
// time the next process to open it (or the process using it) builds a new
// one from the bottles instead of trusting it.
func TestCorruptIndexRebuilt(t *testing.T) {
	damages := map[string]func(t *testing.T, path string){
		"garbage header": func(t *testing.T, path string) {
			overwrite(t, path, 0, 100)
		},
		"garbage pages": func(t *testing.T, path string) {
			// Keep the first page (header and schema) and ruin the rest:
			// opening works, reading the words does not.
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			overwrite(t, path, 4096, int(info.Size())-4096)
		},
		"truncated": func(t *testing.T, path string) {
			if err := os.Truncate(path, 4096); err != nil {
				t.Fatal(err)
			}
		},
		"older format": func(t *testing.T, path string) {
			c, err := openConn(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Exec("PRAGMA user_version = 0"); err != nil {
				t.Fatal(err)
			}
			c.Close()
		},
		"missing file": func(t *testing.T, path string) {
			removeGen(path)
		},
		"missing directory": func(t *testing.T, path string) {
			os.RemoveAll(filepath.Dir(path))
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			data, ix, words := indexedWords(t)
			ix.Close()
			path, gen := currentGen(t, data)
			damage(t, path)
			ix = openIndex(t, data)
			checkFinds(t, ix, words)
			if _, now := currentGen(t, data); now == gen && name != "missing directory" {
				t.Errorf("generation %d still in use", gen)
			}
		})
	}
}

// TestCorruptionFoundInUse: a process whose index is found damaged while
// it uses it (here: the file replaced under it by a damaged one) rebuilds
// and answers from the new index.
func TestCorruptionFoundInUse(t *testing.T) {
	data, ix, words := indexedWords(t)
	checkFinds(t, ix, words)
	// Another process switched to a new generation that turns out to be
	// garbage.
	gen := switchToDamaged(t, data, ix)
	checkFinds(t, ix, words)
	if _, now := currentGen(t, data); now <= gen+1 {
		t.Errorf("current generation %d, want a rebuilt one after %d", now, gen+1)
	}
}

// TestRebuildSwitchesOtherProcesses: after a rebuild by another process,
// an open index moves to the new generation on its next operation, and
// the old files are gone.
func TestRebuildSwitchesOtherProcesses(t *testing.T) {
	data, ix, words := indexedWords(t)
	oldPath, gen := currentGen(t, data)
	other := openIndex(t, data)
	if _, now := currentGen(t, data); now != gen {
		t.Fatalf("opening an intact index built generation %d over %d", now, gen)
	}
	rebuilt, err := Open(context.Background(), data, Options{Location: time.UTC, Rebuild: true})
	if err != nil {
		t.Fatal(err)
	}
	rebuilt.Close()
	if _, now := currentGen(t, data); now != gen+1 {
		t.Fatalf("generation %d after rebuild, want %d", now, gen+1)
	}
	if _, err := os.Stat(oldPath); !os.IsNotExist(err) {
		t.Errorf("old generation still on disk: %v", err)
	}
	for _, open := range []*Index{ix, other} {
		checkFinds(t, open, words)
		if open.gen != gen+1 {
			t.Errorf("open index still on generation %d", open.gen)
		}
	}
}

// TestBuildWaitsForAnotherBuilder: while one process holds the build lock,
// another that needs a build says it waits (once), waits for it, and gives
// up with ErrBuilding when its context ends.
func TestBuildWaitsForAnotherBuilder(t *testing.T) {
	data := t.TempDir()
	writeBottles(t, data, realBottles(t, false)[0].bottle)
	if err := os.MkdirAll(Dir(data), 0o700); err != nil {
		t.Fatal(err)
	}
	unlock := lockAsBuilder(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	waited := 0
	opts := Options{Waiting: func() { waited++ }}
	if _, err := Open(ctx, data, opts); err == nil || !errors.Is(err, ErrBuilding) {
		t.Errorf("Open while another builds: %v, want ErrBuilding", err)
	}
	if waited != 1 {
		t.Errorf("Waiting called %d times, want once", waited)
	}
	unlock()
	waited = 0
	ix, err := Open(context.Background(), data, opts)
	if err != nil {
		t.Fatalf("Open after the other build: %v", err)
	}
	ix.Close()
	if waited != 0 {
		t.Errorf("Waiting called %d times with no other builder", waited)
	}
}

// switchToDamaged makes "current" name a new generation of garbage, as
// another process switching to a damaged file would, and returns the
// generation before it.
func switchToDamaged(t *testing.T, data string, ix *Index) int {
	t.Helper()
	_, gen := currentGen(t, data)
	bad := ix.genPath(gen + 1)
	if err := os.WriteFile(bad, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	overwrite(t, bad, 0, 8192)
	if err := writeCurrent(Dir(data), gen+1); err != nil {
		t.Fatal(err)
	}
	return gen
}

func overwrite(t *testing.T, path string, off, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, n)
	for i := range junk {
		junk[i] = byte(i*7 + 13)
	}
	if _, err := f.WriteAt(junk, int64(off)); err != nil {
		t.Fatal(err)
	}
}

// TestIndexFilesPrivate: the index holds conversation words; its files are
// the owner's only, like the bottles.
func TestIndexFilesPrivate(t *testing.T) {
	data, ix, _ := indexedWords(t)
	// Keep a write in the WAL while looking.
	b := realBottles(t, false)[7].bottle
	writeBottles(t, data, b)
	if err := ix.Put(context.Background(), b.State.Session+".md", b.Bytes); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(Dir(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, _ := e.Info()
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is mode %v", e.Name(), info.Mode().Perm())
		}
	}
	if info, _ := os.Stat(Dir(data)); info.Mode().Perm() != 0o700 {
		t.Errorf("index dir is mode %v", info.Mode().Perm())
	}
}

// TestPutNeverBuilds: Put, which the daemon calls as it renders, never
// builds the index (that takes a while): an index found missing, switched
// to a damaged generation or corrupt is reported as ErrUnusable and left
// alone, and the operations that may build build it as usual.
func TestPutNeverBuilds(t *testing.T) {
	damages := map[string]func(t *testing.T, data string, ix *Index){
		"directory removed": func(t *testing.T, data string, ix *Index) {
			os.RemoveAll(Dir(data))
		},
		"switched to a damaged generation": func(t *testing.T, data string, ix *Index) {
			switchToDamaged(t, data, ix)
		},
		"pages damaged": func(t *testing.T, data string, ix *Index) {
			// Found by the update itself: opened fine, the blocks are
			// unreadable. The connection is dropped (not the Index,
			// which could not be used again) so that the update opens
			// the damaged file anew rather than reading cached pages.
			ix.mu.Lock()
			ix.closeConn()
			ix.mu.Unlock()
			path, _ := currentGen(t, data)
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			overwrite(t, path, 4096, int(info.Size())-4096)
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			data, ix, words := indexedWords(t)
			damage(t, data, ix)
			before := generations(data)
			b := realBottles(t, false)[7].bottle
			writeBottles(t, data, b)
			err := ix.Put(context.Background(), b.State.Session+".md", b.Bytes)
			if !errors.Is(err, ErrUnusable) {
				t.Fatalf("Put: %v, want ErrUnusable", err)
			}
			if after := generations(data); after != before {
				t.Errorf("Put built the index: %s, was %s", after, before)
			}
			// Building is left to the operations that may wait for it.
			checkFinds(t, ix, words)
		})
	}
}

// generations lists the index's database files and what "current" says.
func generations(data string) string {
	entries, _ := os.ReadDir(Dir(data))
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".db") {
			out = append(out, e.Name())
		}
	}
	current, _ := os.ReadFile(filepath.Join(Dir(data), currentFile))
	return fmt.Sprintf("%v, current %q", out, current)
}

// TestSameGenerationBuiltAgain: when the index directory is deleted and
// another process builds the index again, the new database gets the number
// of the one an open index still uses; that index must move to the new
// file all the same, and its writes reach it.
func TestSameGenerationBuiltAgain(t *testing.T) {
	data, ix, _ := indexedWords(t)
	_, gen := currentGen(t, data)
	os.RemoveAll(Dir(data))
	other := openIndex(t, data)
	if _, now := currentGen(t, data); now != gen {
		t.Fatalf("built generation %d, want %d again", now, gen)
	}
	before := countRows(t, other, `SELECT count(*) FROM bottles`)
	b := realBottles(t, false)[7].bottle
	writeBottles(t, data, b)
	if err := ix.Put(context.Background(), b.State.Session+".md", b.Bytes); err != nil {
		t.Fatal(err)
	}
	if after := countRows(t, other, `SELECT count(*) FROM bottles`); after != before+1 {
		t.Errorf("the new database has %d bottles after the put, want %d", after, before+1)
	}
}

// TestProgress follows a build and then a sync through Options.Progress:
// the bytes done grow with each bottle up to the bytes of the bottles the
// pass had to index, which do not change under it.
func TestProgress(t *testing.T) {
	data := t.TempDir()
	corpus := realBottles(t, false)[:6]
	later := corpus[0].bottle // written after the build, for the sync
	var want int64
	for _, b := range corpus[1:] {
		writeBottles(t, data, b.bottle)
		want += int64(len(b.bottle.Bytes))
	}
	type call struct{ done, total int64 }
	var calls []call
	opts := Options{Location: time.UTC, Progress: func(done, total int64) { calls = append(calls, call{done, total}) }}
	check := func(what string, n int, total int64) {
		t.Helper()
		if len(calls) != n {
			t.Fatalf("%s: %d progress calls, want one per bottle indexed (%d): %v", what, len(calls), n, calls)
		}
		for i, c := range calls {
			if c.total != total || c.done > c.total || i > 0 && c.done <= calls[i-1].done {
				t.Errorf("%s: call %d of %v", what, i, calls)
			}
		}
		if last := calls[len(calls)-1]; last.done != total {
			t.Errorf("%s: ends at %d of %d bytes", what, last.done, total)
		}
	}
	ix, err := Open(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	check("build", len(corpus)-1, want)

	calls = nil
	writeBottles(t, data, later)
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("sync", 1, int64(len(later.Bytes)))
}

// TestPurge: a word removed from a bottle (a redaction) stops being found
// as soon as the bottle is indexed again, but FTS5 only marks the deleted
// row: the word stays in the index's files until a sync purges them, as
// the writer asked (bottles.Store.AskPurge).
func TestPurge(t *testing.T) {
	const secret = "zqxsecretvaluezq"
	data := t.TempDir()
	s := talk{ID: "redacted", CWD: "/p", Start: day}
	s.Turns = [][2]string{{"my key is " + secret + " please", "noted"}, {"second prompt", "second answer"}}
	for i := range 50 { // enough that FTS5 does not rewrite the segment by itself
		s.Turns = append(s.Turns, [2]string{fmt.Sprintf("prompt %d", i), strings.Repeat("more words ", 50)})
	}
	writeBottles(t, data, s.Bottle(t, testNow))
	ix := openIndex(t, data)
	if len(search(t, ix, secret, Scope{})) == 0 {
		t.Fatal("the secret is not indexed")
	}
	s.Turns[0][0] = "my key is [redacted] please"
	bt := s.Bottle(t, testNow)
	dir := bottles.BottlesDir(data)
	if err := replaceFile(bottles.BottlePath(dir, s.ID), bt.Bytes); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(context.Background(), s.ID+".md", bt.Bytes); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, ix, secret, Scope{}); len(hits) != 0 {
		t.Fatalf("%d hits after the redaction", len(hits))
	}
	if !filesHold(t, Dir(data), secret) {
		t.Fatal("FTS5 dropped the deleted row's words by itself: this test shows nothing")
	}
	if err := bottles.Open(filepath.Dir(dir), nil, nil).AskPurge(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if filesHold(t, Dir(data), secret) {
		t.Error("the index's files still hold the redacted word after the purge")
	}
	if len(search(t, ix, "second", Scope{})) == 0 {
		t.Error("the purge lost what the bottle still says")
	}
	ix.Close()
	if filesHold(t, Dir(data), secret) {
		t.Error("the index's files hold the redacted word after Close")
	}
}

// filesHold reports whether any file in dir holds word.
func filesHold(t *testing.T, dir, word string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), word) {
			t.Logf("%s holds %q", e.Name(), word)
			return true
		}
	}
	return false
}

// TestPurgeAsked: a writer that does not touch the index (a hook, the
// render command) replaces a bottle after a redaction and leaves the purge
// marker; the next sync, full or of some names, takes the bottle in,
// purges the index and removes the marker.
func TestPurgeAsked(t *testing.T) {
	const secret = "zqxaskedsecretzq"
	for _, how := range []string{"Sync", "SyncNames"} {
		t.Run(how, func(t *testing.T) {
			data := t.TempDir()
			s := talk{ID: "asked", CWD: "/p", Start: day}
			s.Turns = [][2]string{{"the key is " + secret, "noted"}, {"second prompt", "second answer"}}
			writeBottles(t, data, s.Bottle(t, testNow))
			ix := openIndex(t, data)
			if !filesHold(t, Dir(data), secret) {
				t.Fatal("the secret is not in the index to begin with")
			}
			redactBottle(t, data, &s, secret)
			var err error
			if how == "Sync" {
				err = ix.Sync(context.Background())
			} else {
				err = ix.SyncNames(context.Background(), []string{"someone-else.md"})
			}
			if err != nil {
				t.Fatal(err)
			}
			if filesHold(t, Dir(data), secret) {
				t.Error("the index's files still hold the redacted word")
			}
			if markerThere(t, data) {
				t.Error("the marker is still there")
			}
			if len(search(t, ix, "redacted", Scope{})) == 0 {
				t.Error("the new bottle is not indexed")
			}
		})
	}
}
