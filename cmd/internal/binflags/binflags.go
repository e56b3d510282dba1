// Package binflags is the command line bottled's own binaries beside
// bottled share (bottled-mcp and bottled-view, which bottled runs from
// beside itself): the flags every bottled command takes (--claude-dir,
// --data-dir, found as Claude Code and claude-mem find them when not given
// (Resolve); --version), how a bad one is told, and the exit statuses
// (0 done or --help, 1 not done, 2 bad usage; the reason on stderr in one
// line, in the words bottled tells its own in, which it takes from here).
// bottled resolves and checks its directories here too, so that every
// binary finds the same ones and says the same of a wrong one.
package binflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
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
	name, binary, command string
	usage                 string
	claudeDir, dataDir    *string
	version               *bool
}

// New returns binary's flag set, with --claude-dir, --data-dir and
// --version defined (a flag given beats what Resolve finds). command is the bottled command that runs the binary (mcp),
// or "" for one that runs it with a command of the binary's own (view,
// export). Its help is usage followed by the flags, spelled as bottled's
// help spells them. The caller adds its own flags.
func New(binary, command, usage string) *Set {
	fs := flag.NewFlagSet(binary, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the flag package's own words are not said: Parse words them
	return &Set{
		FlagSet:   fs,
		name:      Invoked(binary),
		binary:    binary,
		command:   command,
		usage:     usage,
		claudeDir: fs.String("claude-dir", "", ClaudeDirUsage),
		dataDir:   fs.String("data-dir", "", DataDirUsage),
		version:   fs.Bool("version", false, "print the version and exit"),
	}
}

// Invoked is the name a binary's messages start with, the program the
// user ran: "bottled" when bottled ran it (bottled mcp, view and export
// start it with argv[0] "bottled"), else the binary's own name.
func Invoked(binary string) string {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == BottledName {
		return BottledName
	}
	return binary
}

// BottledName is the argv[0] bottled gives the binaries it runs.
const BottledName = "bottled"

// Name is the name the binary's messages start with (Invoked).
func (s *Set) Name() string { return s.name }

// The flags' help, which says where the directories are found without them.
const (
	ClaudeDirUsage = "Claude Code's config directory (transcripts are in its projects/); default $CLAUDE_CONFIG_DIR, else ~/.claude"
	DataDirUsage   = "claude-mem's data directory (its claude-mem.db; bottles in its bottles/); default as claude-mem finds it: $CLAUDE_MEM_DATA_DIR, else CLAUDE_MEM_DATA_DIR in ~/.claude-mem/settings.json, else ~/.claude-mem"
)

// Parse parses args. On --version it prints the binary's version on
// stdout and returns ok false: the binary is done. A bad flag or an empty
// directory flag is a UsageError; -h or --help is flag.ErrHelp, after the
// help on stdout. The directories are Resolve's, which says its warning
// on stderr.
func (s *Set) Parse(args []string, stdout, stderr io.Writer) (d Dirs, ok bool, err error) {
	if err := s.parse(s.FlagSet, s.command, args, stdout); err != nil {
		return Dirs{}, false, err
	}
	if *s.version {
		_, err := fmt.Fprintf(stdout, "%s version %s\n", s.binary, version.String())
		return Dirs{}, false, err
	}
	var given sources.Given
	s.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "claude-dir":
			given.Claude = s.claudeDir
		case "data-dir":
			given.Data = s.dataDir
		}
	})
	found, err := Resolve(s.name, given, stderr)
	if err != nil {
		return Dirs{}, false, err
	}
	return Dirs{Claude: found.Claude.Path, Data: found.Data.Path}, true, nil
}

// Command is the flag set of one of the binary's commands (bottled-view's
// view and export), whose errors and help are told as the binary's are.
func (s *Set) Command(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// ParseCommand parses the arguments of the binary's command fs (made by
// Command) and returns the words that are not flags: as bottled's
// commands do, it takes flags before and after them, and after "--"
// every word is an argument. A bad flag is a UsageError; -h or --help is
// flag.ErrHelp, after the help on stdout.
func (s *Set) ParseCommand(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var words []string
	for {
		if err := s.parse(fs, fs.Name(), args, stdout); err != nil {
			return nil, err
		}
		rest := fs.Args()
		// The flag package stops at the first word that is no flag, or
		// after "--", which it takes; "--" given as a flag's value reads
		// the same and ends the flags too.
		if ended := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"; ended || len(rest) == 0 {
			return append(words, rest...), nil
		}
		words, args = append(words, rest[0]), rest[1:]
	}
}

func (s *Set) parse(fs *flag.FlagSet, command string, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, s.usage)
		printFlags(stdout, fs)
		return err
	}
	return UsageError{errors.New(Reword(err.Error(), func(name string) string { return valueKind(fs, name) }) + " (see " + s.helpFor(command) + ")")}
}

// helpFor is the help the user is pointed to for a mistake in command's
// flags: bottled's, as bottled ran the binary, else the binary's.
func (s *Set) helpFor(command string) string {
	if s.name == BottledName {
		return strings.TrimSpace(BottledName+" "+command) + " --help"
	}
	return s.binary + " --help"
}

// Main runs a binary's run until it returns or SIGINT or SIGTERM cancels
// its context, then exits with the status its error calls for, saying the
// error on stderr after the name the binary was invoked by (Invoked).
func Main(binary string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	os.Exit(Exit(Invoked(binary), err, os.Stderr))
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
