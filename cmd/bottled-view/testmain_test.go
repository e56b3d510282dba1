package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/internal/skips"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// bin holds bottled and bottled-view, built once by TestMain (with the
// race detector when the tests have it) for the tests that run them as
// processes.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bottled-view-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	if err := testbin.Binaries(dir, "github.com/bottled-dev/bottled/cmd/bottled", "github.com/bottled-dev/bottled/cmd/bottled-view"); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := skips.Main(m) // m.Run, then what was skipped (see internal/skips)
	os.RemoveAll(dir)
	os.Exit(code)
}

func binary(name string) string { return filepath.Join(bin, name) }
