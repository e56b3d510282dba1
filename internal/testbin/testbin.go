// Package testbin is test support for the tests and benchmarks that run
// bottled's binaries as processes: building them (with the race detector
// when the test has it), the builds the start-up benchmarks compare, a Go
// hello-world binary to compare them with, the median of timed runs, a
// buffer a process can write its log to while a test reads it; and, for
// the tests that call a binary's run in process, the directories a bad
// flag names (FileForDir) and the check of its bad usage (CheckUsage).
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// Build builds the packages (import paths) into dir with go build flags
// and extra environment, and fails tb if it cannot.
func Build(tb testing.TB, dir string, flags, env []string, pkgs ...string) {
	tb.Helper()
	if err := build(dir, flags, env, pkgs); err != nil {
		tb.Fatal(err)
	}
}

// Binaries builds the packages into dir for tests that run them as
// processes, with the race detector when the tests have it (Race). It is
// for TestMain, which has no testing.TB.
func Binaries(dir string, pkgs ...string) error {
	var flags []string
	if Race {
		flags = append(flags, "-race")
	}
	return build(dir, flags, nil, pkgs)
}

// Timed is the environment for a process built by Binaries whose time to
// answer a test measures: with the race detector, a process sleeps 1 s as
// it exits (GORACE's atexit_sleep_ms, so that other goroutines' reports
// get out), which a deadline of a second or two cannot absorb on a busy
// machine. Those processes exit at once; the other runs of the same
// binaries keep the sleep and report races as ever.
func Timed() []string {
	env := os.Environ()
	if !Race {
		return env
	}
	opts := os.Getenv("GORACE")
	if opts != "" {
		opts += " "
	}
	return append(env, "GORACE="+opts+"atexit_sleep_ms=0")
}

func build(dir string, flags, env, pkgs []string) error {
	args := append(append([]string{"build"}, flags...), "-o", dir+string(filepath.Separator))
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %v: %v\n%s", cmd.Args[1:], err, out)
	}
	return nil
}

// Flavor is one way of building a binary whose start-up is measured.
type Flavor struct {
	Name  string
	Flags []string
	Env   []string
}

// Flavors are the builds start-up benchmarks compare: a plain go build,
// and the one the README recommends (static, stripped), which starts
// faster.
var Flavors = []Flavor{
	{"default", nil, nil},
	{"lean", []string{"-ldflags=-s -w"}, []string{"CGO_ENABLED=0"}},
}

// EachFlavor runs bench as a sub-benchmark for each of Flavors, in a
// temporary directory dir holding the main package pkg (an import path)
// built that way, as bin, and a hello-world binary (Hello).
func EachFlavor(b *testing.B, pkg string, bench func(b *testing.B, dir, bin, hello string)) {
	for _, f := range Flavors {
		b.Run(f.Name, func(b *testing.B) {
			dir := b.TempDir()
			hello := Hello(b, dir)
			Build(b, dir, f.Flags, f.Env, pkg)
			bench(b, dir, filepath.Join(dir, path.Base(pkg)), hello)
		})
	}
}

// Hello builds a Go hello-world binary in dir and returns its path: the
// start of the smallest Go process, measured in the same run as what is
// compared with it.
func Hello(tb testing.TB, dir string) string {
	tb.Helper()
	src := filepath.Join(dir, "hello", "main.go")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "hello", "hello")
	cmd := exec.Command("go", "build", "-o", bin, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build hello: %v\n%s", err, out)
	}
	return bin
}

// Runs is how many timed runs a median is taken over.
const Runs = 30

// Median runs run Runs times and returns the median of what it reports.
func Median(run func() time.Duration) time.Duration {
	ds := make([]time.Duration, 0, Runs)
	for range Runs {
		ds = append(ds, run())
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// TimeRun runs a command to its end and returns how long it took.
func TimeRun(tb testing.TB, name string, args ...string) time.Duration {
	tb.Helper()
	start := time.Now()
	if err := exec.Command(name, args...).Run(); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// SyncBuffer is a bytes.Buffer a process writes to while a test reads it.
type SyncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
