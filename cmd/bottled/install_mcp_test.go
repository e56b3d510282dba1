package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/inject"
)

// fakeClaude puts on PATH a claude command that logs its arguments and
// CLAUDE_CONFIG_DIR, and keeps a state file the way `claude mcp add
// --scope user` and `claude mcp remove --scope user` do (2.1.332): in
// $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json. It returns the log.
func fakeClaude(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
echo "CLAUDE_CONFIG_DIR=$CLAUDE_CONFIG_DIR $*" >> ` + log + `
state="$HOME/.claude.json"
[ -n "$CLAUDE_CONFIG_DIR" ] && state="$CLAUDE_CONFIG_DIR/.claude.json"
case "$1 $2 $3 $4 $5" in
"mcp add --scope user bottled")
	[ -f "$state" ] && grep -q '"bottled"' "$state" && { echo "MCP server bottled already exists in user config" >&2; exit 1; }
	shift 6
	cmd="$1"; shift
	args=""
	for a in "$@"; do args="$args${args:+,}\"$a\""; done
	mkdir -p "$(dirname "$state")"
	printf '{"mcpServers":{"bottled":{"type":"stdio","command":"%s","args":[%s],"env":{}}}}\n' "$cmd" "$args" > "$state"
	echo "Added stdio MCP server bottled"
	;;
"mcp remove --scope user bottled")
	[ -f "$state" ] && grep -q '"bottled"' "$state" || { echo "No MCP server named \"bottled\" in user scope" >&2; exit 1; }
	echo '{"mcpServers":{}}' > "$state"
	;;
*) exit 2 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	return log
}

func calls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestInstallRegistersMCPServer(t *testing.T) {
	e := newInstallEnv(t)
	log := fakeClaude(t)
	server := e.mcp() + " --claude-dir " + e.claude + " --data-dir " + e.data

	code, out, errOut := e.run(t, "install", "--no-start")
	if code != 0 || !strings.Contains(out, `registered server "bottled"`) {
		t.Fatalf("install: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The default config dir: claude runs without CLAUDE_CONFIG_DIR, so
	// that it edits ~/.claude.json.
	if got := calls(t, log); len(got) != 1 || got[0] != "CLAUDE_CONFIG_DIR= mcp add --scope user bottled -- "+server {
		t.Errorf("claude calls %q", got)
	}
	if !mcpRegistered(t, e.claude, e.home) {
		t.Errorf("not registered after install")
	}
	if start := hooksOf(t, e.read(t))["SessionStart"]; !strings.HasSuffix(start[0].Hooks[0].Command, "hook session-start --"+inject.MCPToolsFlag) {
		t.Errorf("the hook is not told about the MCP tools: %q", start[0].Hooks[0].Command)
	}

	// Twice is once.
	code, out, _ = e.run(t, "install", "--no-start")
	if code != 0 || !strings.Contains(out, "already registered") || len(calls(t, log)) != 1 {
		t.Errorf("second install: %q, calls %q", out, calls(t, log))
	}

	// Installed again from another binary: the registration follows.
	e.bin = filepath.Join(e.home, "bin2", "bottled")
	os.MkdirAll(filepath.Dir(e.bin), 0o755)
	os.WriteFile(e.bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(e.mcp(), []byte("#!/bin/sh\n"), 0o755)
	code, _, errOut = e.run(t, "install", "--no-start")
	got := calls(t, log)
	if code != 0 || len(got) != 3 || !strings.HasSuffix(got[1], "mcp remove --scope user bottled") || !strings.Contains(got[2], "-- "+e.mcp()+" ") {
		t.Errorf("reinstall: code %d %q, calls %q", code, errOut, got)
	}

	code, out, _ = e.run(t, "uninstall", "--dry-run")
	if code != 0 || !strings.Contains(out, "would run: claude mcp remove --scope user bottled") || len(calls(t, log)) != 3 {
		t.Errorf("uninstall --dry-run: %q, calls %q", out, calls(t, log))
	}
	code, out, _ = e.run(t, "uninstall")
	if code != 0 || !strings.Contains(out, `removed server "bottled"`) || mcpRegistered(t, e.claude, e.home) {
		t.Errorf("uninstall: code %d, %q", code, out)
	}
	code, out, _ = e.run(t, "uninstall")
	if code != 0 || !strings.Contains(out, "no bottled server registered") || len(calls(t, log)) != 4 {
		t.Errorf("second uninstall: %q, calls %q", out, calls(t, log))
	}
}

// TestInstallMCPOtherConfigDir: with a config dir other than ~/.claude,
// claude is told which (CLAUDE_CONFIG_DIR), as Claude Code itself is.
func TestInstallMCPOtherConfigDir(t *testing.T) {
	e := newInstallEnv(t)
	log := fakeClaude(t)
	e.claude = filepath.Join(e.home, "cfg")
	e.settings = filepath.Join(e.claude, "settings.json")
	e.flags = []string{"--claude-dir", e.claude, "--data-dir", e.data}
	code, _, errOut := e.run(t, "install", "--no-start")
	got := calls(t, log)
	if code != 0 || len(got) != 1 || !strings.HasPrefix(got[0], "CLAUDE_CONFIG_DIR="+e.claude+" mcp add") {
		t.Fatalf("code %d %q, calls %q", code, errOut, got)
	}
	if !mcpRegistered(t, e.claude, e.home) || mcpRegistered(t, filepath.Join(e.home, ".claude"), e.home) {
		t.Errorf("registered in the wrong state file")
	}
}

// TestInstallMCPWithoutClaude: without the claude command, install says
// the exact command to run, and does not touch Claude Code's state.
func TestInstallMCPWithoutClaude(t *testing.T) {
	e := newInstallEnv(t)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	code, out, errOut := e.run(t, "install", "--no-start")
	want := "run: claude mcp add --scope user bottled -- " + e.mcp() + " --claude-dir " + e.claude + " --data-dir " + e.data
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("code %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".claude.json")); !os.IsNotExist(err) {
		t.Errorf("Claude Code's state file was written: %v", err)
	}
	if start := hooksOf(t, e.read(t))["SessionStart"]; strings.Contains(start[0].Hooks[0].Command, inject.MCPToolsFlag) {
		t.Errorf("the hook speaks of MCP tools that are not registered: %q", start[0].Hooks[0].Command)
	}
}

// TestInstallMCPWithoutServerBinary: without bottled-mcp beside bottled,
// install says how to build it and registers nothing that would fail.
func TestInstallMCPWithoutServerBinary(t *testing.T) {
	e := newInstallEnv(t)
	log := fakeClaude(t)
	os.Remove(e.mcp())
	code, out, errOut := e.run(t, "install", "--no-start")
	if code != 0 || !strings.Contains(out, e.mcp()+" is missing") || !strings.Contains(out, "./cmd/bottled-mcp") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got := calls(t, log); len(got) != 0 {
		t.Errorf("claude was called: %q", got)
	}
}

// mcpRegistered reports whether Claude Code runs bottled's MCP server for
// the config dir.
func mcpRegistered(t *testing.T, claudeDir, home string) bool {
	t.Helper()
	cmd, err := inject.MCPCommand(claudeDir, home)
	if err != nil {
		t.Fatal(err)
	}
	return inject.IsBottledMCP(cmd)
}

// TestUninstallMCPWithoutClaude: without the claude command, uninstall
// says the exact command that removes the registration, and leaves it.
func TestUninstallMCPWithoutClaude(t *testing.T) {
	e := newInstallEnv(t)
	fakeClaude(t)
	if code, out, errOut := e.run(t, "install", "--no-start"); code != 0 || !mcpRegistered(t, e.claude, e.home) {
		t.Fatalf("install: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := e.run(t, "uninstall")
	want := "to remove it, run: claude mcp remove --scope user bottled"
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "to register") {
		t.Errorf("code %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	if !mcpRegistered(t, e.claude, e.home) {
		t.Errorf("the registration is gone")
	}
}
