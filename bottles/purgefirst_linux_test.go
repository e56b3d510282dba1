package bottles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bottled-dev/bottled/internal/skips"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
)

// fsImmutable is FS_IMMUTABLE_FL of linux/fs.h, which x/sys/unix does not
// name (the same bit as STATX_ATTR_IMMUTABLE).
const fsImmutable = 0x10

// immutable makes the file at path immutable (chattr +i), so that no
// rename can replace it, until the test ends; it skips the test where the
// file system or the process's privileges do not allow it.
func immutable(t *testing.T, path string) {
	t.Helper()
	set := func(on bool) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		flags, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		if err != nil {
			return err
		}
		if on {
			flags |= fsImmutable
		} else {
			flags &^= fsImmutable
		}
		return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags)
	}
	if err := set(true); err != nil {
		skips.Note(t, "an immutable file", "run the tests as root (CAP_LINUX_IMMUTABLE) on a file system that has chattr +i")
		t.Skipf("cannot make %s immutable here (%v): needs CAP_LINUX_IMMUTABLE on a file system that has the flag", path, err)
	}
	t.Cleanup(func() {
		if err := set(false); err != nil {
			t.Errorf("make %s mutable again: %v", path, err)
		}
	})
}

// TestPurgeMarkerBeforeRename writes, over a bottle that no rename can
// replace, a bottle that drops what the one on disk showed (made by other
// redaction rules, from a transcript replaced or rewritten, resealed, or
// archived as rendered now): the rename (or, for the archive, the removal
// of the live bottle) fails, and the purge marker must be on disk already, since a
// process killed just after a rename that worked would leave nothing
// else to tell the search index that the old bottle's words must leave
// its files. A bottle that only adds to the one on disk asks for nothing.
func TestPurgeMarkerBeforeRename(t *testing.T) {
	const id = "9e8d7c6b-5a49-4838-9271-605f4e3d2c1b"
	user := acmeRules(t)
	made := func(rules *redact.Rules, ino uint64, offset int64) *render.Bottle {
		return fileBottle(t, id, "PURGEFIRST-P1 hello", rules, ino, offset)
	}
	write := func(t *testing.T, s *Store, b *render.Bottle) error { _, err := s.Write(b); return err }
	batch := func(t *testing.T, s *Store, b *render.Bottle) error { _, err := s.NewBatch().Put(b, false); return err }
	tests := []struct {
		name    string
		onDisk  *render.Bottle
		replace func(t *testing.T, s *Store) error
		ask     bool
	}{
		{"other rules", made(user, 2, 100), func(t *testing.T, s *Store) error { return write(t, s, made(nil, 2, 100)) }, true},
		{"other rules, in a batch", made(user, 2, 100), func(t *testing.T, s *Store) error { return batch(t, s, made(nil, 2, 100)) }, true},
		{"transcript replaced by another file", made(nil, 2, 100), func(t *testing.T, s *Store) error { return write(t, s, made(nil, 3, 100)) }, true},
		{"transcript replaced, in a batch", made(nil, 2, 100), func(t *testing.T, s *Store) error { return batch(t, s, made(nil, 3, 100)) }, true},
		{"resealed", made(user, 2, 100), func(t *testing.T, s *Store) error {
			_, err := s.ResealFile(s.Path(id), nil)
			return err
		}, true},
		{"archived at a /clear, rendered by other rules", made(user, 2, 100), func(t *testing.T, s *Store) error {
			_, err := s.ArchiveLatest(id, made(nil, 2, 100))
			return err
		}, true},
		{"rewritten, as its reader found", made(nil, 2, 100), func(t *testing.T, s *Store) error {
			_, err := s.Put(made(nil, 2, 200), true)
			return err
		}, true},
		{"appended", made(nil, 2, 100), func(t *testing.T, s *Store) error { return write(t, s, made(nil, 2, 200)) }, false},
		{"appended, in a batch", made(nil, 2, 100), func(t *testing.T, s *Store) error { return batch(t, s, made(nil, 2, 200)) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := storeAt(filepath.Join(t.TempDir(), "bottles"))
			if out, err := s.Write(tc.onDisk); err != nil || out != Written {
				t.Fatalf("first Write = %v, %v", out, err)
			}
			immutable(t, s.Path(id))
			if err := tc.replace(t, s); err == nil {
				t.Fatal("the bottle was replaced: the test's bottle is not immutable")
			}
			_, err := os.Lstat(s.PurgeMarker())
			switch {
			case tc.ask && errors.Is(err, fs.ErrNotExist):
				t.Error("no purge marker on disk before the rename: a process killed after it would leave the old words in the index's files")
			case !tc.ask && err == nil:
				t.Error("a purge was asked for a bottle that only adds to the one on disk")
			}
		})
	}
}
