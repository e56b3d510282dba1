package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/inject"
)

// installEnv is a temporary HOME with a Claude config dir, a fake
// installed binary, and a PATH of its own, empty until a test puts a fake
// claude or systemctl on it: what the developer has on PATH (the real
// Claude Code, a systemd user manager) never reaches install.
type installEnv struct {
	home, claude, data, bin, settings, unit, path string
}

func newInstallEnv(t *testing.T) *installEnv {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	os.Unsetenv("CLAUDE_CONFIG_DIR") // t.Setenv restores it
	e := &installEnv{home: home, claude: filepath.Join(home, ".claude"), data: filepath.Join(home, ".claude-mem"),
		bin: filepath.Join(home, ".local", "bin", "bottled"), path: filepath.Join(home, "path")}
	if err := os.MkdirAll(e.path, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", e.path)
	e.settings = filepath.Join(e.claude, "settings.json")
	e.unit = filepath.Join(home, ".config", "systemd", "user", "bottled.service")
	if err := os.MkdirAll(filepath.Dir(e.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{e.bin, e.mcp()} {
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := executable
	executable = func() (string, error) { return e.bin, nil }
	t.Cleanup(func() { executable = old })
	return e
}

// tool puts an executable shell script on e's PATH. The script finds
// the system's own commands on a PATH of its own.
func (e *installEnv) tool(t *testing.T, name, script string) {
	t.Helper()
	script = "#!/bin/sh\nPATH=/usr/bin:/bin\n" + script
	if err := os.WriteFile(filepath.Join(e.path, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeSystemctl puts on PATH a systemctl that logs its arguments and
// exits with code. It returns the log.
func (e *installEnv) fakeSystemctl(t *testing.T, code int) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "systemctl.log")
	e.tool(t, "systemctl", fmt.Sprintf("echo \"$*\" >> %s\n[ %d = 0 ] || echo 'Failed to connect to bus: No medium found' >&2\nexit %d\n", log, code, code))
	return log
}

// mcp is the MCP server's binary beside e.bin.
func (e *installEnv) mcp() string { return filepath.Join(filepath.Dir(e.bin), mcpBinary) }

func (e *installEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return bottled(t, nil, append(dirFlags(e.claude, e.data), args...)...)
}

func (e *installEnv) write(t *testing.T, settings string) {
	t.Helper()
	if err := os.MkdirAll(e.claude, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.settings, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *installEnv) read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e.settings)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// otherTools is a settings.json a user of claude-mem could have, laid out
// as Claude Code writes it.
const otherTools = `{
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|clear|compact",
        "hooks": [
          {
            "type": "command",
            "command": "node \"$CLAUDE_PLUGIN_ROOT/scripts/worker-service.cjs\" hook claude-code context && echo done",
            "timeout": 60
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "node observation.js",
            "async": true
          }
        ]
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(go test:*)"
    ]
  },
  "cleanupPeriodDays": 90
}
`

type hookEntry struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	} `json:"hooks"`
}

func hooksOf(t *testing.T, settings string) map[string][]hookEntry {
	t.Helper()
	var s struct {
		Hooks map[string][]hookEntry `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		t.Fatalf("settings are not JSON: %v\n%s", err, settings)
	}
	return s.Hooks
}

func TestInstallUninstall(t *testing.T) {
	for _, tc := range []struct {
		name, before string
	}{
		{"no settings file", ""},
		{"empty object", "{}\n"},
		{"other tools' hooks", otherTools},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newInstallEnv(t)
			if tc.before != "" {
				e.write(t, tc.before)
			}
			code, out, errOut := e.run(t, "install", "--no-start")
			if code != 0 {
				t.Fatalf("install: code %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, "registered SessionStart") || !strings.Contains(out, "wrote "+e.unit) {
				t.Errorf("install said:\n%s", out)
			}
			after := e.read(t)
			hooks := hooksOf(t, after)
			start, end := hooks["SessionStart"], hooks["SessionEnd"]
			ours := start[len(start)-1]
			wantStart := e.bin + " --claude-dir " + e.claude + " --data-dir " + e.data + " hook session-start"
			if ours.Matcher != "compact|resume" || len(ours.Hooks) != 1 || ours.Hooks[0].Command != wantStart || ours.Hooks[0].Type != "command" || ours.Hooks[0].Timeout == 0 {
				t.Errorf("SessionStart entry = %+v", ours)
			}
			if len(end) != 1 || end[0].Matcher != "clear" || !strings.HasSuffix(end[0].Hooks[0].Command, " hook session-end") {
				t.Errorf("SessionEnd = %+v", end)
			}
			if tc.before == otherTools {
				if len(start) != 2 || start[0].Matcher != "startup|clear|compact" || len(hooks["PostToolUse"]) != 1 {
					t.Errorf("other tools' hooks changed: %+v", hooks)
				}
				keys := []string{`"model"`, `"hooks"`, `"permissions"`, `"cleanupPeriodDays"`}
				for i := 1; i < len(keys); i++ {
					if strings.Index(after, keys[i-1]) > strings.Index(after, keys[i]) {
						t.Errorf("key order changed:\n%s", after)
					}
				}
				if !strings.Contains(after, `&& echo done`) {
					t.Errorf("a command was re-escaped:\n%s", after)
				}
				if b, err := os.ReadFile(e.settings + ".bottled.bak"); err != nil || string(b) != tc.before {
					t.Errorf("no faithful backup (%v)", err)
				}
			}
			if unit, err := os.ReadFile(e.unit); err != nil || !strings.Contains(string(unit), "ExecStart="+e.bin+" --claude-dir") {
				t.Errorf("unit: %v\n%s", err, unit)
			}

			// Twice is once.
			code, out, _ = e.run(t, "install", "--no-start")
			if code != 0 || !strings.Contains(out, "already registered") || !strings.Contains(out, "up to date") || e.read(t) != after {
				t.Errorf("second install changed something:\n%s", out)
			}

			code, out, errOut = e.run(t, "uninstall")
			if code != 0 || !strings.Contains(out, "removed "+e.unit) || !strings.Contains(out, "hooks: removed") {
				t.Fatalf("uninstall: code %d, stdout %q, stderr %q", code, out, errOut)
			}
			if _, err := os.Stat(e.unit); !os.IsNotExist(err) {
				t.Errorf("unit file left after uninstall")
			}
			got := e.read(t)
			switch tc.before {
			case "":
				if strings.TrimSpace(got) != "{}" {
					t.Errorf("uninstall left %q in a file install created", got)
				}
			default:
				if got != tc.before {
					t.Errorf("uninstall did not restore the settings:\n--- before\n%s--- after\n%s", tc.before, got)
				}
			}
		})
	}
}

func TestInstallRefusesMalformedSettings(t *testing.T) {
	for _, bad := range []string{`{"hooks": [`, `["not", "an", "object"]`, `{"a": 1} {"b": 2}`, "\x00\x01"} {
		e := newInstallEnv(t)
		e.write(t, bad)
		code, _, errOut := e.run(t, "install", "--no-start")
		if code != exitFailed || !strings.Contains(errOut, "settings.json") || !strings.Contains(errOut, "left it unchanged") {
			t.Errorf("%q: code %d, stderr %q", bad, code, errOut)
		}
		if e.read(t) != bad {
			t.Errorf("%q: malformed settings were modified", bad)
		}
		if _, err := os.Stat(e.settings + ".bottled.bak"); !os.IsNotExist(err) {
			t.Errorf("%q: a backup was written for a refused file", bad)
		}
		if _, err := os.Stat(e.unit); !os.IsNotExist(err) {
			t.Errorf("%q: the agent was installed although the hooks were refused", bad)
		}
	}
}

// TestInstallRefusesWrongTypes: a value bottled would read or change that
// has the wrong type is refused with the key, its type and the type it
// must have, by install and by uninstall, and the file is left as it is.
func TestInstallRefusesWrongTypes(t *testing.T) {
	for _, tc := range []struct{ settings, key, is, want string }{
		{`{"permissions":{"allow":"Read(*)"}}`, "permissions.allow", "a string", "an array"},
		{`{"hooks":"nope"}`, "hooks", "a string", "an object"},
		{`{"hooks":null}`, "hooks", "null", "an object"},
		{`{"hooks":{"SessionStart":{}}}`, "hooks.SessionStart", "an object", "an array"},
		{`{"hooks":{"SessionEnd":["x"]}}`, "hooks.SessionEnd[0]", "a string", "an object"},
		{`{"hooks":{"SessionStart":[{"matcher":"compact","hooks":{}}]}}`, "hooks.SessionStart[0].hooks", "an object", "an array"},
		{`{"hooks":{"SessionStart":[{"hooks":[42]}]}}`, "hooks.SessionStart[0].hooks[0]", "a number", "an object"},
		{`{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":["bottled"]}]}]}}`, "hooks.SessionEnd[0].hooks[0].command", "an array", "a string"},
		{`{"permissions":[]}`, "permissions", "an array", "an object"},
		{`{"permissions":{"allow":["Read",3]}}`, "permissions.allow[1]", "a number", "a string"},
		{`{"permissions":{"additionalDirectories":"~/x"}}`, "permissions.additionalDirectories", "a string", "an array"},
		{`{"permissions":{"blockReadsOutsideWorkingDirectories":"yes"}}`, "permissions.blockReadsOutsideWorkingDirectories", "a string", "a boolean"},
	} {
		for _, cmd := range [][]string{{"install", "--no-start"}, {"uninstall"}} {
			e := newInstallEnv(t)
			e.write(t, tc.settings)
			code, _, errOut := e.run(t, cmd...)
			for _, want := range []string{tc.key + " is " + tc.is, tc.want, "left it unchanged"} {
				if code != exitFailed || !strings.Contains(errOut, want) {
					t.Errorf("%s %s: code %d, stderr %q; want %q in it", cmd, tc.settings, code, errOut, want)
				}
			}
			if e.read(t) != tc.settings {
				t.Errorf("%s %s: the file was changed to %s", cmd, tc.settings, e.read(t))
			}
			if _, err := os.Lstat(e.settings + ".bottled.bak"); !os.IsNotExist(err) {
				t.Errorf("%s %s: a backup was written", cmd, tc.settings)
			}
			if _, err := os.Stat(e.unit); !os.IsNotExist(err) {
				t.Errorf("%s %s: the agent was installed although the settings were refused", cmd, tc.settings)
			}
		}
	}
}

// TestInstallDryRun: a dry run says what install would do, in those
// words, changes nothing, and says when claude is not on PATH.
func TestInstallDryRun(t *testing.T) {
	e := newInstallEnv(t)
	e.write(t, otherTools)
	log := e.fakeSystemctl(t, 0)
	code, out, errOut := e.run(t, "install", "--dry-run")
	for _, want := range []string{"(dry run) hooks: would register SessionStart", "would let Claude Code read the bottles",
		"(dry run) login agent: would write " + e.unit, "ExecStart=", "would run: systemctl --user enable --now bottled.service",
		"claude is not on PATH"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("dry run: code %d, stderr %q; want %q in:\n%s", code, errOut, want, out)
		}
	}
	for _, done := range []string{"registered SessionStart", "wrote ", "now lets", "ran: "} {
		if strings.Contains(out, done) {
			t.Errorf("a dry run says it did %q:\n%s", done, out)
		}
	}
	if e.read(t) != otherTools {
		t.Errorf("dry run changed settings.json")
	}
	if _, err := os.Stat(e.unit); !os.IsNotExist(err) {
		t.Errorf("dry run wrote the unit")
	}
	if _, err := os.Stat(e.settings + ".bottled.bak"); !os.IsNotExist(err) {
		t.Errorf("dry run wrote a backup")
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("dry run ran systemctl")
	}
}

// TestInstallRefusesFileForDirectory: a --data-dir or --claude-dir that
// exists and is not a directory is refused (exit 1, as by every command),
// in a dry run too.
func TestInstallRefusesFileForDirectory(t *testing.T) {
	for _, flag := range []string{"--data-dir", "--claude-dir"} {
		for _, cmd := range [][]string{{"install", "--dry-run"}, {"install", "--no-start"}, {"uninstall", "--dry-run"}} {
			e := newInstallEnv(t)
			file := filepath.Join(e.home, "a-file")
			if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			flags := map[string]string{"--claude-dir": e.claude, "--data-dir": e.data}
			flags[flag] = file
			code, out, errOut := bottled(t, nil, append([]string{"--claude-dir", flags["--claude-dir"], "--data-dir", flags["--data-dir"]}, cmd...)...)
			if code != exitFailed || !strings.Contains(errOut, file+" is not a directory") || !strings.Contains(errOut, flag) {
				t.Errorf("%s a file %v: code %d, stdout %q, stderr %q", flag, cmd, code, out, errOut)
			}
			if _, err := os.Stat(e.unit); !os.IsNotExist(err) {
				t.Errorf("%s a file %v: the unit was written", flag, cmd)
			}
		}
	}
}

// TestInstallStartsAgent: install enables and starts the unit with
// systemctl, uninstall stops and removes it.
func TestInstallStartsAgent(t *testing.T) {
	e := newInstallEnv(t)
	log := e.fakeSystemctl(t, 0)
	code, out, errOut := e.run(t, "install")
	if code != 0 || !strings.Contains(out, "ran: systemctl --user enable --now bottled.service") {
		t.Fatalf("install: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = e.run(t, "uninstall")
	if code != 0 || !strings.Contains(out, "removed "+e.unit) {
		t.Fatalf("uninstall: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	b, _ := os.ReadFile(log)
	want := "--user daemon-reload\n--user enable --now bottled.service\n--user disable --now bottled.service\n--user daemon-reload\n"
	if string(b) != want {
		t.Errorf("systemctl calls:\n%s\nwant:\n%s", b, want)
	}
}

// TestInstallWithoutSystemd: where systemctl is missing, install still
// registers the hooks and writes the unit, and says how to run the daemon.
func TestInstallWithoutSystemd(t *testing.T) {
	e := newInstallEnv(t)
	code, out, errOut := e.run(t, "install")
	if code != 0 || !strings.Contains(out, "systemctl is not on PATH") || !strings.Contains(out, e.bin+" --claude-dir") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestUninstallAdvice: what uninstall says when it cannot stop the agent
// is about stopping it, never about keeping bottles current.
func TestUninstallAdvice(t *testing.T) {
	for _, tc := range []struct {
		name      string
		systemctl int // exit code; -1: not on PATH
		say       string
	}{
		{"systemctl not on PATH", -1, "systemctl is not on PATH"},
		{"systemctl fails", 1, "systemctl --user disable --now bottled.service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newInstallEnv(t)
			if code, _, errOut := e.run(t, "install", "--no-start"); code != 0 {
				t.Fatal(errOut)
			}
			if tc.systemctl >= 0 {
				e.fakeSystemctl(t, tc.systemctl)
			}
			code, out, errOut := e.run(t, "uninstall")
			said := out + errOut
			if code != 0 || !strings.Contains(said, tc.say) || !strings.Contains(out, "removed "+e.unit) {
				t.Errorf("code %d; want %q in:\n%s", code, tc.say, said)
			}
			for _, wrong := range []string{"keep bottles current", "at login", "start it", "once a user service manager"} {
				if strings.Contains(said, wrong) {
					t.Errorf("uninstall advises %q:\n%s", wrong, said)
				}
			}
		})
	}
}

// TestInstallRefusesEmptySettings: an empty settings.json is refused (it
// is what a write caught half-way looks like), not taken for no settings.
func TestInstallRefusesEmptySettings(t *testing.T) {
	e := newInstallEnv(t)
	e.write(t, "")
	code, _, errOut := e.run(t, "install", "--no-start")
	if code != exitFailed || !strings.Contains(errOut, "is empty") || !strings.Contains(errOut, "write {} into it") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
	if e.read(t) != "" {
		t.Errorf("the empty file was written")
	}
	if _, err := os.Stat(e.unit); !os.IsNotExist(err) {
		t.Errorf("the agent was installed although the settings were refused")
	}
}

// TestInstallSymlinkedSettings: a settings.json that links into a dotfiles
// folder keeps its link; the dotfile gets the hooks, and install says so.
func TestInstallSymlinkedSettings(t *testing.T) {
	e := newInstallEnv(t)
	dotfile := filepath.Join(e.home, "dotfiles", "claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(dotfile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dotfile, []byte(otherTools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.claude, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfile, e.settings); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "install", "--no-start")
	if code != 0 || !strings.Contains(out, e.settings+" is a symbolic link to "+dotfile) {
		t.Fatalf("install: code %d, stderr %q, said:\n%s", code, errOut, out)
	}
	if info, err := os.Lstat(e.settings); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a link")
	}
	b, _ := os.ReadFile(dotfile)
	if start := hooksOf(t, string(b))["SessionStart"]; len(start) != 2 {
		t.Errorf("the dotfile has no hooks:\n%s", b)
	}
	if code, _, errOut := e.run(t, "uninstall"); code != 0 {
		t.Fatal(errOut)
	}
	if b, _ := os.ReadFile(dotfile); string(b) != otherTools {
		t.Errorf("uninstall did not restore the dotfile:\n%s", b)
	}
}

// TestInstallAgentFile: a unit that is a symbolic link is refused, not
// written through; one of a stale mode is written again, 0600.
func TestInstallAgentFile(t *testing.T) {
	e := newInstallEnv(t)
	outside := filepath.Join(e.home, "dotfiles", "bottled.service")
	if err := os.MkdirAll(filepath.Dir(outside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(e.unit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, e.unit); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := e.run(t, "install", "--no-start")
	if b, _ := os.ReadFile(outside); code != exitFailed || !strings.Contains(errOut, "symbolic link") || string(b) != "# mine\n" {
		t.Errorf("a linked unit: code %d, stderr %q, the link's target holds %q", code, errOut, b)
	}

	os.Remove(e.unit)
	if code, _, errOut := e.run(t, "install", "--no-start"); code != 0 {
		t.Fatal(errOut)
	}
	if err := os.Chmod(e.unit, 0o666); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "install", "--no-start")
	info, err := os.Lstat(e.unit)
	if code != 0 || !strings.Contains(out, "wrote "+e.unit) || err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a 0666 unit: code %d, stderr %q, mode %v, said:\n%s", code, errOut, info.Mode(), out)
	}
}

func TestInstallRefusesGoRunBinary(t *testing.T) {
	e := newInstallEnv(t)
	tmp := filepath.Join(t.TempDir(), "go-build123", "b001", "exe", "bottled")
	os.MkdirAll(filepath.Dir(tmp), 0o755)
	os.WriteFile(tmp, nil, 0o755)
	executable = func() (string, error) { return tmp, nil }
	code, _, errOut := e.run(t, "install", "--no-start")
	if code != exitFailed || !strings.Contains(errOut, "go run") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
}

func TestUninstallLeavesForeignAgentFile(t *testing.T) {
	e := newInstallEnv(t)
	os.MkdirAll(filepath.Dir(e.unit), 0o755)
	os.WriteFile(e.unit, []byte("[Service]\nExecStart=/usr/bin/something\n"), 0o644)
	code, out, _ := e.run(t, "uninstall")
	if b, _ := os.ReadFile(e.unit); code != 0 || !bytes.Contains(b, []byte("something")) || !strings.Contains(out, "not written by bottled") {
		t.Errorf("code %d, out %q", code, out)
	}
	code, _, errOut := e.run(t, "install", "--no-start")
	if code != exitFailed || !strings.Contains(errOut, "not written by bottled") {
		t.Errorf("install over a foreign unit: code %d, stderr %q", code, errOut)
	}
}

// permissionsOf returns settings.json's permissions.
func permissionsOf(t *testing.T, settings string) (allow, dirs []string) {
	t.Helper()
	var s struct {
		Permissions struct {
			Allow                 []string `json:"allow"`
			AdditionalDirectories []string `json:"additionalDirectories"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		t.Fatalf("settings are not JSON: %v\n%s", err, settings)
	}
	return s.Permissions.Allow, s.Permissions.AdditionalDirectories
}

// TestInstallReadAccess: install lets Claude Code read the bottles without
// asking, with the narrowest grant that works, and uninstall takes it back.
func TestInstallReadAccess(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "mem data")
	tests := []struct {
		name      string
		before    string
		data      string // "" for the default under HOME
		wantAllow func(e *installEnv) string
		wantDir   func(e *installEnv) string
		say       string
	}{
		{"data dir under HOME", "", "", func(e *installEnv) string { return "Read(~/.claude-mem/bottles/**)" }, nil, "the rule Read(~/.claude-mem/bottles/**) in permissions.allow"},
		{"data dir outside HOME", otherTools, outside, func(e *installEnv) string { return "Read(/" + outside + "/bottles/**)" }, nil, "the rule Read(//"},
		{"reads outside working directories blocked", `{"permissions":{"blockReadsOutsideWorkingDirectories":true,"allow":["Bash(ls:*)"]}}`, "", nil,
			func(e *installEnv) string { return filepath.Join(e.data, "bottles") }, "blockReadsOutsideWorkingDirectories is set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newInstallEnv(t)
			if tc.data != "" {
				e.data = tc.data
			}
			if tc.before != "" {
				e.write(t, tc.before)
			}
			code, out, errOut := e.run(t, "install", "--no-start", "--dry-run")
			if code != 0 || !strings.Contains(out, tc.say) {
				t.Errorf("dry run: code %d, stderr %q, said:\n%s", code, errOut, out)
			}
			if _, err := os.Stat(e.settings); tc.before == "" && !os.IsNotExist(err) {
				t.Errorf("dry run wrote settings")
			}
			code, out, errOut = e.run(t, "install", "--no-start")
			if code != 0 || !strings.Contains(out, tc.say) {
				t.Fatalf("install: code %d, stderr %q, said:\n%s", code, errOut, out)
			}
			allow, dirs := permissionsOf(t, e.read(t))
			for _, tool := range inject.MCPTools {
				if !slices.Contains(allow, tool) {
					t.Errorf("permissions.allow = %q, want %s in it", allow, tool)
				}
			}
			if tc.wantAllow != nil && !slices.Contains(allow, tc.wantAllow(e)) {
				t.Errorf("permissions.allow = %q, want %q in it", allow, tc.wantAllow(e))
			}
			if tc.wantDir != nil {
				if !slices.Contains(dirs, tc.wantDir(e)) || slices.ContainsFunc(allow, func(r string) bool { return strings.HasPrefix(r, "Read(") }) {
					t.Errorf("allow %q, additionalDirectories %q; want only the directory %s", allow, dirs, tc.wantDir(e))
				}
			}
			before := e.read(t)
			if code, out, _ := e.run(t, "install", "--no-start"); code != 0 || e.read(t) != before || !strings.Contains(out, "already lets") {
				t.Errorf("a second install changed the settings or said:\n%s", out)
			}
			if code, _, errOut := e.run(t, "uninstall"); code != 0 {
				t.Fatalf("uninstall: %s", errOut)
			}
			got := e.read(t)
			if want := tc.before; want == "" && strings.TrimSpace(got) != "{}" || want != "" && !sameJSON(got, want) {
				t.Errorf("uninstall left:\n%s\nwant:\n%s", got, tc.before)
			}
		})
	}
}

// TestInstallMovesReadAccess: installing again with another data directory
// replaces the earlier grant instead of leaving it behind.
func TestInstallMovesReadAccess(t *testing.T) {
	e := newInstallEnv(t)
	if code, _, errOut := e.run(t, "install", "--no-start"); code != 0 {
		t.Fatal(errOut)
	}
	e.data = filepath.Join(e.home, "elsewhere")
	if code, _, errOut := e.run(t, "install", "--no-start"); code != 0 {
		t.Fatal(errOut)
	}
	allow, _ := permissionsOf(t, e.read(t))
	reads := slices.DeleteFunc(allow, func(r string) bool { return !strings.HasPrefix(r, "Read(") })
	if !slices.Equal(reads, []string{"Read(~/elsewhere/bottles/**)"}) {
		t.Errorf("permissions.allow = %q, want only the new data directory's Read rule", allow)
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestInstallUsesClaudeMemSettingsDataDir: with no flag and no variable,
// install finds the data directory in claude-mem's settings.json, as
// claude-mem does, and gives that one to the hooks and the login agent.
func TestInstallUsesClaudeMemSettingsDataDir(t *testing.T) {
	e := newInstallEnv(t)
	t.Setenv("CLAUDE_MEM_DATA_DIR", "")
	cmdata := filepath.Join(e.home, "cmdata")
	settings := filepath.Join(e.home, ".claude-mem", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"env": {"CLAUDE_MEM_DATA_DIR": "~/cmdata"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := bottled(t, nil, "install", "--no-start")
	if code != 0 {
		t.Fatalf("install: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	want := e.bin + " --claude-dir " + e.claude + " --data-dir " + cmdata + " hook session-start"
	if start := hooksOf(t, e.read(t))["SessionStart"]; len(start) != 1 || start[0].Hooks[0].Command != want {
		t.Errorf("SessionStart = %+v, want %q", start, want)
	}
	if unit, err := os.ReadFile(e.unit); err != nil || !strings.Contains(string(unit), "--data-dir "+cmdata+" run") {
		t.Errorf("unit: %v\n%s", err, unit)
	}
}

// TestInstallWithoutHOME: with HOME empty, install finds the home
// directory where Claude Code and claude-mem find it (the user
// database's), as the directories were found, instead of failing.
func TestInstallWithoutHOME(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the unit's path is systemd's")
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		t.Skipf("this user has no home directory in the user database: %v", err)
	}
	e := newInstallEnv(t)
	t.Setenv("HOME", "")
	code, out, errOut := e.run(t, "install", "--dry-run")
	unit := filepath.Join(u.HomeDir, ".config", "systemd", "user", "bottled.service")
	if code != 0 || !strings.Contains(out, unit) {
		t.Errorf("install --dry-run: code %d, stdout %q, stderr %q; want the unit at %s", code, out, errOut, unit)
	}
}
