package main

import (
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/bottled-dev/bottled/inject"
)

// hookCommand is what Claude Code runs. Whatever happens, a hook exits 0
// and prints nothing but its one JSON object on stdout: a failing hook
// must leave Claude Code (and claude-mem) exactly as they are without
// bottled. Diagnostics go to stderr, which Claude Code keeps in its debug
// log.
func hookCommand() *cli.Command {
	tolerant := func(c *cli.Context, err error, _ bool) error {
		fmt.Fprintf(c.App.ErrWriter, "bottled hook: %v\n", err)
		return nil
	}
	return &cli.Command{
		Name:  "hook",
		Usage: "Claude Code hooks (registered by bottled install)",
		Subcommands: []*cli.Command{
			{
				Name:  "session-start",
				Usage: "SessionStart: on compact or resume, point the model to a fresh bottle",
				Flags: []cli.Flag{
					&cli.DurationFlag{Name: "timeout", Value: inject.DefaultTimeout, Usage: "deadline for rendering a stale or missing bottle"},
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
func hookAction(run func(c *cli.Context, cfg inject.Config) error) cli.ActionFunc {
	return func(c *cli.Context) (err error) {
		log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelInfo}))
		defer func() {
			if r := recover(); r != nil {
				log.Error("hook failed", "panic", r)
			}
			err = nil
		}()
		d, err := dirsOf(c)
		if err != nil {
			log.Warn("hook not run", "err", err)
			return nil
		}
		cfg := inject.Config{ClaudeDir: d.claude, DataDir: d.data, Log: log, Timeout: c.Duration("timeout"),
			MCPTools: c.Bool(inject.MCPToolsFlag)}
		if err := run(c, cfg); err != nil {
			log.Warn("hook did nothing", "err", err)
		}
		return nil
	}
}

func sessionStart(c *cli.Context, cfg inject.Config) error {
	p, err := inject.ReadPayload(c.App.Reader)
	if err != nil {
		return err
	}
	out, err := inject.SessionStart(c.Context, cfg, p)
	if err != nil || out == nil {
		return err
	}
	_, err = fmt.Fprintf(c.App.Writer, "%s\n", out)
	return err
}

func sessionEnd(c *cli.Context, cfg inject.Config) error {
	p, err := inject.ReadPayload(c.App.Reader)
	if err != nil {
		return err
	}
	return inject.SessionEnd(cfg, p)
}
