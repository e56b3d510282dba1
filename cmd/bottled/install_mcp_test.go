package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/inject"
)

// fakeClaude puts on e's PATH a claude command that logs its arguments
// and CLAUDE_CONFIG_DIR, and keeps a state file the way `claude mcp add
// --scope user` and `claude mcp remove --scope user` do (2.1.332): in
// $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json. It returns the log.
func fakeClaude(t *testing.T, e *installEnv) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "calls.log")
	script := `echo "CLAUDE_CONFIG_DIR=$CLAUDE_CONFIG_DIR $*" >> ` + log + `
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
	e.tool(t, "claude", script)
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
	log := fakeClaude(t, e)
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
	log := fakeClaude(t, e)
	e.claude = filepath.Join(e.home, "cfg")
	e.settings = filepath.Join(e.claude, "settings.json")
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
	log := fakeClaude(t, e)
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
	fakeClaude(t, e)
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

// TestClaudeHangs: a claude that never answers is stopped after the
// timeout, with its children; install and uninstall say the command to
// run instead, and go on.
func TestClaudeHangs(t *testing.T) {
	e := newInstallEnv(t)
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	e.tool(t, "claude", "sleep 600 &\necho $! > "+pidFile+"\nwait\n")
	old := commandTimeout
	commandTimeout = 200 * time.Millisecond // the fake never answers
	t.Cleanup(func() { commandTimeout = old })

	code, out, errOut := runWithin(t, e, "install", "--no-start")
	want := "run: claude mcp add --scope user bottled -- " + e.mcp()
	if code != 0 || !strings.Contains(out, "did not finish within 200ms") || !strings.Contains(out, want) {
		t.Errorf("install: code %d, stderr %q; want %q in:\n%s", code, errOut, want, out)
	}
	if start := hooksOf(t, e.read(t))["SessionStart"]; strings.Contains(start[0].Hooks[0].Command, inject.MCPToolsFlag) {
		t.Errorf("the hook speaks of MCP tools that are not registered: %q", start[0].Hooks[0].Command)
	}
	waitGone(t, pidFile)

	// As if an earlier claude had registered the server.
	state := `{"mcpServers":{"bottled":{"command":"` + e.mcp() + `","args":[]}}}`
	if err := os.WriteFile(filepath.Join(e.home, ".claude.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(pidFile)
	code, out, errOut = runWithin(t, e, "uninstall")
	want = "to remove it, run: claude mcp remove --scope user bottled"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "hooks: removed") {
		t.Errorf("uninstall: code %d, stderr %q; want %q in:\n%s", code, errOut, want, out)
	}
	waitGone(t, pidFile)
}

// runWithin runs bottled, failing the test if it does not return within a
// minute (as when a command it runs hangs).
func runWithin(t *testing.T, e *installEnv, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() { // ends when bottled returns
		code, out, errOut := e.run(t, args...)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(time.Minute):
		t.Fatalf("bottled %v did not return within a minute", args)
		return 0, "", ""
	}
}

// waitGone waits until the process whose pid is in pidFile has ended.
func waitGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake claude did not start its child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hanging claude's child %d outlived bottled", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether the process runs (a zombie, which a container's
// init may never reap, has ended).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err) && runtime.GOOS != "linux"
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}
