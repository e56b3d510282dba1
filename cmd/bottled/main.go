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
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
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
		Description: "Flags may come before or after a command's arguments, and --claude-dir and --data-dir\n" +
			"after the command too. \"--\" ends the flags: every word after it is an argument, so\n" +
			"bottled search -- --json searches for --json.",
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    flagClaude,
				Usage:   "Claude Code's config directory (transcripts are in its projects/)",
				Sources: cli.EnvVars("CLAUDE_CONFIG_DIR"),
				Value:   defaultDir(".claude"),
			},
			&cli.StringFlag{
				Name:    flagDataDir,
				Usage:   "claude-mem's data directory (its claude-mem.db; bottles go in its bottles/)",
				Sources: cli.EnvVars("CLAUDE_MEM_DATA_DIR"),
				Value:   defaultDir(".claude-mem"),
			},
		},
		Commands: []*cli.Command{
			runCommand(),
			renderCommand(),
			hookCommand(),
			statusCommand(),
			installCommand(),
			uninstallCommand(),
			mcpCommand(),
			searchCommand(),
			indexCommand(),
		},
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
	return exitCode(err, stderr)
}

func onUsageError(_ context.Context, _ *cli.Command, err error, _ bool) error {
	return usageError{err}
}

// setHandlers makes every command that has no handler of its own report
// a usage error as one line and exit 2, rather than print its help. A
// command without subcommands shows its help for `--help` after arguments
// too: urfave/cli v3 takes the first argument for a help topic there
// (urfave/cli#2126) and would say "No help topic for …".
func setHandlers(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
		if len(c.Commands) == 0 {
			c.CommandNotFound = func(_ context.Context, cmd *cli.Command, _ string) {
				cli.HelpPrinter(cmd.Root().Writer, cli.CommandHelpTemplate, cmd)
			}
		}
		setHandlers(c.Commands)
	}
}

func exitCode(err error, stderr io.Writer) int {
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
	}
	fmt.Fprintf(stderr, "bottled: %v\n", err)
	return exitFailed
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

// defaultDir is ~/<name>, or <name> relative to the working directory if
// the home directory is unknown.
func defaultDir(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return name
	}
	return filepath.Join(home, name)
}

// dirs are the directories every command works on.
type dirs struct {
	claude string // Claude Code's config dir
	data   string // claude-mem's data dir (DB and bottles)
}

func dirsOf(cmd *cli.Command) (dirs, error) {
	d := dirs{claude: cmd.String(flagClaude), data: cmd.String(flagDataDir)}
	if d.claude == "" || d.data == "" {
		return d, usagef("--%s and --%s must not be empty", flagClaude, flagDataDir)
	}
	var err error
	if d.claude, err = filepath.Abs(d.claude); err != nil {
		return d, err
	}
	if d.data, err = filepath.Abs(d.data); err != nil {
		return d, err
	}
	return d, nil
}
