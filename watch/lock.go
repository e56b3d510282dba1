package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bottled-dev/bottled/sources"
)

// LockFile and SocketFile are the daemon's files in the data directory.
const (
	LockFile   = "bottled.lock"
	SocketFile = "bottled.sock"
)

// ErrRunning reports that another daemon holds the data directory.
var ErrRunning = errors.New("another bottled daemon is running")

// lock is the single-instance lock: an flock on a file in the data
// directory, released by the kernel when the process dies, so a crash never
// leaves a stale lock. The file also records the holder's pid for messages.
type lock struct {
	f    *os.File
	path string
}

func acquireLock(dataDir string) (*lock, error) {
	path := filepath.Join(dataDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := LockHolder(dataDir); pid > 0 {
				return nil, fmt.Errorf("%w for %s (pid %d)", ErrRunning, dataDir, pid)
			}
			return nil, fmt.Errorf("%w for %s", ErrRunning, dataDir)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is for messages only; failing to record it changes nothing.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &lock{f: f, path: path}, nil
}

func (l *lock) release() { l.f.Close() } // closing drops the flock

// intact reports whether the lock file at its path is still the one
// locked (not deleted, nor replaced).
func (l *lock) intact() bool {
	held, err1 := l.f.Stat()
	there, err2 := os.Stat(l.path)
	return err1 == nil && err2 == nil && os.SameFile(held, there)
}

// LockHolder returns the pid recorded by the daemon holding dataDir's lock,
// or 0 if no daemon holds it.
func LockHolder(dataDir string) int {
	f, _, err := sources.OpenRegular(filepath.Join(dataDir, LockFile))
	if err != nil {
		return 0
	}
	defer f.Close()
	// A shared lock succeeds only when nobody holds the exclusive one.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0
	}
	buf := make([]byte, 32)
	n, _ := f.Read(buf)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	return pid
}
