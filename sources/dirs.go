package sources

import (
	"errors"
	"os"
	"path/filepath"
)

// The environment variables by which Claude Code and claude-mem are told
// their directories; bottled's commands read them the same way.
const (
	ClaudeDirEnv = "CLAUDE_CONFIG_DIR"   // Claude Code's config directory
	DataDirEnv   = "CLAUDE_MEM_DATA_DIR" // claude-mem's data directory
)

// HomeDirs are the directories Claude Code and claude-mem use when their
// variables are unset: ~/.claude and ~/.claude-mem, or the bare names
// (relative to the working directory) if the home directory is unknown.
func HomeDirs() (claude, data string) {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".claude", ".claude-mem"
	}
	return filepath.Join(home, ".claude"), filepath.Join(home, ".claude-mem")
}

// DefaultDirs are the directories as Claude Code and claude-mem find them:
// ClaudeDirEnv and DataDirEnv where set, else HomeDirs.
func DefaultDirs() (claude, data string) {
	claude, data = HomeDirs()
	if v := os.Getenv(ClaudeDirEnv); v != "" {
		claude = v
	}
	if v := os.Getenv(DataDirEnv); v != "" {
		data = v
	}
	return claude, data
}

// ErrEmptyDir is AbsDirs' answer to an empty directory, a mistake in how
// a command was called.
var ErrEmptyDir = errors.New("--claude-dir and --data-dir must not be empty")

// AbsDirs makes the two directories absolute; neither may be empty.
func AbsDirs(claude, data string) (string, string, error) {
	if claude == "" || data == "" {
		return "", "", ErrEmptyDir
	}
	c, err := filepath.Abs(claude)
	if err != nil {
		return "", "", err
	}
	d, err := filepath.Abs(data)
	return c, d, err
}
