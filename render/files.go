package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Links. bottled makes no symbolic link in its data directory, so one
// found there was put by someone else (or by a dotfiles tool gone wrong)
// and may point anywhere: a bottle that is a link may name a file outside
// the data directory, which the MCP server would serve and the index take
// in; a bottles or archive directory that is a link may be a world-writable
// one, into which bottles would be moved and which bottled would chmod.
// So bottle files are opened without following a link, and the directories
// bottled makes are checked not to be links before anything is written to
// them or their mode is changed. The data directory itself is the user's
// to place and is followed wherever it points.

// ErrNotRegular reports a bottle path that holds something other than a
// regular file (a symbolic link, a FIFO, a directory): it is not read. An
// error that is ErrNotRegular is an ErrNoState too, so that a writer
// replaces the link itself, never what it points to.
var ErrNotRegular = errors.New("not a regular file")

// notRegular is the error of a bottle path that is not a regular file.
type notRegular struct{ path, what string }

func (e *notRegular) Error() string {
	if e.what == "symbolic link" {
		return e.path + " is a symbolic link, which bottled does not follow"
	}
	return e.path + " is a " + e.what + ", not a bottle"
}

func (e *notRegular) Is(target error) bool { return target == ErrNotRegular || target == ErrNoState }

// OpenBottle opens the bottle file at path for reading, without following
// a symbolic link and without blocking (a FIFO), and only if it is a
// regular file.
func OpenBottle(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &notRegular{path, "symbolic link"}
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &notRegular{path, kind(info.Mode())}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// kind names a file's type in words.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}

// ErrLinkedDir reports a directory bottled makes (the bottles directory,
// its archive, the search index's) that is a symbolic link: nothing is
// written through it and its mode is left alone.
var ErrLinkedDir = errors.New("is a symbolic link, which bottled does not follow for a directory it makes: remove the link (bottled makes the directory again)")

// EnsureDir makes dir, a directory of bottled's own in the data directory,
// owner-only (0700): it creates it, with the parents it needs, or narrows
// the mode of the one there. The parents (the data directory and above)
// are followed wherever they point; dir itself must not be a symbolic link
// (ErrLinkedDir) and is changed through a descriptor opened without
// following one, so that what is checked is what is changed.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
	if err != nil {
		// A link fails with ELOOP or ENOTDIR, by platform: ask what it is.
		if info, lerr := os.Lstat(dir); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(dir)
			return fmt.Errorf("%s (to %s) %w", dir, to, ErrLinkedDir)
		} else if lerr == nil && !info.IsDir() {
			return fmt.Errorf("create %s: not a directory (a %s is in the way)", dir, kind(info.Mode()))
		}
		return fmt.Errorf("create %s: %w", dir, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil && info.Mode().Perm() != 0o700 {
		err = f.Chmod(0o700)
	}
	if err != nil {
		return fmt.Errorf("restrict %s to its owner: %w", dir, err)
	}
	return nil
}
