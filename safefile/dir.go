package safefile

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
// and may point anywhere: a directory of bottled's that is a link may be a
// world-writable one, into which bottles would be moved and which bottled
// would chmod. So the directories bottled makes are checked not to be
// links before anything is written to them or their mode is changed. The
// data directory itself is the user's to place and is followed wherever
// it points.

// ErrLinkedDir reports a directory bottled makes (the bottles directory,
// its archive, the search index's, the logs) that is a symbolic link:
// nothing is written through it and its mode is left alone.
var ErrLinkedDir = errors.New("is a symbolic link, which bottled does not follow for a directory it makes: remove the link (bottled makes the directory again)")

// MkdirPrivate makes dir, a directory of bottled's own in the data
// directory, owner-only (0700): it creates it, with the parents it needs,
// or narrows the mode of the one there. The parents (the data directory
// and above) are followed wherever they point; dir itself must not be a
// symbolic link (ErrLinkedDir) and is changed through a descriptor opened
// without following one, so that what is checked is what is changed.
func MkdirPrivate(dir string) error {
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
			return fmt.Errorf("create %s: not a directory (%s is in the way)", dir, Kind(info.Mode()))
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
