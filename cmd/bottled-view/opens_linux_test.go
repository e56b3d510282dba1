package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/bottled-dev/bottled/bottles"
)

// TestExportReadsPatternsOnce: an export reads the user's redaction
// patterns once, for both the warning about what cannot be used and the
// render that redacts with the rest, counted as the kernel saw the file
// opened (inotify).
func TestExportReadsPatternsOnce(t *testing.T) {
	w := patternedWorld(t)
	patterns := bottles.RulesFile(w.data)
	opens := watchOpens(t, patterns)
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"--claude-dir", w.claude, "--data-dir", w.data, "export", "--format", "md", idApp}, &out, &errs); err != nil {
		t.Fatalf("export: %v (%s)", err, errs.String())
	}
	if strings.Contains(out.String(), "acme_0123456789abcdef") {
		t.Errorf("the export is not redacted by the usable pattern:\n%s", out.String())
	}
	if n := opens(); n != 1 {
		t.Errorf("the export opened %s %d times, want once", patterns, n)
	}
}

// watchOpens starts counting the opens of the file at path; the function
// it returns gives how many there were since. The kernel queues each
// open's event as the open is made, so the count is complete once the
// opener has returned. Closes are watched too: the kernel merges an event
// into the one before it when they are the same, and two opens in a row
// would count as one.
func watchOpens(t *testing.T, path string) func() int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_CLOSE); err != nil {
		t.Fatalf("inotify watch %s: %v", path, err)
	}
	return func() int {
		n := 0
		buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
		for {
			k, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return n
			}
			if err != nil {
				t.Fatalf("inotify read: %v", err)
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= k; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&syscall.IN_OPEN != 0 {
					n++
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}
