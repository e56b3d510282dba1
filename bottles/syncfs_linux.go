package bottles

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncOneByOne is how many bottles a batch syncs each on its own; more are
// synced with one syncfs(2) of their file system, which writes out every
// dirty file on it and commits the journal once. A sync of each file
// commits the journal once per file: after a catch-up, hundreds of
// commits of a few milliseconds each on a busy disk, during which the
// next bottles' creates and renames wait for the journal. But syncfs also
// writes what other programs left dirty on that file system, which can
// cost more than a few files of bottled's own: the few bottles a live
// session's renders leave for each sync are synced each, as elsewhere.
const syncOneByOne = 8

// syncWritten makes the bottles a Batch wrote in dir (pending) durable,
// with their names (see syncOneByOne). syncfs reports write-back errors
// since Linux 5.8, as fsync does.
func syncWritten(dir string, pending map[string]bool) error {
	if len(pending) <= syncOneByOne {
		return syncEach(dir, pending)
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync bottles: %w", err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync bottles: %w", err)
	}
	return nil
}
