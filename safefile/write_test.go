package safefile

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
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

// TestReplace: Replace puts the file at tmp at dst itself (the same file,
// not a copy), removes what was there, and never writes through a link;
// a directory at dst is an error that leaves both in place, as a rename's.
// A reader that opened the old file before still reads the old bytes.
func TestReplace(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dst, elsewhere string)
		wantErr bool
	}{
		{"a regular file", func(t *testing.T, dst, elsewhere string) { writeFile(t, dst, "old") }, false},
		{"nothing", func(t *testing.T, dst, elsewhere string) {}, false},
		{"a symbolic link", func(t *testing.T, dst, elsewhere string) {
			if err := os.Symlink(elsewhere, dst); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a directory", func(t *testing.T, dst, elsewhere string) {
			if err := os.Mkdir(dst, 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dst, "inside"), "kept")
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			elsewhere := filepath.Join(t.TempDir(), "theirs")
			writeFile(t, elsewhere, "theirs")
			dst, tmp := filepath.Join(dir, "bottle.md"), filepath.Join(dir, TempPrefix+"bottle.md-1")
			tc.prepare(t, dst, elsewhere)
			var old *os.File
			if info, err := os.Lstat(dst); err == nil && info.Mode().IsRegular() {
				if old, err = os.Open(dst); err != nil {
					t.Fatal(err)
				}
				defer old.Close()
			}
			writeFile(t, tmp, "new")
			made, err := os.Stat(tmp)
			if err != nil {
				t.Fatal(err)
			}
			err = Replace(tmp, dst)
			if got, _ := os.ReadFile(elsewhere); string(got) != "theirs" {
				t.Errorf("the link's target became %q", got)
			}
			if tc.wantErr {
				if err == nil {
					t.Fatal("Replace over a directory succeeded")
				}
				if got, _ := os.ReadFile(filepath.Join(dst, "inside")); string(got) != "kept" {
					t.Errorf("the directory's file became %q", got)
				}
				if got, _ := os.ReadFile(tmp); string(got) != "new" {
					t.Errorf("the new file became %q, want it left for the caller", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			info, err := os.Lstat(dst)
			if err != nil || !os.SameFile(info, made) {
				t.Fatalf("at dst after Replace: %v, %v; want the file that was at tmp", info, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%d entries in the directory, want the new file alone", len(entries))
			}
			if old != nil {
				if got, err := io.ReadAll(old); err != nil || string(got) != "old" {
					t.Errorf("a reader of the file replaced read %q, %v; want the old bytes", got, err)
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestExchange: on the systems that can, Exchange swaps two files in one
// step, and fails, changing nothing, where one of them is missing.
func TestExchange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, a, "A")
	writeFile(t, b, "B")
	swapped, err := Exchange(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !swapped {
		// Where the system or the file system cannot (not Linux or macOS;
		// NFS, some FUSE file systems), Replace renames instead.
		t.Skipf("the file system of %s cannot exchange two files on %s", dir, runtime.GOOS)
	}
	for path, want := range map[string]string{a: "B", b: "A"} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s holds %q after the exchange, want %q", filepath.Base(path), got, want)
		}
	}
	if swapped, err := Exchange(a, filepath.Join(dir, "missing")); swapped || err == nil {
		t.Errorf("an exchange with a missing file: %v, %v; want an error", swapped, err)
	}
	if got, _ := os.ReadFile(a); string(got) != "B" {
		t.Errorf("a failed exchange changed a to %q", got)
	}
}
