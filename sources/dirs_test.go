package sources

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindDirsSettings: CLAUDE_MEM_DATA_DIR in claude-mem's settings.json
// is read as claude-mem's resolveDataDir reads it, and what claude-mem
// would ignore or fail on is said in the Warning, the default used.
func TestFindDirsSettings(t *testing.T) {
	for _, c := range []struct {
		name     string
		settings string // "" for none; "DIR" for a directory in its place
		want     string // relative to the home directory
		warning  string // what the warning holds, "" for none
	}{
		{"none", "", ".claude-mem", ""},
		{"top level", `{"CLAUDE_MEM_DATA_DIR": "~/a"}`, "a", ""},
		{"nested", `{"env": {"CLAUDE_MEM_DATA_DIR": "~/b"}}`, "b", ""},
		{"env null: the top level", `{"env": null, "CLAUDE_MEM_DATA_DIR": "~/c"}`, "c", ""},
		{"env not an object", `{"env": "x", "CLAUDE_MEM_DATA_DIR": "~/c"}`, ".claude-mem", ""},
		{"an array", `["CLAUDE_MEM_DATA_DIR"]`, ".claude-mem", ""},
		{"false", `{"CLAUDE_MEM_DATA_DIR": false}`, ".claude-mem", ""},
		{"null file", `null`, ".claude-mem", "it is null, not an object"},
		{"not JSON", `CLAUDE_MEM_DATA_DIR=~/x`, ".claude-mem", "cannot be read (invalid character"},
		{"an object value", `{"CLAUDE_MEM_DATA_DIR": {}}`, ".claude-mem", "cannot be used (CLAUDE_MEM_DATA_DIR is an object, not a string)"},
		{"a directory", "DIR", ".claude-mem", "cannot be read (is a directory)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv(DataDirEnv, "")
			path := filepath.Join(home, ".claude-mem", "settings.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			switch c.settings {
			case "":
			case "DIR":
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(path, []byte(c.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			claude := "/claude"
			d, err := FindDirs(Given{Claude: &claude})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(home, c.want); d.Data.Path != want {
				t.Errorf("data dir %s, want %s", d.Data.Path, want)
			}
			if (c.warning == "") != (d.Warning == "") || !strings.Contains(d.Warning, c.warning) {
				t.Errorf("warning %q, want one with %q", d.Warning, c.warning)
			}
			if c.warning != "" && !strings.Contains(d.Warning, path) {
				t.Errorf("warning %q does not name %s", d.Warning, path)
			}
		})
	}
}

// TestHomeDirWithoutHOME: with HOME empty the home directory is the user
// database's, as Node's os.homedir() finds it.
func TestHomeDirWithoutHOME(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		t.Skipf("this user has no home directory in the user database: %v", err)
	}
	t.Setenv("HOME", "")
	if h, err := HomeDir(); err != nil || h != u.HomeDir {
		t.Errorf("HomeDir() = %q, %v; want %q", h, err, u.HomeDir)
	}
}
