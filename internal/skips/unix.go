//go:build unix

package skips

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lock takes the run directory's lock, which serializes the test
// binaries' notes and reports, and returns what releases it. Without the
// lock (it cannot be made), they go unserialized: at worst a reason is
// written twice.
func lock(dir string) (unlock func()) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing releases the lock
}

// gone reports whether no process has the pid.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
