package main

import (
	"io"
	"log/slog"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"bottled/mcpserver"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve bottled's tools to Claude Code over MCP on stdio (registered by bottled install)",
		Description: "Three tools: read (a bottle's outline, a leg or lines, in parts that each fit one tool\n" +
			"result), search (the bottles of this project, or all), sessions (this project's, newest first).\n" +
			"Claude Code starts it; \"this session\" and \"this project\" come from the CLAUDE_CODE_SESSION_ID\n" +
			"and CLAUDE_PROJECT_DIR it sets (else the working directory). Logs go to stderr.",
		Action: runMCP,
	}
}

func runMCP(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("mcp takes no arguments")
	}
	d, err := dirsOf(c)
	if err != nil {
		return err
	}
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return err
		}
	}
	srv := mcpserver.New(mcpserver.Config{
		ClaudeDir: d.claude,
		DataDir:   d.data,
		Launched:  os.Getenv("CLAUDE_CODE_SESSION_ID"),
		Project:   project,
		Version:   version,
		Log:       slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	t := &sdk.IOTransport{Reader: io.NopCloser(c.App.Reader), Writer: nopWriteCloser{c.App.Writer}}
	return srv.Run(c.Context, t)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
