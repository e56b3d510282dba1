package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/cmd/internal/binflags"
)

// How a mistake in a command line is told: in bottled's words, with its
// flags spelled as bottled's help spells them (--limit, -o), and the help
// that says more. urfave/cli words its parse errors as Go's flag package
// does ("flag provided but not defined: -bogus", "invalid value "abc" for
// flag -limit: strconv.ParseInt: …") and returns them as plain strings,
// so they are recognised by their wording here, the one place that knows
// it; an error worded otherwise is passed on as it is. The words are
// binflags', which bottled-mcp and bottled-view tell theirs in.
const (
	cliUnknownFlag  = "flag provided but not defined: -"
	cliNeedsValue   = "flag needs an argument: "
	cliInvalidValue = "invalid value "
)

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
	msg := err.Error()
	see := " (see " + cmd.FullName() + " --help)"
	switch {
	case strings.HasPrefix(msg, cliUnknownFlag):
		return "unknown flag " + binflags.Dashed(strings.TrimPrefix(msg, cliUnknownFlag)) + see
	case strings.HasPrefix(msg, cliNeedsValue):
		name := strings.TrimLeft(strings.TrimPrefix(msg, cliNeedsValue), "-")
		return binflags.Dashed(name) + " needs " + valueKind(cmd, name) + see
	case strings.HasPrefix(msg, cliInvalidValue):
		// invalid value "VALUE" for flag -NAME: REASON
		var value, name string
		rest := strings.TrimPrefix(msg, cliInvalidValue)
		if _, err := fmt.Sscanf(rest, "%q for flag -%s", &value, &name); err == nil {
			name = strings.TrimSuffix(name, ":")
			return fmt.Sprintf("%s takes %s, not %q%s", binflags.Dashed(name), valueKind(cmd, name), value, see)
		}
	}
	return msg + see
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
