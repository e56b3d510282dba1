package watch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// The status socket is a unix stream socket made with syscalls and run on
// Go's poller through os.File, rather than with package net: net links the
// cgo DNS resolver, which makes the whole bottled binary dynamically linked
// and every process start slower, and the hooks, which are bottled
// processes Claude Code waits for, never need a network.

// unixListener accepts connections on a unix socket.
type unixListener struct {
	f    *os.File
	path string
	node os.FileInfo // the socket file made at path, to know it is still ours
}

// socket makes a close-on-exec unix stream socket. (SOCK_CLOEXEC is not
// portable; holding ForkLock keeps a concurrent exec from inheriting it.)
func socket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	return fd, err
}

// listenBacklog is how many connections wait in the kernel for the status
// server to accept them: a burst of clients queues there rather than be
// told the daemon is busy. The kernel caps it at net.core.somaxconn.
const listenBacklog = 256

// socketMode is the status socket's mode: its owner's alone. Connecting
// to a unix socket takes write permission on it (Linux; BSDs ignore the
// mode), and execute means nothing on one.
const socketMode = 0o600

// listenUnix creates a listening unix socket at path, mode socketMode.
func listenUnix(path string) (*unixListener, error) {
	fd, err := socket()
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	// Made under umask 077, so never wider than 0700 (the mode bind gives
	// a socket is 0777 less the umask), then narrowed to socketMode.
	old := syscall.Umask(0o077)
	err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: path})
	syscall.Umask(old)
	if err == nil {
		err = os.Chmod(path, socketMode)
	}
	if err == nil {
		err = syscall.Listen(fd, listenBacklog)
	}
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	node, _ := os.Lstat(path)
	return &unixListener{f: os.NewFile(uintptr(fd), path), path: path, node: node}, nil
}

// intact reports whether the socket file at the listener's path is still
// the one it listens on.
func (l *unixListener) intact() bool {
	there, err := os.Lstat(l.path)
	return err == nil && l.node != nil && os.SameFile(l.node, there)
}

// accept waits for a connection. It fails once the listener is closed.
func (l *unixListener) accept() (*os.File, error) {
	rc, err := l.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd int
	var aerr error
	err = rc.Read(func(fd uintptr) bool {
		syscall.ForkLock.RLock()
		nfd, _, aerr = syscall.Accept(int(fd))
		if aerr == nil {
			syscall.CloseOnExec(nfd)
		}
		syscall.ForkLock.RUnlock()
		return !errors.Is(aerr, syscall.EAGAIN)
	})
	if err != nil {
		return nil, err
	}
	if aerr != nil {
		return nil, aerr
	}
	if err := syscall.SetNonblock(nfd, true); err != nil {
		syscall.Close(nfd)
		return nil, err
	}
	return os.NewFile(uintptr(nfd), l.path), nil
}

// close stops accepting and removes the socket file, if the file at its
// path is still its own.
func (l *unixListener) close() error {
	if l.intact() {
		os.Remove(l.path)
	}
	return l.f.Close()
}

// dialUnix connects to the unix socket at path. It never waits: when the
// listener's queue is full (a daemon stopped, or flooded) it fails with
// EAGAIN, where a blocking connect would wait for as long as that lasts.
func dialUnix(path string) (*os.File, error) {
	fd, err := socket()
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readAll reads f to its end, failing after the deadline.
func readAll(f *os.File, deadline time.Time) ([]byte, error) {
	if !deadline.IsZero() {
		if err := f.SetReadDeadline(deadline); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(f)
}
