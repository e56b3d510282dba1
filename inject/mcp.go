package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MCPServer is the name bottled's MCP server (`bottled mcp`) is registered
// under in Claude Code; its tools reach the model as mcp__bottled__<tool>.
const MCPServer = "bottled"

// stateFiles are where Claude Code keeps its own state, the user-scope MCP
// servers among it, for a config dir: <dir>/.claude.json, and, for the
// default dir (~/.claude), ~/.claude.json, which Claude Code uses when
// CLAUDE_CONFIG_DIR is not set. bottled only reads them; `claude mcp add`
// and `claude mcp remove` write them.
func stateFiles(claudeDir, home string) []string {
	files := []string{filepath.Join(claudeDir, ".claude.json")}
	if home != "" && filepath.Clean(claudeDir) == filepath.Join(home, ".claude") {
		files = append(files, filepath.Join(home, ".claude.json"))
	}
	return files
}

// MCPCommand returns the command Claude Code runs for bottled's MCP server
// at user scope (command and arguments), nil if none is registered.
func MCPCommand(claudeDir, home string) ([]string, error) {
	for _, path := range stateFiles(claudeDir, home) {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var state struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &state); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if s, ok := state.MCPServers[MCPServer]; ok && s.Command != "" {
			return append([]string{s.Command}, s.Args...), nil
		}
	}
	return nil, nil
}

// IsBottledMCP recognises the command of bottled's MCP server: the
// bottled-mcp binary, or `bottled … mcp`, which runs it.
func IsBottledMCP(cmd []string) bool {
	if len(cmd) == 0 {
		return false
	}
	switch filepath.Base(cmd[0]) {
	case "bottled-mcp":
		return true
	case "bottled":
		return len(cmd) > 1 && cmd[len(cmd)-1] == "mcp"
	}
	return false
}
