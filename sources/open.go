package sources

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Every transcript bottled reads (a session's, its predecessors', the
// tails and heads of its project directory's other files) is opened
// through OpenRegular; bottles, which are never read through a symlink,
// through render.OpenBottle. A project directory can hold, under a name
// bottled reads, something that is not a regular file: a named pipe,
// whose open waits for a writer for ever; a socket or a device, which
// cannot be read or whose open has effects; or a regular file under
// another program's lease, whose open waits until the lease is given up.
// None of them may hold up a worker of the daemon, the hook, or an MCP
// call, so OpenRegular opens only regular files, and never waits to open.

// ErrNotRegular reports a path that names something other than a regular
// file (after following symlinks): errors.Is(err, ErrNotRegular). Such an
// error is also an fs.ErrNotExist: no file bottled can read is there, and
// every reader treats it as it treats a missing file (a transcript gone).
var ErrNotRegular = errors.New("not a regular file")

type notRegularError struct {
	path string
	mode fs.FileMode
}

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.path, kindOf(e.mode))
}

func (e *notRegularError) Is(target error) bool {
	return target == ErrNotRegular || target == fs.ErrNotExist
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a file of an unknown kind"
}

// StatRegular returns the file info of the regular file at path, following
// symlinks, or an error wrapping ErrNotRegular if something else is there.
func StatRegular(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &notRegularError{path, info.Mode()}
	}
	return info, nil
}

// OpenRegular opens the regular file at path for reading, following
// symlinks, and returns it with the info of the open file (not of the
// name, which may be replaced meanwhile). It opens nothing else (see
// ErrNotRegular): what the name points at is checked before the open,
// and what was opened after it. The open never waits: it is made with
// O_NONBLOCK (then cleared), so that a named pipe put in place meanwhile
// opens at once, to be refused, and a file under another program's lease
// is an error (errors.Is(err, syscall.EWOULDBLOCK)) to try again later.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	if _, err := StatRegular(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil, fmt.Errorf("%w (another program holds a lease on it)", err)
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &notRegularError{path, info.Mode()}
	}
	if err == nil {
		err = blocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// blocking clears O_NONBLOCK on a regular file: it has no use once the
// file is open, and some file systems (network, FUSE) honour it on reads.
func blocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	if opErr != nil {
		return fmt.Errorf("open %s: %w", f.Name(), opErr)
	}
	return nil
}

// ReadRegular reads the whole regular file at path (see OpenRegular).
func ReadRegular(path string) ([]byte, error) {
	f, info, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf.Bytes(), nil
}
