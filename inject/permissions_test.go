package inject

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAccessRule(t *testing.T) {
	tests := []struct{ dir, home, want string }{
		{"/home/me/.claude-mem/bottles", "/home/me", "Read(~/.claude-mem/bottles/**)"},
		{"/home/me/.claude-mem/bottles/", "/home/me/", "Read(~/.claude-mem/bottles/**)"},
		{"/srv/mem/bottles", "/home/me", "Read(//srv/mem/bottles/**)"},
		{"/home/meme/bottles", "/home/me", "Read(//home/meme/bottles/**)"},
		{"/srv/mem/bottles", "", "Read(//srv/mem/bottles/**)"},
		{"/srv/[x]/bottles", "/home/me", ""},
		{"/home/me/data (old)/bottles", "/home/me", ""},
	}
	for _, tc := range tests {
		if got := (ReadAccess{Dir: tc.dir, Home: tc.home}).Rule(); got != tc.want {
			t.Errorf("Rule(%s, home %s) = %q, want %q", tc.dir, tc.home, got, tc.want)
		}
	}
}

func TestCheckInstallation(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".claude-mem")
	access := ReadAccess{Dir: filepath.Join(data, "bottles"), Home: home}
	hooks := func(dataDir string) string {
		out, _, err := RegisterHooks(nil, Registration{Command: []string{"/bin/bottled", "--data-dir", dataDir}})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	installed := func() string {
		out, _, _, err := GrantRead([]byte(hooks(data)), access, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	tests := []struct {
		name     string
		settings string // "-" for no file
		ok       bool
		problem  string
	}{
		{"installed", installed(), true, ""},
		{"no settings file", "-", false, "not registered"},
		{"hooks without the read rule", hooks(data), false, "permissions.allow has no Read(~/.claude-mem/bottles/**)"},
		{"hooks for another data directory", strings.ReplaceAll(installed(), data, filepath.Join(home, "old")), false, "registered for the data directory"},
		{"a rule for all reads", strings.Replace(hooks(data), "{", `{"permissions":{"allow":["Read"]},`, 1), true, ""},
		{"blocked reads with only a rule", strings.Replace(installed(), `"allow"`, `"blockReadsOutsideWorkingDirectories": true, "allow"`, 1), false, "blockReadsOutsideWorkingDirectories is set"},
		{"blocked reads with the directory", strings.Replace(hooks(data), "{", `{"permissions":{"blockReadsOutsideWorkingDirectories":true,"additionalDirectories":["~/.claude-mem"]},`, 1), true, ""},
		{"malformed", "{", false, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if tc.settings != "-" {
				if err := os.WriteFile(path, []byte(tc.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			in := CheckInstallation(path, data, home)
			if (in.Problem == "") != tc.ok || !strings.Contains(in.Problem, tc.problem) {
				t.Errorf("problem %q, want ok=%v and %q\n%s", in.Problem, tc.ok, tc.problem, tc.settings)
			}
		})
	}
}
