package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/bottled-dev/bottled/watch"
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

func setupOf(cmd *cli.Command) (*setup, error) {
	if cmd.NArg() > 0 {
		return nil, usagef("%s takes no arguments", cmd.Name)
	}
	d, err := dirsOf(cmd)
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
	command := []string{bin, "--" + flagClaude, d.claude, "--" + flagDataDir, d.data}
	return &setup{
		command:  command,
		settings: filepath.Join(d.claude, "settings.json"),
		agent:    watch.Agent{Command: command, Home: home, DataDir: d.data, GOOS: runtime.GOOS, UID: os.Getuid()},
		dryRun:   cmd.Bool("dry-run"),
		out:      cmd.Root().Writer,
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

func runInstall(_ context.Context, cmd *cli.Command) error {
	s, err := setupOf(cmd)
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
	if cmd.Bool("no-start") {
		s.say("login agent: not started (--no-start); to start it: %s", commandLines(nil, s.agent.StartCommands()))
		return nil
	}
	_, err = s.runAll(s.agentCommands("start", s.agent.StartCommands()))
	return err
}

func runUninstall(_ context.Context, cmd *cli.Command) error {
	s, err := setupOf(cmd)
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
			if _, err := s.runAll(s.agentCommands("stop", s.agent.StopCommands())); err != nil {
				fmt.Fprintf(cmd.Root().ErrWriter, "bottled: warning: %v\n", err)
			}
			if !s.dryRun {
				if err := os.Remove(file); err != nil {
					return err
				}
			}
			s.say("login agent: removed %s", file)
			if _, err := s.runAll(s.agentCommands("reload", s.agent.AfterRemove())); err != nil {
				fmt.Fprintf(cmd.Root().ErrWriter, "bottled: warning: %v\n", err)
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

// commands are programs install and uninstall run one after the other:
// the service manager's for the login agent, claude's for the MCP server.
type commands struct {
	cmds [][]string
	env  []string // added to the environment, and shown with each command
	// what the commands are about, starting what is said when a program is
	// not on PATH: "<what>: <program> not found, so <notFound>".
	what, notFound string
	// failed starts, and advice ends, the error of a command that fails.
	failed, advice string
}

// runAll runs the commands, or, in a dry run, says what it would run. It
// reports whether they ran (would run): not when a program is not on PATH,
// which it says, running nothing more.
func (s *setup) runAll(c commands) (bool, error) {
	ran := true
	for _, cmd := range c.cmds {
		line := commandLine(c.env, cmd)
		path, err := exec.LookPath(cmd[0])
		if s.dryRun {
			s.say("would run: %s", line)
			ran = ran && err == nil
			continue
		}
		if err != nil {
			s.say("%s: %s not found, so %s", c.what, cmd[0], c.notFound)
			return false, nil
		}
		run := exec.Command(path, cmd[1:]...)
		run.Env = append(os.Environ(), c.env...)
		if out, err := run.CombinedOutput(); err != nil {
			return false, exitError{code: exitFailed, msg: fmt.Sprintf("%s: %s: %v: %s%s", c.failed, line, err, strings.TrimSpace(string(out)), c.advice)}
		}
		s.say("ran: %s", line)
	}
	return ran, nil
}

// agentCommands are the login agent's commands that do what (start, stop,
// reload). Where the service manager is missing (no systemd user manager,
// say), what the user can run instead is said.
func (s *setup) agentCommands(what string, cmds [][]string) commands {
	bottled := strings.Join(s.command, " ")
	return commands{cmds: cmds, what: "login agent",
		notFound: fmt.Sprintf("bottled did not %s it; run bottled yourself at login: %s run", what, bottled),
		failed:   "could not " + what + " the login agent",
		advice: fmt.Sprintf("\nbottled: the hooks work without the daemon (they render on demand); to keep bottles current, "+
			"%s it once a user service manager is running, or run `%s run` yourself", what, bottled)}
}

// commandLine is a command as a user would type it in a POSIX shell, with
// the environment it needs.
func commandLine(env, cmd []string) string {
	var words []string
	for _, e := range env {
		name, value, _ := strings.Cut(e, "=")
		words = append(words, name+"="+shellWord(value))
	}
	for _, w := range cmd {
		words = append(words, shellWord(w))
	}
	return strings.Join(words, " ")
}

func commandLines(env []string, cmds [][]string) string {
	var out []string
	for _, c := range cmds {
		out = append(out, commandLine(env, c))
	}
	return strings.Join(out, " && ")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
