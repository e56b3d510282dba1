package sources

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/internal/oddfile"
)

// TestOpenRegular: where a transcript is expected, a link to a regular file
// is read, and anything that is not a regular file is refused as
// ErrNotRegular and taken for a missing file (fs.ErrNotExist), so that
// every reader treats it as a transcript gone. What may wait or not
// (named pipes, leases) is safefile's TestOpen.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	if err := os.WriteFile(target, []byte("a line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if data, err := readRegular(link); err != nil || string(data) != "a line\n" {
		t.Errorf("ReadRegular through a link: %q, %v", data, err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	oddfile.FIFO(t, fifo)
	for _, path := range []string{dir, fifo} {
		_, err := readRegular(path)
		if !errors.Is(err, ErrNotRegular) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("readRegular(%s) = %v; want an ErrNotRegular that is an fs.ErrNotExist", path, err)
		}
		if _, err := StatRegular(path); !errors.Is(err, ErrNotRegular) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("StatRegular(%s) = %v", path, err)
		}
	}
	if _, err := readRegular(filepath.Join(dir, "none.jsonl")); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotRegular) {
		t.Errorf("a missing file: %v", err)
	}
}

// readRegular reads the whole file OpenRegular opens at path.
func readRegular(path string) ([]byte, error) {
	f, _, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
