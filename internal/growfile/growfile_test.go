package growfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAppend: what is appended, as text or bytes, follows what the file
// held, and nothing is written over.
func TestAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	Append(t, path, "two\n")
	Append(t, path, []byte("three\n"))
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "one\ntwo\nthree\n"; string(got) != want {
		t.Fatalf("file holds %q, want %q", got, want)
	}
}
