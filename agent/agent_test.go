package agent

import (
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/safefile"
)

var update = flag.Bool("update", false, "rewrite the golden agent files in testdata/agent")

// TestAgentGolden compares the systemd unit and the LaunchAgent with the
// golden files, for a binary path that needs quoting in both.
func TestAgentGolden(t *testing.T) {
	cmd := []string{"/home/dev/my tools/bottled", "--claude-dir", "/home/dev/.claude", "--data-dir", "/home/dev/.claude-mem%x"}
	for _, tc := range []struct{ goos, golden string }{
		{"linux", "bottled.service"},
		{"darwin", "dev.bottled.plist"},
	} {
		t.Run(tc.goos, func(t *testing.T) {
			a := Agent{Command: cmd, Home: "/home/dev", DataDir: "/home/dev/.claude-mem%x", GOOS: tc.goos, UID: 501}
			got := a.Definition()
			path := filepath.Join("..", "testdata", "agent", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", tc.goos, path, got)
			}
			if !IsOurs([]byte(got)) {
				t.Errorf("definition lacks bottled's marker")
			}
			if tc.goos == "darwin" {
				dec := xml.NewDecoder(strings.NewReader(got))
				for {
					if _, err := dec.Token(); err == io.EOF {
						break
					} else if err != nil {
						t.Fatalf("plist is not well-formed XML: %v", err)
					}
				}
			}
		})
	}
	if _, err := (Agent{GOOS: "plan9", Command: cmd}).File(); err == nil {
		t.Errorf("an unsupported system got an agent file")
	}
}

// TestWriteAgentFile: the agent file is written 0600 whatever was there
// (a stale mode, a symbolic link), and never through a link.
func TestWriteAgentFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, file, outside string)
		err    string // "" when the write must succeed
	}{
		{"no file", func(*testing.T, string, string) {}, ""},
		{"a stale world-writable file", func(t *testing.T, file, _ string) {
			if err := os.WriteFile(file, []byte("# "+agentMarker+"\nold\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, 0o666); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a symbolic link out of the directory", func(t *testing.T, file, outside string) {
			if err := os.Symlink(outside, file); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			a := Agent{Command: []string{"/bin/bottled"}, Home: home, DataDir: filepath.Join(home, ".claude-mem"), GOOS: "linux"}
			file, _ := a.File()
			outside := filepath.Join(home, "elsewhere", "notes")
			for _, d := range []string{filepath.Dir(file), filepath.Dir(outside)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(outside, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.before(t, file, outside)
			_, err := a.Write()
			if b, _ := os.ReadFile(outside); string(b) != "mine\n" {
				t.Errorf("a file outside the agent's directory was written: %q", b)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err %v, want one that says %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			info, err := os.Lstat(file)
			if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
				t.Errorf("agent file %v (%v), want a regular 0600 file", info.Mode(), err)
			}
			if b, _ := os.ReadFile(file); string(b) != a.Definition() {
				t.Errorf("agent file holds %q", b)
			}
		})
	}
}

// TestWriteLogsDir: on macOS the LaunchAgent logs into the data
// directory's logs/, which Write makes owner-only; one that is a symbolic
// link is refused, what it points to left as it was.
func TestWriteLogsDir(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, logs, outside string)
		fails  bool
	}{
		{"no logs directory", func(*testing.T, string, string) {}, false},
		{"a world-readable one", func(t *testing.T, logs, _ string) {
			if err := os.Mkdir(logs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(logs, 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a symbolic link", func(t *testing.T, logs, outside string) {
			if err := os.Symlink(outside, logs); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			a := Agent{Command: []string{"/bin/bottled"}, Home: home, DataDir: filepath.Join(home, ".claude-mem"), GOOS: "darwin"}
			logs := filepath.Join(a.DataDir, "logs")
			outside := filepath.Join(home, "elsewhere")
			for _, d := range []string{a.DataDir, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.before(t, logs, outside)
			_, err := a.Write()
			if info, _ := os.Stat(outside); info.Mode().Perm() != 0o755 {
				t.Errorf("the link's target became %v", info.Mode().Perm())
			}
			if tc.fails {
				if !errors.Is(err, safefile.ErrLinkedDir) {
					t.Errorf("err %v, want the link refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info, err := os.Lstat(logs); err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
				t.Errorf("logs %v (%v), want a 0700 directory", info.Mode(), err)
			}
		})
	}
}
