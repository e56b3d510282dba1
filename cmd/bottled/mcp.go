package main

import (
	"context"

	"github.com/urfave/cli/v3"
)

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
	return execBeside(mcpBinary, d)
}
