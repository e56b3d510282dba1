package inject

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMCPRegistration reads the state file as `claude mcp add --scope
// user` (Claude Code 2.1.332) leaves it.
func TestMCPRegistration(t *testing.T) {
	home := t.TempDir()
	def := filepath.Join(home, ".claude")
	other := filepath.Join(home, "cfg")
	state := `{"firstStartTime":"2026-11-30T21:58:04.423Z","mcpServers":{"probe":{"type":"stdio","command":"python3","args":["p.py"],"env":{}},
	"bottled":{"type":"stdio","command":"/home/u/.local/bin/bottled","args":["--claude-dir","/home/u/.claude","--data-dir","/home/u/.claude-mem","mcp"],"env":{}}}}`
	if registered(t, def, home) || registered(t, other, home) {
		t.Fatal("registered without a state file")
	}
	// The default config dir: Claude Code keeps its state in ~/.claude.json.
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, err := MCPCommand(def, home)
	if err != nil || !slices.Equal(cmd, []string{"/home/u/.local/bin/bottled", "--claude-dir", "/home/u/.claude", "--data-dir", "/home/u/.claude-mem", "mcp"}) {
		t.Errorf("MCPCommand = %q, %v", cmd, err)
	}
	if !registered(t, def, home) {
		t.Errorf("not registered for the default dir")
	}
	// Another config dir (CLAUDE_CONFIG_DIR): its own .claude.json only.
	if registered(t, other, home) {
		t.Errorf("registered for another config dir through ~/.claude.json")
	}
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ".claude.json"), []byte(`{"mcpServers":{"bottled":{"command":"/opt/other","args":["serve"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if registered(t, other, home) {
		t.Errorf("a server named bottled that is not bottled mcp counts as registered")
	}
	if err := os.WriteFile(filepath.Join(other, ".claude.json"), []byte(`{"mcpServers":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := MCPCommand(other, home); err == nil {
		t.Errorf("a malformed state file read without error")
	}
}

// registered reports whether Claude Code runs bottled's MCP server under
// its name for the config dir.
func registered(t *testing.T, claudeDir, home string) bool {
	t.Helper()
	cmd, err := MCPCommand(claudeDir, home)
	if err != nil {
		t.Fatal(err)
	}
	return IsBottledMCP(cmd)
}
