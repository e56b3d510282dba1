package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// FileForDir makes, under a new temporary directory, Claude Code's
// directory and the data directory as a command is given them, the one
// flag names ("--claude-dir" or "--data-dir") a regular file: the case
// every bottled binary refuses in one line. It returns the two flags with
// their values, and the file.
func FileForDir(t *testing.T, flag string) (args []string, file string) {
	t.Helper()
	root := t.TempDir()
	file = filepath.Join(root, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{"--claude-dir": filepath.Join(root, "claude"), "--data-dir": filepath.Join(root, "mem")}
	dirs[flag] = file
	return []string{"--claude-dir", dirs["--claude-dir"], "--data-dir", dirs["--data-dir"]}, file
}
