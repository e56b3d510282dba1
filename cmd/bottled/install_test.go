package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/inject"
)

// installEnv is a temporary HOME with a Claude config dir, and a fake
// installed binary.
type installEnv struct {
	home, claude, data, bin, settings, unit string
	flags                                   []string
}

func newInstallEnv(t *testing.T) *installEnv {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	e := &installEnv{home: home, claude: filepath.Join(home, ".claude"), data: filepath.Join(home, ".claude-mem"),
		bin: filepath.Join(home, ".local", "bin", "bottled")}
	e.settings = filepath.Join(e.claude, "settings.json")
	e.unit = filepath.Join(home, ".config", "systemd", "user", "bottled.service")
	e.flags = []string{"--claude-dir", e.claude, "--data-dir", e.data}
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

// mcp is the MCP server's binary beside e.bin.
func (e *installEnv) mcp() string { return filepath.Join(filepath.Dir(e.bin), mcpBinary) }

func (e *installEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return bottled(t, nil, append(e.flags, args...)...)
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

func TestInstallDryRun(t *testing.T) {
	e := newInstallEnv(t)
	e.write(t, otherTools)
	code, out, _ := e.run(t, "install", "--dry-run")
	if code != 0 || !strings.Contains(out, "(dry run)") || !strings.Contains(out, "would run: systemctl --user") || !strings.Contains(out, "ExecStart=") {
		t.Errorf("dry run said:\n%s", out)
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
}

// TestInstallWithoutSystemd: where systemctl is missing, install still
// registers the hooks and writes the unit, and says how to run the daemon.
func TestInstallWithoutSystemd(t *testing.T) {
	e := newInstallEnv(t)
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := e.run(t, "install")
	if code != 0 || !strings.Contains(out, "systemctl not found") || !strings.Contains(out, e.bin+" --claude-dir") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out, errOut)
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
		{"data dir under HOME", "", "", func(e *installEnv) string { return "Read(~/.claude-mem/bottles/**)" }, nil, "permissions.allow has Read(~/.claude-mem/bottles/**)"},
		{"data dir outside HOME", otherTools, outside, func(e *installEnv) string { return "Read(/" + outside + "/bottles/**)" }, nil, "Read(//"},
		{"reads outside working directories blocked", `{"permissions":{"blockReadsOutsideWorkingDirectories":true,"allow":["Bash(ls:*)"]}}`, "", nil,
			func(e *installEnv) string { return filepath.Join(e.data, "bottles") }, "blockReadsOutsideWorkingDirectories is set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newInstallEnv(t)
			if tc.data != "" {
				e.data = tc.data
				e.flags = []string{"--claude-dir", e.claude, "--data-dir", e.data}
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
	e.flags = []string{"--claude-dir", e.claude, "--data-dir", e.data}
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
