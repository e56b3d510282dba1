package render

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestEnsureDir: a directory bottled makes is created owner-only or
// narrowed to it, and one that is a symbolic link is refused, what it
// points to left as it was; the directories above it (the data directory)
// are followed.
func TestEnsureDir(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir, elsewhere string)
		linked  bool // refused as a link
		fails   bool
	}{
		{"missing, with its parents", func(t *testing.T, dir, _ string) {}, false, false},
		{"too open", func(t *testing.T, dir, _ string) { mkdir(t, dir, 0o755) }, false, false},
		{"owner-only", func(t *testing.T, dir, _ string) { mkdir(t, dir, 0o700) }, false, false},
		{"a link to a directory", func(t *testing.T, dir, elsewhere string) { link(t, elsewhere, dir) }, true, true},
		{"a dangling link", func(t *testing.T, dir, elsewhere string) { link(t, elsewhere+"-gone", dir) }, true, true},
		{"a file in the way", func(t *testing.T, dir, _ string) {
			mkdir(t, filepath.Dir(dir), 0o700)
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"under a linked data directory", func(t *testing.T, dir, elsewhere string) {
			link(t, elsewhere, filepath.Dir(dir))
		}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			elsewhere := filepath.Join(root, "elsewhere")
			mkdir(t, elsewhere, 0o755)
			dir := filepath.Join(root, "data", "bottles")
			tc.prepare(t, dir, elsewhere)
			err := EnsureDir(dir)
			if (err != nil) != tc.fails || errors.Is(err, ErrLinkedDir) != tc.linked {
				t.Fatalf("EnsureDir = %v; want failure %v, link refused %v", err, tc.fails, tc.linked)
			}
			if info, _ := os.Stat(elsewhere); info.Mode().Perm() != 0o755 {
				t.Errorf("the link's target became %v", info.Mode().Perm())
			}
			if tc.fails {
				return
			}
			info, err := os.Lstat(dir)
			if err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
				t.Errorf("dir after EnsureDir: %v, %v; want a 0700 directory", info.Mode(), err)
			}
		})
	}
}

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
		f, err := OpenBottle(p)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, ErrNotRegular) || !errors.Is(err, ErrNoState) {
			t.Errorf("%s: OpenBottle = %v; want ErrNotRegular", name, err)
		}
	}
	if _, err := OpenBottle(filepath.Join(dir, "none.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v; want fs.ErrNotExist", err)
	}
	f, err := OpenBottle(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func mkdir(t *testing.T, dir string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}
