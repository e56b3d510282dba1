package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/bottled-dev/bottled/inject"
)

// bottled's MCP server is registered with Claude Code's own command, `claude
// mcp add --scope user`, which edits Claude Code's state file (.claude.json)
// itself: bottled never rewrites that file. Without the claude command on
// PATH, or when it does not finish within commandTimeout, install prints
// the command to run.

// claudeDir is Claude Code's config dir, where settings.json is.
func (s *setup) claudeDir() string { return filepath.Dir(s.settings) }

// mcpCommand is what Claude Code runs for the server: bottled-mcp from
// beside this binary, with the directories spelled out like the hooks. The
// error says how to build bottled-mcp when it is not there.
func (s *setup) mcpCommand() ([]string, error) {
	bin, err := besideBottled(s.command[0], mcpBinary)
	return append([]string{bin}, s.command[1:]...), err
}

// claudeEnv is the environment the claude command needs to edit the state
// of s's config dir: CLAUDE_CONFIG_DIR unless it is the default, whose state
// Claude Code keeps in ~/.claude.json only when the variable is unset.
func (s *setup) claudeEnv() []string {
	if os.Getenv("CLAUDE_CONFIG_DIR") == "" && s.claudeDir() == filepath.Join(s.agent.Home, ".claude") {
		return nil
	}
	return []string{"CLAUDE_CONFIG_DIR=" + s.claudeDir()}
}

// claudeCommands are claude commands that change bottled's registration;
// notRun and stopped say where that leaves the server when claude is not
// on PATH or was stopped at the timeout, before the commands to run.
func (s *setup) claudeCommands(notRun, stopped string, cmds ...[]string) commands {
	env := s.claudeEnv()
	run := ", run: " + commandLines(env, cmds)
	return commands{cmds: cmds, env: env, what: "mcp", failed: "mcp",
		notFound: "bottled's MCP server " + notRun + run, timedOut: "bottled's MCP server " + stopped + run}
}

// installMCP registers the MCP server, replacing a registration of another
// command (another binary or directories). It reports whether the server
// is (or, in a dry run, would be) registered.
func (s *setup) installMCP() (bool, error) {
	want, err := s.mcpCommand()
	if err != nil {
		s.say("mcp: %v and run install again; until then bottled's MCP server is not registered", err)
		return false, nil
	}
	cur, err := inject.MCPCommand(s.claudeDir(), s.agent.Home)
	if err != nil {
		return false, exitError{code: exitFailed, msg: fmt.Sprintf("mcp: %v (bottled left it unchanged)", err)}
	}
	if slices.Equal(cur, want) {
		s.say("mcp: server %q already registered", inject.MCPServer)
		return true, nil
	}
	var cmds [][]string
	if cur != nil {
		cmds = append(cmds, claudeRemove)
	}
	cmds = append(cmds, append([]string{"claude", "mcp", "add", "--scope", "user", inject.MCPServer, "--"}, want...))
	ran, err := s.runAll(s.claudeCommands("is not registered; to register it", "may not be registered; to register it", cmds...))
	if !ran || err != nil || s.dryRun {
		return ran, err
	}
	s.say("mcp: registered server %q at user scope: tools mcp__%s__read, __search, __sessions", inject.MCPServer, inject.MCPServer)
	return true, nil
}

// uninstallMCP removes the registration install made.
func (s *setup) uninstallMCP() error {
	cur, err := inject.MCPCommand(s.claudeDir(), s.agent.Home)
	if err != nil {
		return exitError{code: exitFailed, msg: fmt.Sprintf("mcp: %v (bottled left it unchanged)", err)}
	}
	if !inject.IsBottledMCP(cur) {
		s.say("mcp: no bottled server registered")
		return nil
	}
	ran, err := s.runAll(s.claudeCommands("is still registered; to remove it", "may still be registered; to remove it", claudeRemove))
	if ran && !s.dryRun {
		s.say("mcp: removed server %q", inject.MCPServer)
	}
	return err
}

// claudeRemove removes bottled's MCP server from Claude Code.
var claudeRemove = []string{"claude", "mcp", "remove", "--scope", "user", inject.MCPServer}
