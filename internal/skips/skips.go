// Package skips tells whoever runs the tests what was skipped for want of
// something the machine lacks (the real transcripts in ../shared, bun and
// claude-mem, Claude Code, tmux) and how to get it, in one line at the end
// of a `go test` run.
//
// Without -v, `go test ./...` shows nothing of a passing package's output,
// stdout or stderr: a skip's message is seen only with -v. So a test that
// skips calls Note, which records the reason in a directory shared by the
// test binaries of one run (they are all children of the one go command:
// the directory is named after that process), and every package whose
// tests can skip runs them through Main, which writes the pending reasons
// as one line to the terminal (/dev/tty), where go test's capture does not
// reach, or, without one, to stderr (shown with -v, or when the package
// fails).
//
// "At the end" is as near the end as a test binary can know: go runs the
// packages' test binaries (and compiles the next ones) as its own
// children, several at once, and tells none of them which is last. Main
// writes the line when no other child of the go command is running, so in
// practice after the last package's tests, beside its "ok" line; each
// reason is written once per run, and a reason first met after the line
// was written (by a package go had not started yet) gets a line of its
// own at the end of that package. Where the processes cannot be listed
// (no /proc), Main writes what is pending at the end of each package.
//
// Under CI (the BOTTLED_REQUIRE_* variables) the tests fail instead of
// skipping, and nothing is noted.
//
// Test support: only _test.go files, and the test support packages they
// use, import it.
package skips

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A note is one reason for skipping: what was missing, how to get it,
// and the tests it skipped.
type note struct {
	what, how string
	tests     []string
}

// dirPrefix names the run directories in the temporary directory.
const dirPrefix = "bottled-test-skips-"

// runDir is the directory the test binaries of this run share.
func runDir() string {
	return filepath.Join(os.TempDir(), dirPrefix+strconv.Itoa(os.Getppid())+startTime(os.Getppid()))
}

// Note records that tb is skipped for want of what, and how to get it
// ("run .ci/run", "set BOTTLED_CLAUDE…"); call it before tb.Skip. It
// never fails the test: the skip's own message says the same.
func Note(tb testing.TB, what, how string) {
	removeStale(os.TempDir())
	record(runDir(), what, how, tb.Name())
}

// Main runs the tests, then writes the reasons noted during the run and
// not written yet, when this is the last test binary running (see the
// package doc). Use it as a package's TestMain: os.Exit(skips.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	report(runDir(), os.Getppid(), terminal)
	return code
}

// terminal opens where the person running the tests sees the line.
func terminal() (io.WriteCloser, error) {
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		return tty, nil
	}
	return nopCloser{os.Stderr}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// record adds test to the note of what in dir: a file per reason (named
// after it, so that every binary finds the same one), the test names one
// a line after the reason and the way to get it.
func record(dir, what, how, test string) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	sum := sha256.Sum256([]byte(what))
	path := filepath.Join(dir, hex.EncodeToString(sum[:8])+".note")
	unlock := lock(dir)
	defer unlock()
	if _, err := os.Stat(path); err != nil {
		os.WriteFile(path, []byte(what+"\n"+how+"\n"), 0o600)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(test + "\n")
}

// printedFile lists, in a run directory, the reasons already written.
const printedFile = "printed"

// report writes, through open, one line naming the reasons noted in dir
// and not written yet, unless another child of the go command (pid
// parent) is still running; it remembers them as written.
func report(dir string, parent int, open func() (io.WriteCloser, error)) {
	if _, err := os.Stat(dir); err != nil {
		return // nothing was noted in this run
	}
	unlock := lock(dir)
	defer unlock()
	pending := pendingNotes(dir)
	if len(pending) == 0 || othersRunning(parent, os.Getpid()) {
		return
	}
	w, err := open()
	if err != nil {
		return
	}
	defer w.Close()
	if _, err := io.WriteString(w, Line(pending)+"\n"); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, printedFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	for _, n := range pending {
		f.WriteString(n.what + "\n")
	}
}

// pendingNotes reads the notes in dir that were not written yet, in the
// order of their reasons.
func pendingNotes(dir string) []note {
	printed := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, printedFile)); err == nil {
		for line := range strings.Lines(string(b)) {
			printed[strings.TrimSuffix(line, "\n")] = true
		}
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.note"))
	var notes []note
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(lines) < 2 || printed[lines[0]] {
			continue
		}
		tests := slices.Compact(slices.Sorted(slices.Values(lines[2:])))
		notes = append(notes, note{what: lines[0], how: lines[1], tests: tests})
	}
	slices.SortFunc(notes, func(a, b note) int { return strings.Compare(a.what, b.what) })
	return notes
}

// Line is the line written for notes: what was missing, for how many
// tests, and how to get it.
func Line(notes []note) string {
	var parts []string
	for _, n := range notes {
		tests := "1 test"
		if len(n.tests) != 1 {
			tests = fmt.Sprintf("%d tests", len(n.tests))
		}
		parts = append(parts, fmt.Sprintf("%s (%s; %s)", n.what, tests, n.how))
	}
	return "bottled tests skipped for want of " + strings.Join(parts, ", ") + " — go test -v names them"
}
