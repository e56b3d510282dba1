package main

import (
	"context"

	"github.com/urfave/cli/v3"
)

// mcpBinary is the MCP server's own binary, which is installed beside
// bottled: the server links the MCP SDK, whose start-up the hooks in this
// binary must not pay for.
const mcpBinary = "bottled-mcp"

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
