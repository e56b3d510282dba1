// Command bottled-mcp is bottled's MCP server on stdio, which Claude Code
// starts once `bottled install` has registered it: tools that read a
// session's bottle in parts, search every bottle, and list a project's
// sessions (package mcpserver).
//
// It is a binary of its own so that the SessionStart hook, which Claude
// Code waits for at every compaction and resume, does not pay for the MCP
// SDK's start-up (its HTTP and TLS packages alone cost a Go process about
// 2 ms). `bottled mcp` runs it from beside the bottled binary.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/cmd/internal/binflags"
	"github.com/bottled-dev/bottled/mcpserver"
	"github.com/bottled-dev/bottled/version"
)

const usage = "usage: bottled-mcp [--claude-dir DIR] [--data-dir DIR]\n\n" +
	"Serves bottled's tools to Claude Code over MCP on stdio: read (a bottle's outline, a leg\n" +
	"or lines), search (the bottles of this project, or all), sessions (this project's).\n" +
	"\"This session\" and \"this project\" come from CLAUDE_CODE_SESSION_ID and CLAUDE_PROJECT_DIR\n" +
	"(else the working directory). Logs go to stderr.\n\n"

func main() {
	binflags.Main("bottled-mcp", func(ctx context.Context) error {
		return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	})
}

// run parses the flags bottled's commands share (flags beat the
// environment, which beats the defaults) and serves MCP on stdin and
// stdout until the client goes away or ctx is done.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := binflags.New("bottled-mcp", "mcp", usage)
	dirs, ok, err := fs.Parse(args, stdout, stderr)
	if !ok {
		return err
	}
	if fs.NArg() > 0 {
		return binflags.Usagef("unexpected argument %q", fs.Arg(0))
	}
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcpserver.New(mcpserver.Config{
		Reader:   bottles.Reader{ClaudeDir: dirs.Claude, DataDir: dirs.Data, Log: log},
		Launched: os.Getenv("CLAUDE_CODE_SESSION_ID"),
		Project:  project,
		Version:  version.String(),
	})
	return srv.Run(ctx, &mcpserver.Lines{Reader: stdin, Writer: stdout, Log: log})
}
