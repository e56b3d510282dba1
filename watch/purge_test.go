package watch

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/handmade"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// TestPurgeRetriedWhileLocked runs the index keeper in fake time: a purge
// it cannot start because another process holds the index's build lock is
// tried again with the retries' backoff, without a warning (another
// process building or purging is no fault), and done once the lock is
// free.
func TestPurgeRetriedWhileLocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &testbin.SyncBuffer{}
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		d := testDaemon(t, Config{RetryMin: time.Second, RetryMax: time.Minute, Logger: logger})
		if err := os.MkdirAll(d.store.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		runIndexKeeper(t, d)
		synctest.Wait()
		if s := d.rec.snapshot().Search; s.State != SearchReady {
			t.Fatalf("the index is not ready: %+v", s)
		}
		// Another process holds the build lock (the index's lock file).
		lock, err := os.OpenFile(filepath.Join(index.Dir(d.cfg.DataDir), "lock"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		marker := func() bool {
			_, err := os.Lstat(d.store.PurgeMarker())
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			return err == nil
		}
		if err := d.store.AskPurge(); err != nil {
			t.Fatal(err)
		}
		signal(d.purgeNow)
		synctest.Wait()
		if !marker() {
			t.Fatal("the request went while another process held the build lock")
		}
		if strings.Contains(logs.String(), "level=WARN") {
			t.Errorf("another process holding the build lock was warned of:\n%s", logs)
		}
		lock.Close()
		time.Sleep(d.cfg.RetryMin)
		synctest.Wait()
		if marker() {
			t.Errorf("%v after the lock was freed, the purge is still asked:\n%s", d.cfg.RetryMin, logs)
		}
	})
}

// TestIndexUpdateEndsWhenStopping: while another process holds the search
// index's write lock, a bottle's index update waits for it only until the
// daemon stops (a render in flight finishes at shutdown, and the wait,
// SQLite's busy timeout of 10 s, held the stop up); the log says the
// bottle is indexed at the next start.
func TestIndexUpdateEndsWhenStopping(t *testing.T) {
	logs := &testbin.SyncBuffer{}
	d := testDaemon(t, Config{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	b := handmade.Session{ID: "st000000-0000-4000-8000-000000000001", CWD: "/p", Start: time.Now().Add(-time.Hour),
		Turns: [][2]string{{"STOPPING-P1 a question", "an answer"}}}.Bottle(t, time.Now())
	if err := os.MkdirAll(d.store.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.store.Path(b.State.Session), b.Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(context.Background(), d.cfg.DataDir, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d.index.Store(ix)
	gen, err := os.ReadFile(filepath.Join(index.Dir(d.cfg.DataDir), "current"))
	if err != nil {
		t.Fatal(err)
	}
	memwriter.Hold(t, filepath.Join(index.Dir(d.cfg.DataDir), strings.TrimSpace(string(gen))+".db"), []string{"BEGIN IMMEDIATE"})
	stopping, stop := context.WithCancel(context.Background())
	d.stopping = stopping
	time.AfterFunc(100*time.Millisecond, stop)
	d.indexBottle(context.Background(), b.State.Session, b.Bytes)
	if !strings.Contains(logs.String(), "indexed at the next start") {
		t.Errorf("the index update beside another writer, the daemon stopping, logged:\n%s", logs)
	}
}
