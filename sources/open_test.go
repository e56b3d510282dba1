package sources

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/oddfile"
)

// TestOpenRegular opens every kind of file that can stand where a
// transcript or a bottle is expected: only a regular file (or a symlink to
// one) is opened; anything else is refused as not there, and nothing
// waits (a named pipe's open would wait for a writer, a leased file's for
// the lease to be given up), which is checked with a deadline so that a
// regression fails rather than hangs.
func TestOpenRegular(t *testing.T) {
	const content = "a transcript line\n"
	write := func(t *testing.T, path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(t *testing.T, target, link string) {
		t.Helper()
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		// want: nil (opened), ErrNotRegular, fs.ErrNotExist (nothing
		// there) or syscall.EWOULDBLOCK (try again later).
		want error
	}{
		{"regular file", func(t *testing.T, path string) { write(t, path, content) }, nil},
		{"link to a regular file", func(t *testing.T, path string) {
			write(t, path+".target", content)
			symlink(t, path+".target", path)
		}, nil},
		{"nothing", func(t *testing.T, path string) {}, fs.ErrNotExist},
		{"dangling link", func(t *testing.T, path string) { symlink(t, path+".gone", path) }, fs.ErrNotExist},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, ErrNotRegular},
		{"character device", func(t *testing.T, path string) { symlink(t, os.DevNull, path) }, ErrNotRegular},
		{"named pipe", func(t *testing.T, path string) { oddfile.FIFO(t, path) }, ErrNotRegular},
		{"unix socket", func(t *testing.T, path string) { oddfile.Socket(t, path) }, ErrNotRegular},
		{"link to a named pipe", func(t *testing.T, path string) { oddfile.LinkToFIFO(t, path) }, ErrNotRegular},
		{"file under a lease", func(t *testing.T, path string) {
			write(t, path, content)
			oddfile.Lease(t, path)
		}, syscall.EWOULDBLOCK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			tc.make(t, path)
			type opened struct {
				data []byte
				err  error
			}
			done := make(chan opened, 1)
			go func() {
				data, err := ReadRegular(path)
				done <- opened{data, err}
			}()
			var got opened
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the open waits") // the goroutine is left blocked
			}
			switch {
			case tc.want == nil && (got.err != nil || string(got.data) != content):
				t.Fatalf("read %q, %v; want %q", got.data, got.err, content)
			case tc.want != nil && !errors.Is(got.err, tc.want):
				t.Fatalf("err %v, want %v", got.err, tc.want)
			case errors.Is(tc.want, ErrNotRegular) && !errors.Is(got.err, fs.ErrNotExist):
				t.Fatalf("err %v is not an fs.ErrNotExist: readers would not take it for a missing file", got.err)
			}
			if _, err := StatRegular(path); (err == nil) != (tc.want == nil || errors.Is(tc.want, syscall.EWOULDBLOCK)) {
				t.Errorf("StatRegular: %v", err)
			}
		})
	}
}
