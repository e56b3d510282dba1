package safefile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Exchange swaps the files at a and b in one step (renamex_np with
// RENAME_SWAP), reporting false where the filesystem cannot.
func Exchange(a, b string) (bool, error) {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return false, nil
	}
	return err == nil, err
}
