package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/testbin"
)

// TestExportChecksItsFileOnce: bottled export runs bottled-view, which
// checks the file -o names, as the user named it (relative to where
// bottled ran, a name that starts with "-" included), and says in one
// line what keeps it from being written, as bottled.
func TestExportChecksItsFileOnce(t *testing.T) {
	bin := t.TempDir()
	if err := testbin.Binaries(bin, "github.com/bottled-dev/bottled/cmd/bottled", "github.com/bottled-dev/bottled/cmd/bottled-view"); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, true)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "mine.html"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(cwd, "pages"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out, force string
		code       int
		stderr     string // all of it
		written    string // the file written, relative to cwd
	}{
		{out: "mine.html", code: exitFailed, stderr: "bottled: mine.html exists: --force replaces it\n"},
		{out: "pages", force: "--force", code: exitFailed, stderr: "bottled: pages is a directory: give -o a file's path\n"},
		{out: "none/page.html", code: exitFailed, stderr: "bottled: none does not exist: make it or give -o a path in a directory that does\n"},
		{out: "-page.html", written: "-page.html"},
		{out: "mine.html", force: "--force", written: "mine.html"},
	} {
		args := append(e.flags(), "export", sessionID, "-o", tc.out)
		if tc.force != "" {
			args = append(args, tc.force)
		}
		cmd := exec.Command(filepath.Join(bin, "bottled"), args...)
		cmd.Dir = cwd
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || stderr.String() != tc.stderr {
			t.Errorf("export -o %s %s: exit %d (%v), stderr %q; want %d, %q", tc.out, tc.force, code, err, stderr.String(), tc.code, tc.stderr)
		}
		if tc.written != "" {
			if page, err := os.ReadFile(filepath.Join(cwd, tc.written)); !strings.HasPrefix(string(page), "<!doctype html>") {
				t.Errorf("export -o %s %s wrote %.40q (%v), want the page", tc.out, tc.force, page, err)
			}
		}
	}
}
