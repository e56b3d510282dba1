package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirAsClaudeMemFindsIt: bottled writes its bottles in the data
// directory claude-mem uses, found the way claude-mem 13.25.3 finds it: a
// leading ~ of CLAUDE_MEM_DATA_DIR expanded (not ~user), an empty variable
// taken as unset, then CLAUDE_MEM_DATA_DIR in ~/.claude-mem/settings.json
// (top level or under "env"), then ~/.claude-mem; --data-dir beats them
// all. A settings.json claude-mem cannot read is said once, on stderr.
func TestDataDirAsClaudeMemFindsIt(t *testing.T) {
	unset := "(unset)"
	for _, c := range []struct {
		name     string
		env      string   // CLAUDE_MEM_DATA_DIR, or unset
		settings string   // ~/.claude-mem/settings.json, if any
		flags    []string // besides --claude-dir
		want     string   // the data dir: ~ is the home, . the working directory
		warn     string   // what stderr says, if anything
	}{
		{name: "tilde slash", env: "~/cm", want: "~/cm"},
		{name: "tilde alone", env: "~", want: "~"},
		{name: "tilde user is a name", env: "~nobody/cm", want: "./~nobody/cm"},
		{name: "relative", env: "cm", want: "./cm"},
		{name: "unset, no settings", env: unset, want: "~/.claude-mem"},
		{name: "unset, settings", env: unset, settings: `{"CLAUDE_MEM_DATA_DIR": "~/fromsettings"}`, want: "~/fromsettings"},
		{name: "empty, settings", env: "", settings: `{"CLAUDE_MEM_DATA_DIR": "/abs/cmdata"}`, want: "/abs/cmdata"},
		{name: "empty, no settings", env: "", want: "~/.claude-mem"},
		{name: "legacy nested", env: unset, settings: "\uFEFF" + `{"env": {"CLAUDE_MEM_DATA_DIR": "~/nested"}}`, want: "~/nested"},
		{name: "nested hides the top level", env: unset, settings: `{"CLAUDE_MEM_DATA_DIR": "~/top", "env": {}}`, want: "~/.claude-mem"},
		{name: "settings without the key", env: unset, settings: `{"CLAUDE_MEM_WORKER_PORT": "37777"}`, want: "~/.claude-mem"},
		{name: "settings empty value", env: unset, settings: `{"CLAUDE_MEM_DATA_DIR": ""}`, want: "~/.claude-mem"},
		{name: "env beats settings", env: "~/fromenv", settings: `{"CLAUDE_MEM_DATA_DIR": "~/fromsettings"}`, want: "~/fromenv"},
		{name: "flag beats both", env: "~/fromenv", settings: `{"CLAUDE_MEM_DATA_DIR": "~/fromsettings"}`, flags: []string{"--data-dir", "~/fromflag"}, want: "~/fromflag"},
		{name: "malformed settings", env: unset, settings: `{"CLAUDE_MEM_DATA_DIR": "~/x",`, want: "~/.claude-mem",
			warn: "bottled: warning: claude-mem's settings ~/.claude-mem/settings.json cannot be read (unexpected end of JSON input): using ~/.claude-mem, as claude-mem does\n"},
		{name: "settings not a string", env: unset, settings: `{"CLAUDE_MEM_DATA_DIR": 7}`, want: "~/.claude-mem",
			warn: "bottled: warning: claude-mem's settings ~/.claude-mem/settings.json cannot be used (CLAUDE_MEM_DATA_DIR is a number, not a string): using ~/.claude-mem\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, true)
			root := filepath.Dir(e.claude)
			home, cwd := filepath.Join(root, "home"), filepath.Join(root, "app")
			for _, d := range []string{home, cwd} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("HOME", home)
			t.Chdir(cwd)
			t.Setenv("CLAUDE_MEM_DATA_DIR", c.env)
			if c.env == unset {
				os.Unsetenv("CLAUDE_MEM_DATA_DIR")
			}
			if c.settings != "" {
				if err := os.MkdirAll(filepath.Join(home, ".claude-mem"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".claude-mem", "settings.json"), []byte(c.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			place := func(p string) string {
				switch {
				case strings.HasPrefix(p, "~"):
					return home + p[1:]
				case strings.HasPrefix(p, "./"):
					return filepath.Join(cwd, p[2:])
				}
				return p
			}
			want := place(c.want)
			if strings.HasPrefix(want, "/abs/") {
				want = filepath.Join(root, want)
				settings := strings.ReplaceAll(c.settings, "/abs/", root+"/abs/")
				if err := os.WriteFile(filepath.Join(home, ".claude-mem", "settings.json"), []byte(settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"--claude-dir", e.claude}, c.flags...)
			code, out, errOut := bottled(t, nil, append(args, "render", sessionID)...)
			wantOut := filepath.Join(want, "bottles", sessionID+".md") + "\tfull\n"
			wantErr := strings.ReplaceAll(c.warn, "~/", home+"/")
			if code != 0 || out != wantOut || errOut != wantErr {
				t.Errorf("code %d, stdout %q, stderr %q; want 0, %q, %q", code, out, errOut, wantOut, wantErr)
			}
		})
	}
}

// TestClaudeDirAsClaudeCodeFindsIt: Claude Code 2.1.332 neither expands
// a leading ~ of CLAUDE_CONFIG_DIR nor takes an empty one for unset (it
// then keeps its files under each session's working directory): bottled
// cannot follow it there, and says so, naming the variable.
func TestClaudeDirAsClaudeCodeFindsIt(t *testing.T) {
	for _, c := range []struct{ env, says string }{
		{"", "bottled: CLAUDE_CONFIG_DIR is set but empty: Claude Code then keeps its files in each session's working directory, where bottled cannot follow; unset it, or give it (or --claude-dir) Claude Code's directory\n"},
		{"~/cc", "bottled: CLAUDE_CONFIG_DIR ~/cc starts with ~, which Claude Code does not expand (it keeps its files in a directory named ~ in each session's working directory, where bottled cannot follow): give it (or --claude-dir) a full path\n"},
	} {
		e := newEnv(t, false)
		code, out, errOut := bottled(t, map[string]string{"CLAUDE_CONFIG_DIR": c.env}, "--data-dir", e.data, "status")
		if code != exitFailed || out != "" || errOut != c.says {
			t.Errorf("CLAUDE_CONFIG_DIR=%q: code %d, stdout %q, stderr %q; want 1 saying %q", c.env, code, out, errOut, c.says)
		}
	}
}

// TestEveryCommandRefusesFileForDirectory: a data directory or a Claude
// Code directory that is a file is told by every command in status's one
// line, exit 1, before it does anything; the hook still exits 0 and
// prints nothing on stdout.
func TestEveryCommandRefusesFileForDirectory(t *testing.T) {
	commands := [][]string{
		{"status"}, {"search", "x"}, {"sessions", "--all"}, {"index"}, {"run"}, {"show", "111111"},
		{"render", "111111"}, {"mcp"}, {"view", "--no-open"}, {"export", "111111"}, {"install", "--dry-run"},
	}
	for _, which := range []string{"data", "claude"} {
		for _, cmd := range commands {
			e := newEnv(t, false)
			file := filepath.Join(filepath.Dir(e.data), "afile")
			if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			want := "bottled: the data directory " + file + " is not a directory (a file): give --data-dir a directory\n"
			if which == "claude" {
				e.claude = file
				want = "bottled: Claude Code's directory " + file + " is not a directory (a file): give --claude-dir the directory Claude Code uses\n"
			} else {
				e.data = file
			}
			code, out, errOut := runStopped(t, append(e.flags(), cmd...)...)
			if code != exitFailed || out != "" || errOut != want {
				t.Errorf("%s dir a file, %v: code %d, stdout %q, stderr %q; want 1 saying %q", which, cmd, code, out, errOut, want)
			}
		}
	}
	e := newEnv(t, false)
	e.data = filepath.Join(filepath.Dir(e.data), "afile")
	if err := os.WriteFile(e.data, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "hook", "session-start")
	if code != 0 || out != "" || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("hook: code %d, stdout %q, stderr %q; want 0, nothing, the reason on stderr", code, out, errOut)
	}
}

// runStopped runs bottled in-process, stopping it after testDeadline: a
// command that should have refused at once (bottled run) must not hang
// the test when it does not.
func runStopped(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, append([]string{"bottled"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestStatusSaysWhereDirsCameFrom: status names where a directory came
// from when it is not the default, and says nothing of it when both are.
func TestStatusSaysWhereDirsCameFrom(t *testing.T) {
	e := newEnv(t, false)
	home := filepath.Join(filepath.Dir(e.claude), "home")
	settings := filepath.Join(home, ".claude-mem", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"CLAUDE_MEM_DATA_DIR": "`+e.data+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	os.Unsetenv("CLAUDE_CONFIG_DIR") // t.Setenv restores it
	t.Setenv("CLAUDE_MEM_DATA_DIR", "")
	for _, c := range []struct {
		args []string
		want string // the dirs line, "" for none
	}{
		{[]string{"--claude-dir", e.claude}, "dirs      claude dir " + e.claude + " (from --claude-dir) · data dir " + e.data + " (from CLAUDE_MEM_DATA_DIR in " + settings + ", as claude-mem finds it)"},
		{[]string{"--claude-dir", filepath.Join(home, ".claude"), "--data-dir", filepath.Join(home, ".claude-mem")}, "dirs      claude dir " + filepath.Join(home, ".claude") + " (from --claude-dir) · data dir " + filepath.Join(home, ".claude-mem") + " (from --data-dir)"},
		{nil, "dirs      data dir " + e.data + " (from CLAUDE_MEM_DATA_DIR in " + settings + ", as claude-mem finds it)"},
	} {
		code, out, errOut := bottled(t, nil, append(c.args, "status")...)
		var line string
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, "dirs ") {
				line = strings.TrimSuffix(l, "\n")
			}
		}
		if code != 0 || line != c.want {
			t.Errorf("%q: code %d, dirs line %q, want %q (stderr %q)", c.args, code, line, c.want, errOut)
		}
	}
	os.Remove(settings)
	if code, out, _ := bottled(t, nil, "status"); code != 0 || strings.Contains(out, "dirs ") {
		t.Errorf("default dirs: code %d, status says %q", code, out)
	}
}
