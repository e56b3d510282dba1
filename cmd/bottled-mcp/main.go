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
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/bottled-dev/bottled/mcpserver"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "bottled-mcp: %v\n", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "bottled-mcp: %v\n", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

// run parses the flags bottled's commands share (flags beat the
// environment, which beats the defaults) and serves MCP on stdin and
// stdout until the client goes away or ctx is done.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bottled-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaultClaude, defaultData := sources.DefaultDirs()
	claudeDir := fs.String("claude-dir", defaultClaude, "Claude Code's config directory (transcripts are in its projects/)")
	dataDir := fs.String("data-dir", defaultData, "claude-mem's data directory (its claude-mem.db; bottles in its bottles/)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bottled-mcp [--claude-dir DIR] [--data-dir DIR]\n\n"+
			"Serves bottled's tools to Claude Code over MCP on stdio: read (a bottle's outline, a leg\n"+
			"or lines), search (the bottles of this project, or all), sessions (this project's).\n"+
			"\"This session\" and \"this project\" come from CLAUDE_CODE_SESSION_ID and CLAUDE_PROJECT_DIR\n"+
			"(else the working directory). Logs go to stderr.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if *showVersion {
		_, err := fmt.Fprintf(stdout, "bottled-mcp version %s\n", version.String())
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	claude, data, err := sources.AbsDirs(*claudeDir, *dataDir)
	if errors.Is(err, sources.ErrEmptyDir) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcpserver.New(mcpserver.Config{
		ClaudeDir: claude,
		DataDir:   data,
		Launched:  os.Getenv("CLAUDE_CODE_SESSION_ID"),
		Project:   project,
		Version:   version.String(),
		Log:       log,
	})
	return srv.Run(ctx, &mcpserver.Lines{Reader: stdin, Writer: stdout, Log: log})
}
