// Package binflags is the command line bottled's own binaries beside
// bottled share (bottled-mcp and bottled-view, which bottled runs from
// beside itself): the flags every bottled command takes (--claude-dir,
// --data-dir, each defaulting to its environment variable, then to the home
// directory's; --version), how a bad one is told, and the exit statuses
// (0 done or --help, 1 not done, 2 bad usage; the reason on stderr in one
// line).
package binflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/version"
)

// UsageError is bad usage of a binary: it exits 2.
type UsageError struct{ error }

// AsUsage marks err as bad usage.
func AsUsage(err error) error { return UsageError{err} }

// Usagef is a UsageError that says what to do.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Dirs are the directories a binary was given, absolute.
type Dirs struct{ Claude, Data string }

// Set is a binary's flag set with the flags every bottled binary takes.
type Set struct {
	*flag.FlagSet
	name               string
	claudeDir, dataDir *string
	version            *bool
}

// New returns binary name's flag set, with --claude-dir, --data-dir and
// --version defined (flags beat the environment, which beats the
// defaults). Its usage, on stderr, is usage followed by the flags. The
// caller adds its own flags.
func New(name, usage string, stderr io.Writer) *Set {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	claude, data := sources.DefaultDirs()
	return &Set{
		FlagSet:   fs,
		name:      name,
		claudeDir: fs.String("claude-dir", claude, "Claude Code's config directory (transcripts are in its projects/)"),
		dataDir:   fs.String("data-dir", data, "claude-mem's data directory (its claude-mem.db; bottles in its bottles/)"),
		version:   fs.Bool("version", false, "print the version and exit"),
	}
}

// Parse parses args. On --version it prints the binary's version on
// stdout and returns ok false: the binary is done. A bad flag or an empty
// directory is a UsageError; -h or --help is flag.ErrHelp, after the usage.
func (s *Set) Parse(args []string, stdout io.Writer) (d Dirs, ok bool, err error) {
	if err := s.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Dirs{}, false, err
		}
		return Dirs{}, false, UsageError{err}
	}
	if *s.version {
		_, err := fmt.Fprintf(stdout, "%s version %s\n", s.name, version.String())
		return Dirs{}, false, err
	}
	d.Claude, d.Data, err = sources.AbsDirs(*s.claudeDir, *s.dataDir)
	if errors.Is(err, sources.ErrEmptyDir) {
		return Dirs{}, false, UsageError{err}
	}
	return d, err == nil, err
}

// Main runs a binary's run until it returns or SIGINT or SIGTERM cancels
// its context, then exits with the status its error calls for, saying the
// error on stderr.
func Main(name string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	os.Exit(Exit(name, err, os.Stderr))
}

// Exit is the exit status for a run that ended with err, which it says on
// stderr as "name: err": 0 for none or --help, 2 for a UsageError, else 1.
func Exit(name string, err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(UsageError)):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
}
