// Command bottled keeps a session bottle current for every Claude Code
// session on this machine: the verbatim conversation with tool traffic
// replaced by claude-mem's one-line observations, for a model to read after
// its context was compacted.
//
// This package only wires commands to the packages that do the work; each
// command is one file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/cmd/internal/binflags"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/version"
)

func main() {
	ctx, stop := interruptible(context.Background())
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalled is the cause of a context a signal cancelled.
type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return s.sig.String() }

// interruptible returns a context that SIGINT or SIGTERM cancels, with the
// signal as its cause (so that the exit status can tell), and the function
// that stops listening for them.
func interruptible(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { // passes the first signal on to ctx; ends with stop
		select {
		case s := <-sigs:
			if sig, ok := s.(syscall.Signal); ok {
				cancel(signalled{sig})
			}
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// Exit codes shared by the commands.
const (
	exitOK      = 0
	exitFailed  = 1 // the command could not do its job (reason on stderr)
	exitUsage   = 2 // bad flags or arguments
	flagClaude  = "claude-dir"
	flagDataDir = "data-dir"
)

// run executes the command line and returns the process exit code. Errors
// are printed as one line on stderr.
//
// Flags are taken anywhere before a "--", before or after a command's
// arguments, and the global ones after any command too (urfave/cli v3's
// parser: every flag of a command is inherited by its subcommands); after
// "--" every word is an argument.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := &cli.Command{
		Name:            "bottled",
		Usage:           "keep Claude Code session bottles current",
		Version:         version.String(),
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Description:     help(bottledHelp),
		Flags: []cli.Flag{
			// No default and no environment variable here: dirsOf finds
			// the directories when the flags are not given.
			&cli.StringFlag{Name: flagClaude, Usage: binflags.ClaudeDirUsage},
			&cli.StringFlag{Name: flagDataDir, Usage: binflags.DataDirUsage},
		},
		Commands: subcommands(),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("unknown command %q (see bottled --help)", cmd.Args().First())
			}
			cli.ShowRootCommandHelp(cmd)
			return exitError{code: exitUsage}
		},
		OnUsageError:   onUsageError,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, // exit codes are decided here, not inside cli
	}
	setHandlers(root.Commands)
	err := root.Run(ctx, args)
	return exitCode(ctx, err, stderr)
}

// subcommands are bottled's commands, in the order its help lists them.
func subcommands() []*cli.Command {
	return []*cli.Command{
		runCommand(),
		renderCommand(),
		hookCommand(),
		statusCommand(),
		installCommand(),
		uninstallCommand(),
		mcpCommand(),
		searchCommand(),
		sessionsCommand(),
		showCommand(),
		indexCommand(),
		viewCommand(),
		exportCommand(),
	}
}

func exitCode(ctx context.Context, err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	var ee exitError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "bottled: %v\n", ue.err)
		return exitUsage
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(stderr, "bottled: %s\n", ee.msg)
		}
		return ee.code
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		// A command that has nothing more to say of what it stopped.
		fmt.Fprintln(stderr, "bottled: interrupted")
		return interruptedCode(ctx)
	}
	fmt.Fprintf(stderr, "bottled: %v\n", err)
	return exitFailed
}

// interruptedCode is the exit status of a command ctx stopped: 128 plus
// the number of the signal that did (130 for Ctrl-C), as a shell reports a
// process the signal killed, or 130 when ctx was cancelled otherwise.
func interruptedCode(ctx context.Context) int {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		return 128 + int(s.sig)
	}
	return 128 + int(syscall.SIGINT)
}

// interrupted ends a command that ctx stopped, saying what it stopped and
// what is left.
func interrupted(ctx context.Context, format string, a ...any) error {
	return exitError{code: interruptedCode(ctx), msg: "interrupted " + fmt.Sprintf(format, a...)}
}

// stopped reports whether err is ctx stopping the command (not a time
// limit of its own running out).
func stopped(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// usageError is a mistake in how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitError ends a command with a given code and message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// writeJSON prints v in the form of every command's --json output:
// indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// dirs are the directories every command works on.
type dirs struct {
	claude string // Claude Code's config dir
	data   string // claude-mem's data dir (DB and bottles)
	found  sources.Dirs
}

// dirsOfArgless is dirsOf for a command that takes no arguments.
func dirsOfArgless(cmd *cli.Command) (dirs, error) {
	if err := noArgs(cmd); err != nil {
		return dirs{}, err
	}
	return dirsOf(cmd)
}

// noArgs refuses arguments to a command that takes none.
func noArgs(cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef("%s takes no arguments", cmd.Name)
	}
	return nil
}

// oneArg is the argument of a command that takes exactly one, which its
// ArgsUsage names.
func oneArg(cmd *cli.Command) (string, error) {
	if cmd.NArg() != 1 {
		return "", usagef("%s takes exactly one %s (got %d arguments)", cmd.Name, cmd.ArgsUsage, cmd.NArg())
	}
	return cmd.Args().First(), nil
}

// dirsOf finds the directories as binflags.Resolve does (every bottled
// binary the same way), from the flags given; a wrong one is told in one
// line, exit 1, before the command does anything.
func dirsOf(cmd *cli.Command) (dirs, error) {
	var given sources.Given
	if cmd.IsSet(flagClaude) {
		v := cmd.String(flagClaude)
		given.Claude = &v
	}
	if cmd.IsSet(flagDataDir) {
		v := cmd.String(flagDataDir)
		given.Data = &v
	}
	found, err := binflags.Resolve("bottled", given, cmd.Root().ErrWriter)
	if errors.As(err, new(binflags.UsageError)) {
		return dirs{}, usageError{err}
	}
	if err != nil {
		return dirs{}, err
	}
	return dirs{claude: found.Claude.Path, data: found.Data.Path, found: found}, nil
}

// command is a bottled command line to suggest to the user, quoted for a
// POSIX shell: words after the flags of the directories that are not the
// defaults (given by flag, by the environment or by claude-mem's
// settings), so that it works on the directories this one did.
func (d dirs) command(words ...string) string {
	line := []string{"bottled"}
	if d.found.Claude.From != sources.FromDefault {
		line = append(line, "--"+flagClaude, d.claude)
	}
	if d.found.Data.From != sources.FromDefault {
		line = append(line, "--"+flagDataDir, d.data)
	}
	return commandLine(nil, append(line, words...))
}

// origins says where the directories came from, for status, when either
// is not the default ("" if both are).
func (d dirs) origins() string {
	var said []string
	for _, c := range []struct {
		what string
		dir  sources.Dir
	}{{"claude dir", d.found.Claude}, {"data dir", d.found.Data}} {
		switch c.dir.From {
		case sources.FromFlag, sources.FromEnv:
			said = append(said, fmt.Sprintf("%s %s (from %s)", c.what, c.dir.Path, c.dir.Where))
		case sources.FromSettings:
			said = append(said, fmt.Sprintf("%s %s (from %s in %s, as claude-mem finds it)", c.what, c.dir.Path, sources.DataDirEnv, c.dir.Where))
		}
	}
	return strings.Join(said, " · ")
}
