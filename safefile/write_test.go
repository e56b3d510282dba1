package safefile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: Write puts the new bytes in a 0600 file at the path whatever
// was there, replacing a symbolic link rather than writing through it, and
// leaves no temporary file behind.
func TestWrite(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path, elsewhere string)
	}{
		{"nothing there", func(t *testing.T, path, elsewhere string) {}},
		{"a file of another mode", func(t *testing.T, path, elsewhere string) {
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symbolic link", func(t *testing.T, path, elsewhere string) {
			if err := os.Symlink(elsewhere, path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			elsewhere := filepath.Join(t.TempDir(), "theirs")
			if err := os.WriteFile(elsewhere, []byte("theirs"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "current")
			tc.prepare(t, path, elsewhere)
			if err := Write(path, []byte("new\n")); err != nil {
				t.Fatal(err)
			}
			info, err := os.Lstat(path)
			if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
				t.Fatalf("after Write: %v, %v; want a 0600 regular file", info.Mode(), err)
			}
			if got, _ := os.ReadFile(path); string(got) != "new\n" {
				t.Errorf("content %q", got)
			}
			if got, _ := os.ReadFile(elsewhere); string(got) != "theirs" {
				t.Errorf("the link's target became %q", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%d entries in the directory, want the file alone", len(entries))
			}
		})
	}
	if err := Write(filepath.Join(t.TempDir(), "missing", "f"), nil); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}
