package main

import (
	"context"
	"errors"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/cmd/internal/binflags"
)

// How a mistake in a command line is told: in bottled's words
// (binflags.Reword, which bottled-mcp and bottled-view tell theirs in), and
// the help that says more.

// onUsageError is every command's OnUsageError (setHandlers): the error
// reworded, as bad usage (exit 2).
func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	return usageError{errors.New(usageMessage(cmd, err))}
}

// setHandlers makes every command that has no handler of its own report
// a usage error as one line and exit 2, rather than print its help. A
// command without subcommands shows its help for `--help` after arguments
// too: urfave/cli v3 takes the first argument for a help topic there
// (urfave/cli#2126) and would say "No help topic for …"; one with
// subcommands and no action of its own (hook) says which it has when given
// another.
func setHandlers(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
		if len(c.Commands) == 0 {
			c.CommandNotFound = func(_ context.Context, cmd *cli.Command, _ string) {
				cli.HelpPrinter(cmd.Root().Writer, cli.CommandHelpTemplate, cmd)
			}
		} else if c.Action == nil {
			c.Action = unknownSubcommand
		}
		setHandlers(c.Commands)
	}
}

// unknownSubcommand is the action of a command that only has
// subcommands: its help, or, given another word, which it has.
func unknownSubcommand(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() == 0 {
		return cli.ShowSubcommandHelp(cmd)
	}
	var names []string
	for _, c := range cmd.VisibleCommands() {
		names = append(names, c.Name)
	}
	return usagef("unknown command %q: %s (see %s --help)", cmd.Args().First(), strings.Join(names, " or "), cmd.FullName())
}

// usageMessage is the one line that tells a parse error of cmd's command
// line, ending with the help to read.
func usageMessage(cmd *cli.Command, err error) string {
	kind := func(name string) string { return valueKind(cmd, name) }
	return binflags.Reword(err.Error(), kind) + " (see " + cmd.FullName() + " --help)"
}

// valueKind says in words what a value of cmd's flag name is.
func valueKind(cmd *cli.Command, name string) string {
	switch lookupFlag(cmd, name).(type) {
	case *cli.IntFlag:
		return binflags.WholeNumber
	case *cli.DurationFlag:
		return binflags.Duration
	case *cli.BoolFlag:
		return binflags.Boolean
	}
	return binflags.AnyValue
}

// lookupFlag is cmd's flag called name, its own or one of a command it is
// under (whose flags it inherits), nil if there is none.
func lookupFlag(cmd *cli.Command, name string) cli.Flag {
	for _, c := range cmd.Lineage() {
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				if n == name {
					return f
				}
			}
		}
	}
	return nil
}
