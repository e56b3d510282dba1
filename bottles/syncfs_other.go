//go:build !linux

package bottles

import (
	"errors"
	"io/fs"

	"github.com/bottled-dev/bottled/safefile"
)

// syncWritten makes the bottles a Batch wrote in dir (pending) durable,
// with their names: each file, then the directory.
func syncWritten(dir string, pending map[string]bool) error {
	var errs []error
	for path := range pending {
		if err := safefile.SyncFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, safefile.SyncDir(dir))...)
}
