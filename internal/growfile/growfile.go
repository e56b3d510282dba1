// Package growfile appends to an existing file the way a writer that is
// still at work does (Claude Code adding records to a transcript), for the
// tests of the readers that follow such files. It is test support only.
package growfile

import (
	"os"
	"testing"
)

// Append writes data at the end of the file at path, which must exist: a
// missing file fails the test rather than being created, since a writer
// that is appending never starts a new file.
func Append[T string | []byte](tb testing.TB, path string, data T) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.Write([]byte(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatalf("append to %s: %v", path, err)
	}
}
