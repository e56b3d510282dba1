package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v3"
)

// mcpBinary is the MCP server's own binary, which is installed beside
// bottled: the server links the MCP SDK, whose start-up the hooks in this
// binary must not pay for.
const mcpBinary = "bottled-mcp"

// execServer replaces this process with the MCP server; tests record what
// it would run instead.
var execServer = syscall.Exec

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:        "mcp",
		Usage:       "serve bottled's tools to Claude Code over MCP on stdio (runs bottled-mcp from beside this binary)",
		Description: help(mcpHelp),
		Action:      runMCP,
	}
}

// runMCP replaces this process with bottled-mcp, with the same
// directories.
func runMCP(_ context.Context, cmd *cli.Command) error {
	d, err := dirsOfArgless(cmd)
	if err != nil {
		return err
	}
	exe, err := binaryPath()
	if err != nil {
		return err
	}
	bin, err := mcpBinaryBeside(exe)
	if err != nil {
		return exitError{code: exitFailed, msg: err.Error()}
	}
	args := []string{bin, "--" + flagClaude, d.claude, "--" + flagDataDir, d.data}
	if err := execServer(bin, args, os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", bin, err)
	}
	return nil
}

// mcpBinaryBeside is bottled-mcp beside the bottled binary bin, and an
// error that says how to build it when it is not there.
func mcpBinaryBeside(bin string) (string, error) {
	dir := filepath.Dir(bin)
	mcp := filepath.Join(dir, mcpBinary)
	if _, err := os.Stat(mcp); err != nil {
		return mcp, fmt.Errorf("%s is missing: build it beside bottled (go build -o %s/ ./cmd/bottled ./cmd/bottled-mcp)", mcp, dir)
	}
	return mcp, nil
}
