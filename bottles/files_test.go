package bottles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/bottled-dev/bottled/render"
)

// TestOpenBottle: only a regular file is opened as a bottle; a link, a FIFO
// (which would block an open for reading) and a directory are refused as
// files with no state, so that a writer replaces them.
func TestOpenBottle(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.md")
	if err := os.WriteFile(target, []byte("# Session bottle — x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := map[string]func(p string) error{
		"symlink":   func(p string) error { return os.Symlink(target, p) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	}
	for name, mk := range paths {
		p := filepath.Join(dir, name+".md")
		if err := mk(p); err != nil {
			t.Fatal(err)
		}
		f, err := openBottle(p)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, ErrNotRegular) || !errors.Is(err, render.ErrNoState) {
			t.Errorf("%s: openBottle = %v; want ErrNotRegular", name, err)
		}
	}
	if _, err := openBottle(filepath.Join(dir, "none.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v; want fs.ErrNotExist", err)
	}
	f, err := openBottle(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
