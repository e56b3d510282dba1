// Package agent owns bottled's login agent, registered at install time:
// the systemd user unit on Linux and the LaunchAgent on macOS that start
// the daemon (bottled run) when the user logs in, the commands that load
// and unload it, and reading and writing its file (the user's alone,
// never through a symbolic link).
package agent

import (
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bottled-dev/bottled/safefile"
)

// Agent is bottled's login agent: the daemon, started when the user logs
// in and restarted if it fails. On Linux it is a systemd user unit, on
// macOS a LaunchAgent.
type Agent struct {
	// Command is the absolute path of the bottled binary and its global
	// flags; "run" is appended.
	Command []string
	Home    string // the user's home directory
	DataDir string // logs go under it on macOS
	GOOS    string
	UID     int
}

const (
	unitName     = "bottled.service"
	launchdLabel = "dev.bottled"
	// agentMarker heads the files bottled writes, so that nobody mistakes
	// them for their own and uninstall knows what it may remove.
	agentMarker = "Written by `bottled install`; `bottled uninstall` removes it."
)

// ErrUnsupported reports a system without a login-agent mechanism bottled
// knows.
var ErrUnsupported = errors.New("no login agent support on this system")

// File is where the agent's definition goes.
func (a Agent) File() (string, error) {
	switch a.GOOS {
	case "linux":
		return filepath.Join(a.Home, ".config", "systemd", "user", unitName), nil
	case "darwin":
		return filepath.Join(a.Home, "Library", "LaunchAgents", launchdLabel+".plist"), nil
	}
	return "", fmt.Errorf("%w (%s): run `%s run` from your login session instead", ErrUnsupported, a.GOOS, strings.Join(a.Command, " "))
}

// Definition is the agent file's content.
func (a Agent) Definition() string {
	args := append(append([]string{}, a.Command...), "run")
	if a.GOOS == "darwin" {
		return a.plist(args)
	}
	quoted := make([]string, len(args))
	for i, w := range args {
		quoted[i] = systemdQuote(w)
	}
	return "# " + agentMarker + `
[Unit]
Description=bottled: keeps Claude Code session bottles current

[Service]
ExecStart=` + strings.Join(quoted, " ") + `
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`
}

func (a Agent) plist(args []string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- ` + agentMarker + ` -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + launchdLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, w := range args {
		b.WriteString("\t\t<string>" + html.EscapeString(w) + "</string>\n")
	}
	logFile := html.EscapeString(filepath.Join(a.DataDir, "logs", "bottled.log"))
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardOutPath</key>
	<string>` + logFile + `</string>
	<key>StandardErrorPath</key>
	<string>` + logFile + `</string>
</dict>
</plist>
`)
	return b.String()
}

// StartCommands load and start the agent once its file is written.
func (a Agent) StartCommands() [][]string {
	if a.GOOS == "darwin" {
		file, _ := a.File()
		return [][]string{{"launchctl", "bootstrap", "gui/" + strconv.Itoa(a.UID), file}}
	}
	return [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", unitName}}
}

// StopCommands stop and unload the agent before its file is removed.
func (a Agent) StopCommands() [][]string {
	if a.GOOS == "darwin" {
		return [][]string{{"launchctl", "bootout", "gui/" + strconv.Itoa(a.UID) + "/" + launchdLabel}}
	}
	return [][]string{{"systemctl", "--user", "disable", "--now", unitName}}
}

// AfterRemove tidies up once the file is gone (systemd forgets the unit).
func (a Agent) AfterRemove() [][]string {
	if a.GOOS == "darwin" {
		return nil
	}
	return [][]string{{"systemctl", "--user", "daemon-reload"}}
}

// IsOurs reports whether an existing agent file was written by bottled.
func IsOurs(content []byte) bool { return strings.Contains(string(content), agentMarker) }

// FileMode is the agent file's mode: the file is the user's alone, as
// one that others could write would let them run commands as the user at
// every login. A file of another mode is written again.
const FileMode fs.FileMode = 0o600

// Found is what is at the agent's file.
type Found struct {
	Path   string
	Exists bool
	// Link is where a symbolic link at Path points, "" if Path is not one.
	// bottled reads through it, never writes through it.
	Link string
	Mode fs.FileMode // of the file read
	// Ours: bottled wrote the file. Current: it holds exactly the
	// definition, with FileMode.
	Ours, Current bool
}

// Inspect reads what is at the agent's file, without blocking on anything
// that is not a regular file.
func (a Agent) Inspect() (Found, error) {
	file, err := a.File()
	if err != nil {
		return Found{}, err
	}
	af := Found{Path: file}
	info, err := os.Lstat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return af, nil
	}
	if err != nil {
		return af, err
	}
	af.Exists = true
	if info.Mode()&fs.ModeSymlink != 0 {
		af.Link, _ = os.Readlink(file)
	}
	f, info, err := safefile.OpenFollow(file)
	var irregular *safefile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist): // a dangling link
		return af, nil
	case errors.As(err, &irregular):
		return af, fmt.Errorf("%s is not a regular file (%v): move it away and run bottled again", file, irregular.Mode.Type())
	case err != nil:
		return af, err
	}
	defer f.Close()
	content, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return af, fmt.Errorf("read %s: %w", file, err)
	}
	af.Mode = info.Mode().Perm()
	af.Ours = IsOurs(content)
	af.Current = af.Link == "" && af.Mode == FileMode && string(content) == a.Definition()
	return af, nil
}

// Write writes the definition, creating its directory (and, on
// macOS, the log directory). The file is written anew, FileMode, and
// renamed into place: a symbolic link there is refused, not followed.
func (a Agent) Write() (string, error) {
	file, err := a.File()
	if err != nil {
		return "", err
	}
	if info, err := os.Lstat(file); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		link, _ := os.Readlink(file)
		return "", fmt.Errorf("%s is a symbolic link to %s, and bottled does not write through links: remove it and run install again", file, link)
	}
	if a.GOOS == "darwin" {
		if err := safefile.MkdirPrivate(filepath.Join(a.DataDir, "logs")); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := safefile.Write(file, []byte(a.Definition())); err != nil {
		return "", err
	}
	return file, nil
}

// systemdQuote quotes a word for ExecStart: systemd splits on spaces,
// honours double quotes and backslash escapes, and expands %-specifiers.
func systemdQuote(w string) string {
	w = strings.ReplaceAll(w, "%", "%%")
	w = strings.ReplaceAll(w, "$", "$$")
	if w != "" && !strings.ContainsAny(w, " \t\"'\\;$") {
		return w
	}
	w = strings.ReplaceAll(w, `\`, `\\`)
	w = strings.ReplaceAll(w, `"`, `\"`)
	return `"` + w + `"`
}
