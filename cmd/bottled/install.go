package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/bottled-dev/bottled/agent"
	"github.com/bottled-dev/bottled/inject"
	"github.com/bottled-dev/bottled/sources"
	"github.com/urfave/cli/v3"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:        "install",
		Usage:       "register the hooks in Claude Code and start the daemon at login",
		Description: help(installHelp),
		Flags: []cli.Flag{
			dryRunFlag(),
			&cli.BoolFlag{Name: "no-start", Usage: "write the login agent but do not start it now"},
		},
		Action: runInstall,
	}
}

// dryRunFlag is install's and uninstall's --dry-run.
func dryRunFlag() cli.Flag {
	return &cli.BoolFlag{Name: "dry-run", Usage: "print what would change and change nothing"}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:        "uninstall",
		Usage:       "remove the hooks and the login agent that install added",
		Description: help(uninstallHelp),
		Flags:       []cli.Flag{dryRunFlag()},
		Action:      runUninstall,
	}
}

// setup is what install and uninstall work on.
type setup struct {
	ctx      context.Context
	command  []string // the binary and its global flags
	settings string
	agent    agent.Agent
	dryRun   bool
	name     string // install or uninstall
	out      io.Writer
	errOut   io.Writer
}

// setupOf is the setup of install or uninstall from the command's flags,
// once settings.json is known to be a file bottled edits (checkSettings).
// The directories are dirsOf's, checked there.
func setupOf(ctx context.Context, cmd *cli.Command) (*setup, error) {
	d, err := dirsOfArgless(cmd)
	if err != nil {
		return nil, err
	}
	bin, err := binaryPath()
	if err != nil {
		return nil, err
	}
	home, err := sources.HomeDir() // as the directories were found: $HOME, else the user database's
	if err != nil {
		return nil, err
	}
	// The directories are written out in full: neither a login agent nor a
	// hook inherits the shell's environment.
	command := []string{bin, "--" + flagClaude, d.claude, "--" + flagDataDir, d.data}
	s := &setup{
		ctx:      ctx,
		command:  command,
		settings: filepath.Join(d.claude, "settings.json"),
		agent:    agent.Agent{Command: command, Home: home, DataDir: d.data, GOOS: runtime.GOOS, UID: os.Getuid()},
		dryRun:   cmd.Bool("dry-run"),
		name:     cmd.Name,
		out:      cmd.Root().Writer,
		errOut:   cmd.Root().ErrWriter,
	}
	if err := s.checkSettings(); err != nil {
		return nil, err
	}
	return s, nil
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

// verb is what was done, or, in a dry run, what would be.
func (s *setup) verb(done, would string) string {
	if s.dryRun {
		return would
	}
	return done
}

func (s *setup) warn(err error) { fmt.Fprintf(s.errOut, "bottled: warning: %v\n", err) }

func runInstall(ctx context.Context, cmd *cli.Command) error {
	s, err := setupOf(ctx, cmd)
	if err != nil {
		return err
	}
	// The agent's file is checked, as settings.json was, before anything
	// changes: a file bottled will not edit stops the install before the
	// MCP server is registered.
	found, err := s.checkAgentFile()
	if err != nil {
		return err
	}
	mcp, err := s.installMCP()
	if err != nil {
		return err
	}
	if err := s.installSettings(mcp); err != nil {
		return err
	}
	return s.installAgent(found, cmd.Bool("no-start"))
}

// checkAgentFile refuses an agent file install would not replace: one
// bottled did not write, or a symbolic link.
func (s *setup) checkAgentFile() (agent.Found, error) {
	af, err := s.agent.Inspect()
	switch {
	case errors.Is(err, agent.ErrUnsupported):
		return af, nil
	case err != nil:
		return af, exitError{code: exitFailed, msg: err.Error()}
	case af.Link != "":
		return af, exitError{code: exitFailed, msg: fmt.Sprintf("%s is a symbolic link to %s, and bottled does not write through links: "+
			"remove the link and run install again", af.Path, af.Link)}
	case af.Exists && !af.Ours:
		return af, exitError{code: exitFailed, msg: fmt.Sprintf("%s exists and was not written by bottled; move it away and run install again", af.Path)}
	}
	return af, nil
}

// installAgent writes the login agent's file, unless it is up to date,
// and starts the agent unless noStart.
func (s *setup) installAgent(af agent.Found, noStart bool) error {
	if af.Path == "" {
		_, err := s.agent.File()
		s.say("login agent: %v", err)
		return nil
	}
	if af.Current {
		s.say("login agent: %s is up to date", af.Path)
	} else {
		if !s.dryRun {
			if _, err := s.agent.Write(); err != nil {
				return err
			}
		}
		mode := ""
		if af.Exists && af.Mode != agent.FileMode {
			mode = fmt.Sprintf(" (it was mode %04o)", af.Mode)
		}
		s.say("login agent: %s %s%s", s.verb("wrote", "would write"), af.Path, mode)
		if s.dryRun {
			fmt.Fprint(s.out, indent(s.agent.Definition()))
		}
	}
	if noStart {
		s.say("login agent: not started (--no-start); to start it: %s", commandLines(nil, s.agent.StartCommands()))
		return nil
	}
	_, err := s.runAll(s.agentStart())
	return err
}

func runUninstall(ctx context.Context, cmd *cli.Command) error {
	s, err := setupOf(ctx, cmd)
	if err != nil {
		return err
	}
	if err := s.uninstallAgent(); err != nil {
		return err
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

// uninstallAgent stops the login agent and removes its file, if bottled
// wrote it.
func (s *setup) uninstallAgent() error {
	af, err := s.agent.Inspect()
	switch {
	case errors.Is(err, agent.ErrUnsupported):
		return nil
	case err != nil:
		return exitError{code: exitFailed, msg: err.Error()}
	case !af.Exists:
		s.say("login agent: none installed")
		return nil
	case !af.Ours:
		s.say("login agent: %s was not written by bottled; left alone", af.Path)
		return nil
	}
	stopped, err := s.runAll(s.agentStop())
	if err != nil {
		s.warn(err)
	}
	if !s.dryRun {
		if err := os.Remove(af.Path); err != nil {
			return err
		}
	}
	link := ""
	if af.Link != "" {
		link = fmt.Sprintf(" (a link; %s, which it points to, is left as it is)", af.Link)
	}
	s.say("login agent: %s %s%s", s.verb("removed", "would remove"), af.Path, link)
	if stopped {
		if _, err := s.runAll(s.agentReload()); err != nil {
			s.warn(err)
		}
	}
	return nil
}

// defaultCommandTimeout bounds each command install and uninstall run:
// claude mcp add and remove, systemctl, launchctl. `claude mcp add` took
// 0.4 to 1.75 s on a 2-core machine at load 14; one that hangs (stuck on
// a network mount, an update, a prompt) would hold install for ever.
// What the command was to do is then printed for the user to run.
const defaultCommandTimeout = 30 * time.Second

var commandTimeout = defaultCommandTimeout // tests shorten it

// commands are programs install and uninstall run one after the other:
// the service manager's for the login agent, claude's for the MCP server.
type commands struct {
	cmds [][]string
	env  []string // added to the environment, and shown with each command
	what string   // what the commands are about: "mcp", "login agent"
	// notFound and timedOut end what is said when a program is not on
	// PATH (nothing is run then) or a command did not finish within
	// commandTimeout: what that leaves undone, what to do instead.
	notFound, timedOut string
	// failed starts, and advice ends, the error of a command that fails.
	failed, advice string
}

// runAll runs the commands, or, in a dry run, says what it would run. It
// reports whether they ran (would run): not when a program is not on PATH
// or a command timed out, which it says, running nothing more.
func (s *setup) runAll(c commands) (bool, error) {
	for _, cmd := range c.cmds {
		if _, err := exec.LookPath(cmd[0]); err != nil {
			s.say("%s: %s is not on PATH, so %s", c.what, cmd[0], c.notFound)
			return false, nil
		}
	}
	for _, cmd := range c.cmds {
		line := commandLine(c.env, cmd)
		if s.dryRun {
			s.say("%s: would run: %s", c.what, line)
			continue
		}
		out, err := runBounded(s.ctx, c.env, cmd)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			s.say("%s: `%s` did not finish within %v and was stopped, so %s", c.what, line, commandTimeout, c.timedOut)
			return false, nil
		case stopped(s.ctx, err):
			return false, interrupted(s.ctx, "while running %s (%s): run bottled %s again", line, c.what, s.name)
		case err != nil:
			return false, exitError{code: exitFailed, msg: fmt.Sprintf("%s: %s: %v: %s%s", c.failed, line, err, strings.TrimSpace(string(out)), c.advice)}
		}
		s.say("%s: ran: %s", c.what, line)
	}
	return true, nil
}

// runBounded runs cmd with env added to the environment, for at most
// commandTimeout. The command and whatever it starts are one process
// group, killed as one: a child left holding the output pipe would keep
// the wait waiting.
func runBounded(ctx context.Context, env, cmd []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	run := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	run.Env = append(os.Environ(), env...)
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	run.Cancel = func() error { return syscall.Kill(-run.Process.Pid, syscall.SIGKILL) }
	run.WaitDelay = time.Second
	out, err := run.CombinedOutput()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

// agentStart, agentStop and agentReload are the login agent's commands,
// with what to do where they cannot run.
func (s *setup) agentStart() commands {
	bottled := commandLine(nil, s.command)
	start := commandLines(nil, s.agent.StartCommands())
	return commands{cmds: s.agent.StartCommands(), what: "login agent",
		notFound: fmt.Sprintf("bottled cannot start the login agent. The hooks work without it (they render on demand); "+
			"to keep bottles current, run `%s run` from your login session", bottled),
		timedOut: "the login agent may not have started; to start it, run: " + start,
		failed:   "could not start the login agent",
		advice: fmt.Sprintf("\nbottled: the hooks work without the daemon (they render on demand); to keep bottles current, "+
			"start the agent once a user service manager is running (%s), or run `%s run` yourself", start, bottled)}
}

func (s *setup) agentStop() commands {
	stop := commandLines(nil, s.agent.StopCommands())
	return commands{cmds: s.agent.StopCommands(), what: "login agent",
		notFound: fmt.Sprintf("bottled stopped nothing; if a `%s run` is running, stop it yourself", commandLine(nil, s.command)),
		timedOut: "the login agent may still be running; to stop it, run: " + stop,
		failed:   "could not stop the login agent",
		advice:   "\nbottled: to stop it yourself, run: " + stop}
}

func (s *setup) agentReload() commands {
	reload := commandLines(nil, s.agent.AfterRemove())
	return commands{cmds: s.agent.AfterRemove(), what: "login agent",
		timedOut: "the service manager forgets the removed agent at its next reload (" + reload + ")",
		failed:   "could not reload the user service manager",
		advice:   "\nbottled: it forgets the removed agent at its next reload (" + reload + ")"}
}

// commandLine is a command as a user would type it in a POSIX shell, with
// the environment it needs.
func commandLine(env, cmd []string) string {
	var words []string
	for _, e := range env {
		name, value, _ := strings.Cut(e, "=")
		words = append(words, name+"="+inject.ShellQuote(value))
	}
	for _, w := range cmd {
		words = append(words, inject.ShellQuote(w))
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
