package watch

import (
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// WriteAgentFile writes the definition, creating its directory (and, on
// macOS, the log directory).
func (a Agent) WriteAgentFile() (string, error) {
	file, err := a.File()
	if err != nil {
		return "", err
	}
	if a.GOOS == "darwin" {
		if err := os.MkdirAll(filepath.Join(a.DataDir, "logs"), 0o700); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	return file, os.WriteFile(file, []byte(a.Definition()), 0o644)
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
