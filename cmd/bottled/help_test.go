package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/index"
)

// TestEveryCommandHasHelp: every command that runs something has its long
// description in help/, `bottled <command> --help` prints it, and no file
// there is left over from a command that is gone.
func TestEveryCommandHasHelp(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("help", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no help files: %v", err)
	}
	unused := map[string]string{} // the file of each text no command has yet
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		unused[help(string(text))] = f
	}
	delete(unused, help(bottledHelp)) // the root's, checked by TestFlagsAnywhere's --help
	for _, c := range subcommands() {
		if len(c.Commands) > 0 {
			continue // its help lists its subcommands
		}
		if c.Description == "" {
			t.Errorf("%s has no help/%s.txt", c.Name, c.Name)
			continue
		}
		if f, ok := unused[c.Description]; !ok || f != filepath.Join("help", c.Name+".txt") {
			t.Errorf("%s's description is not help/%s.txt's text (%q)", c.Name, c.Name, f)
		}
		delete(unused, c.Description)
		var out bytes.Buffer
		if code := run(context.Background(), []string{"bottled", c.Name, "--help"}, strings.NewReader(""), &out, &out); code != 0 {
			t.Errorf("%s --help: exit %d: %s", c.Name, code, out.String())
		}
		if first, _, _ := strings.Cut(c.Description, "\n"); !strings.Contains(out.String(), first) {
			t.Errorf("%s --help does not say %q:\n%s", c.Name, first, out.String())
		}
	}
	for _, f := range unused {
		t.Errorf("%s is no command's", f)
	}
}

// TestIndexHelpNamesItsDirectory: `bottled index --help` and README name
// the index's directory of this format (index.Dir), which a format's
// change renames.
func TestIndexHelpNamesItsDirectory(t *testing.T) {
	name := filepath.Base(index.Dir("/d")) + "/"
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"bottled index --help": indexHelp, "README": string(readme)} {
		if !strings.Contains(text, "<data-dir>/"+name) {
			t.Errorf("%s does not name the index's directory <data-dir>/%s", what, name)
		}
	}
}
