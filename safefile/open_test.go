package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/oddfile"
)

// TestOpen opens every kind of file that can stand where a transcript or
// a bottle is expected, with Open (no link followed) and OpenFollow: only
// a regular file (for OpenFollow, or a link to one) is opened, anything
// else is refused, and nothing waits (a named pipe's open would wait for a
// writer, a leased file's for the lease to be given up), which is checked
// with a deadline so that a regression fails rather than hangs.
func TestOpen(t *testing.T) {
	const content = "a line\n"
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
	mkfifo := func(t *testing.T, path string) { oddfile.FIFO(t, path) }
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		// nil (opened), ErrNotRegular, fs.ErrNotExist or
		// syscall.EWOULDBLOCK (try again later), by opener.
		open, follow error
	}{
		{"regular file", func(t *testing.T, path string) { write(t, path, content) }, nil, nil},
		{"link to a regular file", func(t *testing.T, path string) {
			write(t, path+".target", content)
			symlink(t, path+".target", path)
		}, ErrNotRegular, nil},
		{"nothing", func(t *testing.T, path string) {}, fs.ErrNotExist, fs.ErrNotExist},
		{"dangling link", func(t *testing.T, path string) { symlink(t, path+".gone", path) }, ErrNotRegular, fs.ErrNotExist},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, ErrNotRegular, ErrNotRegular},
		{"character device", func(t *testing.T, path string) { symlink(t, os.DevNull, path) }, ErrNotRegular, ErrNotRegular},
		{"named pipe", mkfifo, ErrNotRegular, ErrNotRegular},
		{"unix socket", func(t *testing.T, path string) { oddfile.Socket(t, path) }, ErrNotRegular, ErrNotRegular},
		{"link to a named pipe", func(t *testing.T, path string) { oddfile.LinkToFIFO(t, path) }, ErrNotRegular, ErrNotRegular},
		{"file under a lease", func(t *testing.T, path string) {
			write(t, path, content)
			oddfile.Lease(t, path)
		}, syscall.EWOULDBLOCK, syscall.EWOULDBLOCK},
	}
	openers := []struct {
		name string
		open func(string) (*os.File, fs.FileInfo, error)
		want func(tc int) error
	}{
		{"Open", Open, func(i int) error { return tests[i].open }},
		{"OpenFollow", OpenFollow, func(i int) error { return tests[i].follow }},
	}
	for _, op := range openers {
		for i, tc := range tests {
			t.Run(op.name+"/"+tc.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "f")
				tc.make(t, path)
				got := readWithin(t, path, op.open)
				want := op.want(i)
				switch {
				case want == nil && (got.err != nil || string(got.data) != content):
					t.Fatalf("read %q, %v; want %q", got.data, got.err, content)
				case want != nil && !errors.Is(got.err, want):
					t.Fatalf("err %v, want %v", got.err, want)
				}
				var nr *NotRegularError
				if errors.As(got.err, &nr) && nr.Path != path {
					t.Errorf("error names %s, want %s", nr.Path, path)
				}
			})
		}
	}
}

type read struct {
	data []byte
	err  error
}

// readWithin reads path with open, failing the test if the open waits.
func readWithin(t *testing.T, path string, open func(string) (*os.File, fs.FileInfo, error)) read {
	t.Helper()
	done := make(chan read, 1)
	go func() {
		f, _, err := open(path)
		if err != nil {
			done <- read{nil, err}
			return
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		done <- read{data, err}
	}()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("the open waits") // the goroutine is left blocked
	}
	return read{}
}
