package main

import (
	"context"
	"fmt"
	"log/slog"

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
		Name:  "hook",
		Usage: "Claude Code hooks (registered by bottled install)",
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
				Name:         "session-end",
				Usage:        "SessionEnd: on /clear, archive the cleared session's bottle",
				OnUsageError: tolerant,
				Action:       hookAction(sessionEnd),
			},
		},
	}
}

// hookAction runs a hook, turning every error and panic into a line on
// stderr and a zero exit.
func hookAction(run func(ctx context.Context, cmd *cli.Command, cfg inject.Config) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) (err error) {
		log := slog.New(slog.NewTextHandler(cmd.Root().ErrWriter, &slog.HandlerOptions{Level: slog.LevelInfo}))
		defer func() {
			if r := recover(); r != nil {
				log.Error("hook failed", "panic", r)
			}
			err = nil
		}()
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

func sessionEnd(ctx context.Context, cmd *cli.Command, cfg inject.Config) error {
	return inject.SessionEndFrom(ctx, cfg, cmd.Root().Reader)
}
