package safefile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Exchange swaps the files at a and b in one step (renameat2 with
// RENAME_EXCHANGE), reporting false where the filesystem cannot.
func Exchange(a, b string) (bool, error) {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return false, nil
	}
	return err == nil, err
}
