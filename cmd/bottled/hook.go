package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/inject"
)

// hookCommand is what Claude Code runs. Whatever happens, a hook exits 0
// and prints nothing but its one JSON object on stdout: a failing hook
// must leave Claude Code (and claude-mem) exactly as they are without
// bottled. Diagnostics go to stderr, which Claude Code keeps in its debug
// log.
func hookCommand() *cli.Command {
	tolerant := func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
		fmt.Fprintf(cmd.Root().ErrWriter, "bottled: %s\n", usageMessage(cmd, err))
		return nil
	}
	return &cli.Command{
		Name:   "hook",
		Usage:  "Claude Code hooks (registered by bottled install)",
		Action: noSuchHook,
		Commands: []*cli.Command{
			{
				Name:  "session-start",
				Usage: "SessionStart: on compact or resume, point the model to a fresh bottle",
				Flags: []cli.Flag{
					&cli.DurationFlag{Name: "timeout", Value: inject.DefaultTimeout, Usage: "deadline for the whole hook (reading stdin, checking the bottle, rendering it if stale or missing): at it, the hook prints nothing"},
					&cli.BoolFlag{Name: inject.MCPToolsFlag, Usage: "bottled's MCP server is registered: tell the model about its tools"},
				},
				OnUsageError: tolerant,
				Action:       hookAction(sessionStart),
			},
			{
				Name:  "session-end",
				Usage: "SessionEnd: on /clear, archive the cleared session's bottle",
				// Taken, so that a --timeout given to both hooks does not
				// stop this one: it is bounded on its own (sessionEnd).
				Flags:        []cli.Flag{&cli.DurationFlag{Name: "timeout", Hidden: true}},
				OnUsageError: tolerant,
				Action:       hookAction(sessionEnd),
			},
		},
	}
}

// noSuchHook answers "bottled hook" with no hook or one that is none. Claude
// Code runs only what install registered, the two hooks, so this is
// someone trying a hook by hand or a settings file edited by hand: a
// mistake told as any command's bad usage (exit 2, which Claude Code would
// show, without blocking anything, for these events), with help on stderr,
// as stdout is a hook's answer alone. The hooks' own runs keep their
// contract (hookAction).
func noSuchHook(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return unknownSubcommand(ctx, cmd)
	}
	cli.HelpPrinter(cmd.Root().ErrWriter, cli.SubcommandHelpTemplate, cmd)
	return exitError{code: exitUsage}
}

// hookAction runs a hook, turning every error and panic into a line on
// stderr and a zero exit. A hook takes no arguments: one given (a setting
// edited by hand) is said, as an unknown flag is, and the hook does
// nothing rather than guess what was meant.
func hookAction(run func(ctx context.Context, cmd *cli.Command, cfg inject.Config) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) (err error) {
		log := slog.New(slog.NewTextHandler(cmd.Root().ErrWriter, &slog.HandlerOptions{Level: slog.LevelInfo}))
		defer func() {
			if r := recover(); r != nil {
				log.Error("hook failed", "panic", r)
			}
			err = nil
		}()
		if cmd.NArg() > 0 {
			quoted := make([]string, cmd.NArg())
			for i, a := range cmd.Args().Slice() {
				quoted[i] = strconv.Quote(a)
			}
			fmt.Fprintf(cmd.Root().ErrWriter, "bottled: hook %s takes no arguments (got %s); it did nothing\n", cmd.Name, strings.Join(quoted, " "))
			return nil
		}
		d, err := dirsOf(cmd)
		if err != nil {
			log.Warn("hook not run", "err", err)
			return nil
		}
		cfg := inject.Config{ClaudeDir: d.claude, DataDir: d.data, Log: log, Timeout: cmd.Duration("timeout"),
			MCPTools: cmd.Bool(inject.MCPToolsFlag)}
		if err := run(ctx, cmd, cfg); err != nil {
			log.Warn("hook did nothing", "err", err)
		}
		return nil
	}
}

func sessionStart(ctx context.Context, cmd *cli.Command, cfg inject.Config) error {
	out, err := inject.SessionStartFrom(ctx, cfg, cmd.Root().Reader)
	if err != nil || out == nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.Root().Writer, "%s\n", out)
	return err
}

// sessionEnd runs within inject.SessionEndTimeout whatever --timeout says:
// Claude Code gives SessionEnd hooks a short budget, which session-end,
// a rename, keeps well inside.
func sessionEnd(ctx context.Context, cmd *cli.Command, cfg inject.Config) error {
	if cmd.IsSet("timeout") {
		fmt.Fprintf(cmd.Root().ErrWriter, "bottled: --timeout is session-start's; session-end always ends within %s\n", inject.SessionEndTimeout)
	}
	return inject.SessionEndFrom(ctx, cfg, cmd.Root().Reader)
}
