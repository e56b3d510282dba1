// Package oddfile makes, for tests, the files that are not regular files
// but can stand where bottled expects one (a transcript, a bottle): a
// named pipe, whose open blocks until a writer comes; a unix socket, which
// cannot be opened at all; a symlink to a named pipe; and, on Linux, a
// regular file under another program's write lease, whose open blocks
// until the lease is given up (at most /proc/sys/fs/lease-break-time,
// 45 s by default). It is test support only.
package oddfile

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Maker makes a file that is not a regular one at a path.
type Maker struct {
	Name string
	Make func(tb testing.TB, path string)
}

// Makers are every kind of file that is not a regular one that a test
// puts where a regular file is expected.
var Makers = []Maker{
	{"named pipe", FIFO},
	{"unix socket", Socket},
	{"link to a named pipe", LinkToFIFO},
}

// FIFO makes a named pipe at path.
func FIFO(tb testing.TB, path string) {
	tb.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Socket makes a unix socket at path, listening until the test ends. It
// is bound in a short directory and moved into place: a socket's path is
// limited to about 100 bytes, which a test's temporary paths exceed.
func Socket(tb testing.TB, path string) {
	tb.Helper()
	dir, err := os.MkdirTemp("", "sock")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	short := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", short)
	if err != nil {
		tb.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // it is not at short any more
	tb.Cleanup(func() { ln.Close() })
	if err := os.Rename(short, path); err != nil {
		tb.Fatal(err)
	}
}

// LinkToFIFO makes path a symlink to a named pipe made beside it.
func LinkToFIFO(tb testing.TB, path string) {
	tb.Helper()
	fifoBeside(tb, path, ".target", os.Symlink)
}

// ReplaceWithFIFO puts a named pipe in the place of the file at path,
// as a rename does: the file's name now names the pipe.
func ReplaceWithFIFO(tb testing.TB, path string) {
	tb.Helper()
	fifoBeside(tb, path, ".tmp", os.Rename)
}

// fifoBeside makes a named pipe beside path, named for it with "pipe-"
// before and suffix after (so that it is not itself taken for a
// transcript or a bottle), and calls put with the pipe's path and path.
func fifoBeside(tb testing.TB, path, suffix string, put func(fifo, path string) error) {
	tb.Helper()
	fifo := filepath.Join(filepath.Dir(path), "pipe-"+filepath.Base(path)+suffix)
	FIFO(tb, fifo)
	if err := put(fifo, path); err != nil {
		tb.Fatal(err)
	}
}
