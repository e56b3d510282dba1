package binflags

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// Resolve finds the directories a command works on, as sources.FindDirs
// does (given: the flags given), says the warning it has once on stderr
// (after "name: warning: "), and checks them (CheckDirs). An empty flag is
// a UsageError; a directory that cannot be used is an error that says
// which and what to do.
func Resolve(name string, given sources.Given, stderr io.Writer) (sources.Dirs, error) {
	d, err := sources.FindDirs(given)
	if errors.As(err, new(sources.EmptyFlagError)) {
		return d, UsageError{err}
	}
	if err != nil {
		return d, err
	}
	if d.Warning != "" {
		fmt.Fprintf(stderr, "%s: warning: %s\n", name, d.Warning)
	}
	return d, CheckDirs(d)
}

// CheckDirs refuses directories that exist and are files (or anything but
// a directory), or that cannot be made because what is above them is not
// a directory: every command would fail on it later, each its own way
// (every bottle reported unreadable, a mkdir that failed, a bottle not
// found), for what is one mistake. A directory that does not exist is
// fine: nothing was written there yet.
func CheckDirs(d sources.Dirs) error {
	for _, c := range []struct{ path, what, fix string }{
		{d.Claude.Path, "Claude Code's directory", howToGive(d.Claude, "claude-dir", sources.ClaudeDirEnv, "the directory Claude Code uses")},
		{sources.ProjectsDir(d.Claude.Path), "Claude Code's projects directory", "Claude Code keeps its transcripts there: move what is there away"},
		{d.Data.Path, "the data directory", howToGive(d.Data, "data-dir", sources.DataDirEnv, "a directory")},
		{bottles.BottlesDir(d.Data.Path), "the bottles directory", "bottled keeps its bottles there: move what is there away"},
	} {
		info, err := os.Stat(c.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case errors.Is(err, syscall.ENOTDIR):
			// Something above it is not a directory: the directory above
			// was checked first, so it is higher still.
			if above, info := notDirAbove(c.path); above != "" {
				return fmt.Errorf("%s %s cannot be made: %s is not a directory (%s): %s", c.what, c.path, above, safefile.Kind(info.Mode()), c.fix)
			}
		case err != nil:
			return fmt.Errorf("%s %s cannot be read: %v", c.what, c.path, err)
		case !info.IsDir():
			return fmt.Errorf("%s %s is not a directory (%s): %s", c.what, c.path, safefile.Kind(info.Mode()), c.fix)
		}
	}
	return nil
}

// notDirAbove is the nearest path above p that exists, and its file info,
// if it is not a directory ("" if it is one).
func notDirAbove(p string) (string, fs.FileInfo) {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if info, err := os.Stat(dir); err == nil {
			if info.IsDir() {
				return "", nil
			}
			return dir, info
		}
		if dir == filepath.Dir(dir) {
			return "", nil
		}
	}
}

// howToGive says how to give the directory d, which flag (--flag) or
// env names, as what: where it came from, and, for a default, that what
// stands there can be moved away.
func howToGive(d sources.Dir, flag, env, what string) string {
	switch d.From {
	case sources.FromFlag:
		return "give --" + flag + " " + what
	case sources.FromEnv:
		return "give " + env + " (or --" + flag + ") " + what
	case sources.FromSettings:
		return "give " + env + " in " + d.Where + " (or --" + flag + ") " + what
	}
	return "give --" + flag + " " + what + ", or move what is there away"
}
