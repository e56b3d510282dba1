package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/memwriter"
)

// redactable is a session whose first prompt holds a secret, with enough
// turns that FTS5 does not rewrite its segment by itself.
func redactable(id, secret string) talk {
	s := talk{ID: id, CWD: "/p", Start: day}
	s.Turns = [][2]string{{"my key is " + secret + " please", "noted"}}
	for i := range 50 {
		s.Turns = append(s.Turns, [2]string{fmt.Sprintf("%s prompt %d", id, i), strings.Repeat("more words ", 50)})
	}
	return s
}

// indexedSecret writes, into a new data directory, the bottle of a
// session whose first prompt holds secret, and opens its index (closed at
// the test's end).
func indexedSecret(t *testing.T, secret string) (data string, s talk, ix *Index) {
	t.Helper()
	data = t.TempDir()
	s = redactable("s", secret)
	writeBottles(t, data, s.Bottle(t, testNow))
	return data, s, openIndex(t, data)
}

// purged reports whether a purge asked for secret is done: no file of the
// index holds it, and the request is gone.
func purged(t *testing.T, data, secret string) bool {
	t.Helper()
	return !filesHold(t, Dir(data), secret) && !markerThere(t, data)
}

// syncPurges syncs ix, which must purge secret now: what says which
// purge did not happen otherwise.
func syncPurges(t *testing.T, ix *Index, data, secret, what string) {
	t.Helper()
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !purged(t, data, secret) {
		t.Error(what)
	}
}

// holdSnapshot opens the index's database as another process reading it
// does, and keeps a read transaction open until release: the WAL cannot be
// emptied meanwhile.
func holdSnapshot(t *testing.T, ix *Index) (release func()) {
	t.Helper()
	c, err := sqlite3.OpenFlags(ix.genPath(ix.gen), sqlite3.OPEN_READONLY)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec("BEGIN; SELECT count(*) FROM bottles"); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			c.Exec("ROLLBACK")
			c.Close()
		}
	}
	t.Cleanup(release)
	return release
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// markerThere reports whether the purge marker of data's bottles is there:
// a purge was asked for and not answered yet.
func markerThere(t *testing.T, data string) bool {
	t.Helper()
	_, err := os.Lstat(bottles.Open(data, nil, nil).PurgeMarker())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestPurgeKeepsALaterRequest: a redaction asked for while a purge runs
// (after it listed the bottles) is not lost with the request the purge
// took: the marker stays, and the next sync takes the new bottle in and
// purges what its old blocks said.
func TestPurgeKeepsALaterRequest(t *testing.T) {
	const first, second = "zqxfirstsecretzq", "zqxsecondsecretzq"
	data := t.TempDir()
	a, b := redactable("a", first), redactable("b", second)
	writeBottles(t, data, a.Bottle(t, testNow), b.Bottle(t, testNow))
	ix := openIndex(t, data)
	if !filesHold(t, Dir(data), first) || !filesHold(t, Dir(data), second) {
		t.Fatal("the secrets are not in the index to begin with")
	}
	release := holdSnapshot(t, ix)
	db := ix.genPath(ix.gen)
	before := fileSize(db)
	redactBottle(t, data, &a, first)
	synced := make(chan error, 1)
	go func() { synced <- ix.Sync(context.Background()) }()
	// The purge has merged the segments and copied the database anew into
	// the WAL, and waits for the reader to empty it.
	deadline := time.Now().Add(time.Minute)
	for fileSize(db+"-wal") <= 3*before/2 {
		if time.Now().After(deadline) {
			t.Fatalf("the purge did not copy the index: WAL of %d bytes, database of %d", fileSize(db+"-wal"), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	redactBottle(t, data, &b, second)
	release()
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	if filesHold(t, Dir(data), first) {
		t.Error("the index's files still hold the secret the purge was asked for")
	}
	if !markerThere(t, data) {
		t.Fatal("the request made during the purge is gone")
	}
	syncPurges(t, ix, data, second, "the second request was not answered")
}

// TestPurgeWaitsForReaders: a purge whose WAL another process keeps
// reading past the busy timeout has not purged the index's files: it
// fails (ErrPurge), keeps the request, and the next sync purges.
func TestPurgeWaitsForReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the busy timeout")
	}
	t.Parallel()
	const secret = "zqxreadersecretzq"
	data, s, ix := indexedSecret(t, secret)
	release := holdSnapshot(t, ix)
	redactBottle(t, data, &s, secret)
	if err := ix.Sync(context.Background()); !errors.Is(err, ErrPurge) {
		t.Fatalf("Sync with a reader holding the WAL = %v; want ErrPurge", err)
	}
	if !filesHold(t, Dir(data), secret) {
		t.Fatal("the secret left the files anyway: this test shows nothing")
	}
	if !markerThere(t, data) {
		t.Error("the request went with a purge that did not happen")
	}
	release()
	syncPurges(t, ix, data, secret, "the next sync did not purge")
}

// TestPurgeByRebuild: a rebuild answers a request too (the new generation
// holds only what the bottles hold), and removes the marker only once the
// old generation is gone.
func TestPurgeByRebuild(t *testing.T) {
	const secret = "zqxrebuildsecretzq"
	data, s, old := indexedSecret(t, secret)
	old.Close()
	redactBottle(t, data, &s, secret)
	ix, err := Open(context.Background(), data, Options{Location: time.UTC, Rebuild: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !purged(t, data, secret) {
		t.Error("the rebuild did not answer the request")
	}
}

// TestPurgeWhileLocked: a purge asked for while another process holds the
// build lock (a purge that took an earlier request, a build) cannot run
// now. Sync says so (ErrPurgeBusy, an ErrPurge) instead of nil, so that the
// caller tries again rather than waiting for its next full sync, and the
// request stays; once the lock is free, the next sync purges.
func TestPurgeWhileLocked(t *testing.T) {
	const secret = "zqxlockedsecretzq"
	data, s, ix := indexedSecret(t, secret)
	unlock := lockAsBuilder(t, data)
	redactBottle(t, data, &s, secret)
	err := ix.Sync(context.Background())
	if !errors.Is(err, ErrPurgeBusy) || !errors.Is(err, ErrPurge) {
		t.Errorf("Sync with the build lock held by another = %v; want ErrPurgeBusy, an ErrPurge", err)
	}
	if !markerThere(t, data) || !filesHold(t, Dir(data), secret) {
		t.Fatal("the request went, or the files were purged, with the lock held by another")
	}
	unlock()
	syncPurges(t, ix, data, secret, "the sync after the lock was freed did not purge")
}

// TestPutWaitsForTheWriteLockUntilItsContextEnds: while another process
// holds the index's write lock, Put waits for it (SQLite's busy timeout,
// 10 s) only as long as its context lasts, and says why; the bottle is
// indexed by the next Put once the lock is free.
func TestPutWaitsForTheWriteLockUntilItsContextEnds(t *testing.T) {
	data := t.TempDir()
	s := talk{ID: "s1", CWD: "/p", Start: day, Turns: [][2]string{{"first question", "first answer"}}}
	b := s.Bottle(t, testNow)
	writeBottles(t, data, b)
	ix := openIndex(t, data)
	hold := memwriter.Hold(t, ix.genPath(ix.gen), []string{"BEGIN IMMEDIATE"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err := ix.Put(ctx, s.ID+".md", b.Bytes)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put beside another writer, its context canceled: %v, want context.Canceled", err)
	}
	if _, err := hold.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(context.Background(), s.ID+".md", b.Bytes); err != nil {
		t.Fatalf("Put once the lock is free: %v", err)
	}
	if hits := search(t, ix, "first", Scope{}); len(hits) == 0 {
		t.Error("the bottle is not indexed after the second Put")
	}
}

// TestBuildEndTakesInTheBottleItPurgesFor: a redaction whose marker and
// bottle come as a build ends, after its last step listed the bottles and
// before its end takes the marker, is answered by that end: the purge it
// takes the request for takes the redacted bottle in first, so the old
// words leave the files with the request.
func TestBuildEndTakesInTheBottleItPurgesFor(t *testing.T) {
	const secret = "zqxbuildendsecretzq"
	data, s, ix := indexedSecret(t, secret)
	if !filesHold(t, Dir(data), secret) {
		t.Fatal("the secret is not in the index to begin with")
	}
	redactBottle(t, data, &s, secret) // after the last listing: the index knows nothing of it
	unlock, ok, err := tryLock(filepath.Join(ix.dir, lockFile))
	if err != nil || !ok {
		t.Fatalf("the build lock: %v, %v", ok, err)
	}
	ix.mu.Lock()
	err = ix.finishBuild(context.Background())
	ix.mu.Unlock()
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	if !purged(t, data, secret) {
		t.Error("after the build's end, the index's files still hold the redacted word, or the request is still there")
	}
	if len(search(t, ix, "redacted", Scope{})) == 0 {
		t.Error("the redacted bottle is not indexed")
	}
}
