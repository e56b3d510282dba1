package oddfile

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// Lease takes a write lease on the regular file at path (which the test
// must own) and returns the file, open for writing, which holds it until
// the test ends. While it is held, an open of the file by another process
// blocks until the lease is given up or broken (after lease-break-time),
// and one with O_NONBLOCK fails with EWOULDBLOCK. A lease is granted only
// while no other process has the file open: Lease tries again for a while
// (a daemon reading it closes it soon).
func Lease(tb testing.TB, path string) *os.File {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			tb.Fatal(err)
		}
		_, err = fcntl(f, syscall.F_SETLEASE, syscall.F_WRLCK)
		if err == nil {
			tb.Cleanup(func() { f.Close() })
			return f
		}
		f.Close()
		if !errors.Is(err, syscall.EAGAIN) || time.Now().After(deadline) {
			tb.Fatalf("lease %s: %v", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fcntl(f *os.File, cmd, arg int) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var r uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		r, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), uintptr(arg))
	}); err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
