package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/waitfor"
)

// TestCrashMarkerGoesWithNothingToRender starts the daemon on a bottles
// directory that holds only the marker a crash of the machine left in the
// middle of a batch: there is no bottle to render again, so the marker
// goes while the daemon runs, without waiting for the batch to be quiet
// (while it is there, every bottle a hook writes is taken for one the
// crash may have damaged): with SyncQuiet an hour, it goes within the
// wait.
func TestCrashMarkerGoesWithNothingToRender(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	marker := bottles.Open(data, nil, nil).UnsyncedMarker()
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		t.Fatal(err)
	}
	// A marker that cannot be read is taken for one of another boot.
	if err := os.WriteFile(marker, []byte("left by a crash"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: data, Rescan: time.Hour, SyncQuiet: time.Hour})
	if !d.batch.Damaged() {
		t.Fatal("the daemon does not take the marker for a crash's")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitfor.Cond(t, "the crash's marker goes", func() bool {
		_, err := os.Stat(marker)
		return os.IsNotExist(err)
	})
}
