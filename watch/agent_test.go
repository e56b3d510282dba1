package watch

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
