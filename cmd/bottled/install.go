package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"bottled/watch"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "register the hooks in Claude Code and start the daemon at login",
		Description: "Registers `bottled hook session-start` (matcher compact|resume) and `bottled hook\n" +
			"session-end` (matcher clear) in <claude-dir>/settings.json, with permission rules that let the\n" +
			"model read the bottles and use bottled's MCP tools without asking, merged into what is there\n" +
			"(a copy of the previous file is kept as settings.json.bottled.bak); registers the MCP server\n" +
			"(bottled-mcp, beside this binary) with `claude mcp add --scope user`; and installs a login\n" +
			"agent that runs `bottled run`: a systemd user unit on Linux, a LaunchAgent on macOS.\n" +
			"Running it again updates them; `bottled uninstall` removes exactly what it added.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would change and change nothing"},
			&cli.BoolFlag{Name: "no-start", Usage: "write the login agent but do not start it now"},
		},
		Action: runInstall,
	}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:        "uninstall",
		Usage:       "remove the hooks and the login agent that install added",
		Description: "Stops and removes the login agent and removes bottled's hooks from settings.json,\nleaving everything else as it is. Bottles stay in <data-dir>/bottles.",
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "dry-run", Usage: "print what would change and change nothing"}},
		Action:      runUninstall,
	}
}

// setup is what install and uninstall work on.
type setup struct {
	command  []string // the binary and its global flags
	settings string
	agent    watch.Agent
	dryRun   bool
	out      io.Writer
}

func setupOf(c *cli.Context) (*setup, error) {
	if c.NArg() > 0 {
		return nil, usagef("%s takes no arguments", c.Command.Name)
	}
	d, err := dirsOf(c)
	if err != nil {
		return nil, err
	}
	bin, err := binaryPath()
	if err != nil {
		return nil, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	// The directories are written out in full: neither a login agent nor a
	// hook inherits the shell's environment.
	cmd := []string{bin, "--" + flagClaude, d.claude, "--" + flagDataDir, d.data}
	return &setup{
		command:  cmd,
		settings: filepath.Join(d.claude, "settings.json"),
		agent:    watch.Agent{Command: cmd, Home: home, DataDir: d.data, GOOS: runtime.GOOS, UID: os.Getuid()},
		dryRun:   c.Bool("dry-run"),
		out:      c.App.Writer,
	}, nil
}

// executable finds this binary; tests point it elsewhere.
var executable = os.Executable

// binaryPath is the absolute path of this binary, which the hooks and the
// agent will run. A binary built by `go run` is deleted when it exits.
func binaryPath() (string, error) {
	exe, err := executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", exitError{code: exitFailed, msg: "bottled is running from a temporary `go run` build, which will be gone: " +
			"build it first (CGO_ENABLED=0 go build -o ~/.local/bin/bottled ./cmd/bottled) and run that binary's install"}
	}
	return exe, nil
}

func (s *setup) say(format string, a ...any) {
	prefix := ""
	if s.dryRun {
		prefix = "(dry run) "
	}
	fmt.Fprintf(s.out, prefix+format+"\n", a...)
}

func runInstall(c *cli.Context) error {
	s, err := setupOf(c)
	if err != nil {
		return err
	}
	// settings.json is checked before anything changes: a file bottled
	// will not edit stops the install before the MCP server is registered.
	if err := s.checkSettings(); err != nil {
		return err
	}
	mcp, err := s.installMCP()
	if err != nil {
		return err
	}
	if err := s.installSettings(mcp); err != nil {
		return err
	}
	file, err := s.agent.File()
	if errors.Is(err, watch.ErrUnsupported) {
		s.say("login agent: %v", err)
		return nil
	}
	if old, err := os.ReadFile(file); err == nil && !watch.IsOurs(old) {
		return exitError{code: exitFailed, msg: fmt.Sprintf("%s exists and was not written by bottled; move it away and run install again", file)}
	} else if err == nil && bytes.Equal(old, []byte(s.agent.Definition())) {
		s.say("login agent: %s is up to date", file)
	} else {
		if !s.dryRun {
			if _, err := s.agent.WriteAgentFile(); err != nil {
				return err
			}
		}
		s.say("login agent: wrote %s", file)
		if s.dryRun {
			fmt.Fprint(s.out, indent(s.agent.Definition()))
		}
	}
	if c.Bool("no-start") {
		s.say("login agent: not started (--no-start); to start it: %s", commandLines(s.agent.StartCommands()))
		return nil
	}
	return s.runAll("start", s.agent.StartCommands())
}

func runUninstall(c *cli.Context) error {
	s, err := setupOf(c)
	if err != nil {
		return err
	}
	if file, err := s.agent.File(); err == nil {
		switch old, err := os.ReadFile(file); {
		case errors.Is(err, os.ErrNotExist):
			s.say("login agent: none installed")
		case err != nil:
			return err
		case !watch.IsOurs(old):
			s.say("login agent: %s was not written by bottled; left alone", file)
		default:
			if err := s.runAll("stop", s.agent.StopCommands()); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "bottled: warning: %v\n", err)
			}
			if !s.dryRun {
				if err := os.Remove(file); err != nil {
					return err
				}
			}
			s.say("login agent: removed %s", file)
			if err := s.runAll("reload", s.agent.AfterRemove()); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "bottled: warning: %v\n", err)
			}
		}
	}
	if err := s.uninstallMCP(); err != nil {
		return err
	}
	if err := s.uninstallSettings(); err != nil {
		return err
	}
	s.say("bottles are kept in %s", filepath.Join(s.agent.DataDir, "bottles"))
	return nil
}

// runAll runs the agent's commands. Where the tool is missing (no systemd
// user manager, say) it says what the user can run instead.
func (s *setup) runAll(what string, cmds [][]string) error {
	for _, cmd := range cmds {
		if s.dryRun {
			s.say("would run: %s", strings.Join(cmd, " "))
			continue
		}
		if _, err := exec.LookPath(cmd[0]); err != nil {
			s.say("login agent: %s not found, so it was not %sed; run bottled yourself at login: %s run",
				cmd[0], what, strings.Join(s.command, " "))
			return nil
		}
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			return exitError{code: exitFailed, msg: fmt.Sprintf("could not %s the login agent: %s: %v: %s\n"+
				"bottled: the hooks work without the daemon (they render on demand); to keep bottles current, "+
				"%s it once a user service manager is running, or run `%s run` yourself",
				what, strings.Join(cmd, " "), err, strings.TrimSpace(string(out)), what, strings.Join(s.command, " "))}
		}
		s.say("ran: %s", strings.Join(cmd, " "))
	}
	return nil
}

func commandLines(cmds [][]string) string {
	var out []string
	for _, c := range cmds {
		out = append(out, strings.Join(c, " "))
	}
	return strings.Join(out, " && ")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
