package watch

import (
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
