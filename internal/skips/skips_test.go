package skips

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// buffer is where report writes, in place of the terminal.
type buffer struct{ bytes.Buffer }

func (b *buffer) open() (io.WriteCloser, error) { return nopCloser{b}, nil }

// lonely is the go command's pid in tests that need it to have no other
// child: this process, whose children the tests wait for.
var lonely = os.Getpid()

// TestOneLinePerRun records reasons as the test binaries of one run do (the
// same reason from several tests and binaries): the report writes them in
// one line, each once, with how many tests it skipped; what is noted after
// is written once more, alone.
func TestOneLinePerRun(t *testing.T) {
	dir := t.TempDir()
	var out buffer
	record(dir, "claude-mem", "run .ci/run, or set BOTTLED_BUN and BOTTLED_CLAUDE_MEM", "TestA")
	record(dir, "claude-mem", "run .ci/run, or set BOTTLED_BUN and BOTTLED_CLAUDE_MEM", "TestB")
	record(dir, "claude-mem", "run .ci/run, or set BOTTLED_BUN and BOTTLED_CLAUDE_MEM", "TestA") // another package's TestA
	record(dir, "../shared/fixtures", "put the shared folder beside the repository", "TestReal")
	report(dir, lonely, out.open)
	want := "bottled tests skipped for want of ../shared/fixtures (1 test; put the shared folder beside the repository), " +
		"claude-mem (2 tests; run .ci/run, or set BOTTLED_BUN and BOTTLED_CLAUDE_MEM) — go test -v names them\n"
	if out.String() != want {
		t.Errorf("wrote\n%q\nwant\n%q", out.String(), want)
	}

	out.Reset()
	record(dir, "claude-mem", "run .ci/run, or set BOTTLED_BUN and BOTTLED_CLAUDE_MEM", "TestC")
	report(dir, lonely, out.open)
	if out.Len() != 0 {
		t.Errorf("a reason written already was written again: %q", out.String())
	}
	record(dir, "Claude Code", "set BOTTLED_CLAUDE", "TestE2E")
	report(dir, lonely, out.open)
	if want := "bottled tests skipped for want of Claude Code (1 test; set BOTTLED_CLAUDE) — go test -v names them\n"; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}

// TestNothingNoted: a run that skipped nothing writes nothing.
func TestNothingNoted(t *testing.T) {
	var out buffer
	report(t.TempDir()+"/none", lonely, out.open)
	report(t.TempDir(), lonely, out.open)
	if out.Len() != 0 {
		t.Errorf("wrote %q", out.String())
	}
}

// TestWaitsForTheLastBinary: while another child of the go command runs
// (here, of this process), the report leaves the line to it.
func TestWaitsForTheLastBinary(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here: the line is written at the end of every package")
	}
	dir := t.TempDir()
	record(dir, "tmux", "install tmux", "TestScreen")
	other := exec.Command("sleep", "600")
	if err := other.Start(); err != nil {
		t.Skipf("cannot start another process: %v", err)
	}
	var out buffer
	report(dir, os.Getpid(), out.open)
	other.Process.Kill()
	other.Wait()
	if out.Len() != 0 {
		t.Fatalf("wrote %q while another binary ran", out.String())
	}
	report(dir, os.Getpid(), out.open)
	if out.Len() == 0 {
		t.Errorf("the last binary wrote nothing")
	}
}

// TestStaleRunsRemoved: the directory of a run whose go command is gone is
// removed; the current run's is kept.
func TestStaleRunsRemoved(t *testing.T) {
	tmp := t.TempDir()
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Skip(err)
	}
	stale := tmp + "/" + dirPrefix + strconv.Itoa(done.Process.Pid)
	live := tmp + "/" + dirPrefix + strconv.Itoa(os.Getpid()) + startTime(os.Getpid())
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(tmp)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale run's directory is still there")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live run's directory was removed: %v", err)
	}
}

// mainCall is a TestMain's call of Main (this package's own is unqualified).
var mainCall = regexp.MustCompile(`(?m)^func TestMain\(m \*testing\.M\) \{ os\.Exit\((skips\.)?Main\(m\)\) \}|\bskips\.Main\(m\)`)

// TestEveryPackageTakesPart: every package of the module with tests runs
// them through Main, or the run's line could be left to a binary that
// never writes it (the last one to finish).
func TestEveryPackageTakesPart(t *testing.T) {
	root := filepath.Join("..", "..")
	tested := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dir := filepath.Dir(path)
			tested[dir] = tested[dir] || mainCall.Match(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tested) < 5 {
		t.Fatalf("found the tests of %d packages only", len(tested))
	}
	for dir, ok := range tested {
		if !ok {
			t.Errorf("the tests in %s do not run through skips.Main (a TestMain calling os.Exit(skips.Main(m)))", dir)
		}
	}
}
