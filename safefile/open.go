package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular reports a path that names something other than a regular
// file: a symbolic link (for Open), a directory, a named pipe, a socket, a
// device. errors.As gives the *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is the error of a path that names something other than
// a regular file. Mode is what was found there (with fs.ModeSymlink for a
// link Open does not follow).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	if e.Link() {
		return e.Path + " is a symbolic link, which bottled does not follow"
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Is makes the error ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// AlsoIs returns err, made also target (for errors.Is) when it is a
// *NotRegularError: a reader that treats a file it cannot read like a
// missing one (fs.ErrNotExist), or a bottle path that holds no bottle.
func AlsoIs(err, target error) error {
	if errors.Is(err, ErrNotRegular) {
		return alsoIs{err, target}
	}
	return err
}

type alsoIs struct{ err, target error }

func (e alsoIs) Error() string        { return e.err.Error() }
func (e alsoIs) Unwrap() error        { return e.err }
func (e alsoIs) Is(target error) bool { return target == e.target }

// Link reports whether what was found is a symbolic link.
func (e *NotRegularError) Link() bool { return e.Mode&fs.ModeSymlink != 0 }

// Kind names a file's type in words, with its article.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
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
	case m.IsRegular():
		return "a file"
	}
	return "a file of an unknown kind"
}

// StatFollow returns the file info of the regular file at path, following
// symbolic links, or a *NotRegularError if something else is there.
func StatFollow(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &NotRegularError{path, info.Mode()}
	}
	return info, nil
}

// Open opens the regular file at path for reading, without following a
// symbolic link at path (the directories above it are followed), and
// returns it with the info of the open file. See OpenFollow for the rest.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, &NotRegularError{path, fs.ModeSymlink}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A socket or a device may fail to open at all: say what it is.
		if info, lerr := os.Lstat(path); lerr == nil && !info.Mode().IsRegular() {
			return nil, nil, &NotRegularError{path, info.Mode()}
		}
	}
	return opened(path, f, err)
}

// OpenFollow opens the regular file at path for reading, following
// symbolic links, and returns it with the info of the open file (not of
// the name, which may be replaced meanwhile). It opens nothing else:
// what the name points at is checked before the open, and what was
// opened after it. The open never waits: it is made with O_NONBLOCK (then
// cleared), so that a named pipe put in place meanwhile opens at once, to
// be refused, and a file under another program's lease is an error
// (errors.Is(err, syscall.EWOULDBLOCK)) to try again later.
func OpenFollow(path string) (*os.File, fs.FileInfo, error) {
	if _, err := StatFollow(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	return opened(path, f, err)
}

// opened checks what an open made with O_NONBLOCK returned.
func opened(path string, f *os.File, err error) (*os.File, fs.FileInfo, error) {
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil, fmt.Errorf("%w (another program holds a lease on it)", err)
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &NotRegularError{path, info.Mode()}
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
