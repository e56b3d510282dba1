package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPrefix starts the names of the temporary files Write makes, so that
// a directory's owner can tell the leftovers of a crash (see WriteTemp).
const TempPrefix = ".tmp-"

// Write puts data at path atomically and durably, in a new 0600 file:
// WriteTemp (synced), renamed over path, then the directory synced.
// Whatever was at path (a file of another mode, a symbolic link) is
// replaced, not written through.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, _, err := WriteTemp(dir, TempPrefix+filepath.Base(path)+"-*", data, true)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// Replace puts the file at tmp, not synced, in dst's place in one step,
// as a rename does, and removes what was at dst. Where dst is a regular
// file and the system can, the two are exchanged (Exchange) and the old
// one, now at tmp, is removed: a rename over a regular file makes some
// file systems start writing the new one back at once (ext4's
// auto_da_alloc, for programs that rename without syncing), so that a
// file replaced again a few seconds later, before any sync, reaches the
// disk every time. It is for writers that defer their syncs and answer a
// crash otherwise (the bottles' Batch, with its crash marker); a file
// synced already has nothing to write back, and is renamed (Write).
// Anything else at dst (nothing, a symbolic link, a file of another
// kind) is renamed over, never written through.
//
// A process killed between the exchange and the removal leaves the old
// file at tmp, for its directory's owner to clean as the leftover of a
// crash (see TempPrefix), as it does if the removal fails.
func Replace(tmp, dst string) error {
	if info, err := os.Lstat(dst); err == nil && info.Mode().IsRegular() {
		swapped, err := Exchange(tmp, dst)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if swapped {
			os.Remove(tmp)
			return nil
		}
	}
	return os.Rename(tmp, dst)
}

// WriteTemp writes data to a new file in dir, named by pattern as
// os.CreateTemp names it and mode 0600, synced if sync, and returns its
// name and the info of the file written. The caller renames it into
// place (then syncs the directory) or removes it.
func WriteTemp(dir, pattern string, data []byte, sync bool) (string, fs.FileInfo, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", nil, fmt.Errorf("write in %s: %w", dir, err)
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	var info fs.FileInfo
	if err == nil {
		info, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", nil, fmt.Errorf("write %s: %w", name, err)
	}
	return name, info, nil
}

// SyncFile flushes the contents of the file (or directory) at path to
// disk.
func SyncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// SyncDir makes a directory's entries durable: a file renamed into it or
// removed from it.
func SyncDir(dir string) error { return SyncFile(dir) }
