package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestMkdirPrivate: a directory bottled makes is created owner-only or
// narrowed to it, and one that is a symbolic link is refused, what it
// points to left as it was; the directories above it (the data directory)
// are followed.
func TestMkdirPrivate(t *testing.T) {
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
			err := MkdirPrivate(dir)
			if (err != nil) != tc.fails || errors.Is(err, ErrLinkedDir) != tc.linked {
				t.Fatalf("MkdirPrivate = %v; want failure %v, link refused %v", err, tc.fails, tc.linked)
			}
			if info, _ := os.Stat(elsewhere); info.Mode().Perm() != 0o755 {
				t.Errorf("the link's target became %v", info.Mode().Perm())
			}
			if tc.fails {
				return
			}
			info, err := os.Lstat(dir)
			if err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
				t.Errorf("dir after MkdirPrivate: %v, %v; want a 0700 directory", info.Mode(), err)
			}
		})
	}
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
