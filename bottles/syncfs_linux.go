package bottles

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncWritten makes the bottles a Batch wrote in dir durable, with their
// names: one syncfs(2) of dir's file system, which writes out every dirty
// file and commits the journal once. A sync of each file instead commits
// the journal once per file (hundreds of commits for a catch-up, a few
// milliseconds each on a busy disk, during which the next bottles' creates
// and renames wait for the journal). syncfs reports write-back errors since
// Linux 5.8; the kernels before it reported none for fsync's retries
// either, once seen.
func syncWritten(dir string, _ map[string]bool) error {
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
