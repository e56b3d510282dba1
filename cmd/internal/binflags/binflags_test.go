package binflags

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/sources"
)

// TestParse: the shared flags as each binary is called, the environment
// below the flags, --version done without directories, -h the usage and
// the flags on stdout, bad usage a UsageError.
func TestParse(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(sources.ClaudeDirEnv, "/env/claude")
	t.Setenv(sources.DataDirEnv, "")
	homeData := filepath.Join(home, ".claude-mem")
	cwd, _ := filepath.Abs(".")
	for _, c := range []struct {
		args    []string
		want    Dirs
		rest    []string
		ok      bool
		usage   bool
		help    bool
		version bool
	}{
		{args: nil, want: Dirs{"/env/claude", homeData}, ok: true},
		{args: []string{"--claude-dir", "c", "--data-dir=/d", "rest"}, want: Dirs{filepath.Join(cwd, "c"), "/d"}, rest: []string{"rest"}, ok: true},
		{args: []string{"--data-dir=~/d"}, want: Dirs{"/env/claude", filepath.Join(home, "d")}, ok: true},
		{args: []string{"--version"}, version: true},
		{args: []string{"--data-dir", ""}, usage: true},
		{args: []string{"--frobnicate"}, usage: true},
		{args: []string{"-h"}, help: true},
	} {
		var out bytes.Buffer
		s := New("bottled-x", "x", "usage: bottled-x\n\n")
		d, ok, err := s.Parse(c.args, &out, io.Discard)
		if d != c.want || ok != c.ok {
			t.Errorf("%q: %+v %v, want %+v %v", c.args, d, ok, c.want, c.ok)
		}
		if got := errors.As(err, new(UsageError)); got != c.usage {
			t.Errorf("%q: %v, usage error %v", c.args, err, c.usage)
		}
		if got := errors.Is(err, flag.ErrHelp); got != c.help {
			t.Errorf("%q: %v, help %v", c.args, err, c.help)
		}
		if c.help && (!strings.HasPrefix(out.String(), "usage: bottled-x\n\n") || !strings.Contains(out.String(), "\n   --data-dir string  ")) {
			t.Errorf("-h says %q, want the usage, then the flags", out.String())
		}
		if got := strings.HasPrefix(out.String(), "bottled-x version "); got != c.version {
			t.Errorf("%q: printed %q", c.args, out.String())
		}
		if c.ok && (err != nil || !slices.Equal(s.Args(), c.rest)) {
			t.Errorf("%q: %v, args left %q", c.args, err, s.Args())
		}
	}
}

// TestExit: 0 done or --help, 2 bad usage, 1 not done; the error said in
// one line after the binary's name.
func TestExit(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		said string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{Usagef("give a command: %s", "view or export"), 2, "bottled-x: give a command: view or export\n"},
		{fmt.Errorf("wrapped: %w", AsUsage(errors.New("bad flag"))), 2, "bottled-x: wrapped: bad flag\n"},
		{errors.New("disk full"), 1, "bottled-x: disk full\n"},
	} {
		var stderr bytes.Buffer
		if code := Exit("bottled-x", c.err, &stderr); code != c.code || stderr.String() != c.said {
			t.Errorf("%v: exit %d saying %q, want %d saying %q", c.err, code, stderr.String(), c.code, c.said)
		}
	}
}

// TestReword: each of the flag package's errors, in bottled's words, for
// the program the user ran: the binary, or bottled, which runs it with
// argv[0] "bottled".
func TestReword(t *testing.T) {
	testbin.CheckUsage[UsageError](t, []testbin.UsageCase{
		{"bottled-x", []string{"--bogus"}, "unknown flag --bogus (see bottled-x --help)"},
		{"/opt/bin/bottled-x", []string{"-q"}, "unknown flag -q (see bottled-x --help)"},
		{"bottled", []string{"--bogus"}, "unknown flag --bogus (see bottled x --help)"},
		{"/home/me/bin/bottled", []string{"-n"}, "-n needs a whole number (see bottled x --help)"},
		{"bottled", []string{"--every", "soon"}, `--every takes a duration such as 1.5s, 30s or 5m, not "soon" (see bottled x --help)`},
		{"bottled", []string{"-n", "many"}, `-n takes a whole number, not "many" (see bottled x --help)`},
		{"bottled", []string{"-n", "99999999999999999999"}, `-n takes a whole number, not "99999999999999999999" (see bottled x --help)`},
		{"bottled", []string{"--version=maybe"}, `--version takes true or false, not "maybe" (see bottled x --help)`},
		{"bottled", []string{"--claude-dir"}, "--claude-dir needs a value (see bottled x --help)"},
		{"bottled", []string{"---x"}, `"---x" is no flag: put it after -- to give it as an argument (see bottled x --help)`},
	}, func(args []string, stdout, stderr io.Writer) error {
		s := New("bottled-x", "x", "usage: bottled-x\n\n")
		s.Int("n", 0, "how many")
		s.Duration("every", 0, "how often")
		_, _, err := s.Parse(args, stdout, stderr)
		return err
	})
}

// TestParseCommand: a command's flags before and after its arguments;
// after "--", every word is an argument.
func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		args  []string
		words []string
		o     string
		force bool
	}{
		{[]string{"id"}, []string{"id"}, "", false},
		{[]string{"-o", "f", "id"}, []string{"id"}, "f", false},
		{[]string{"id", "-o", "f", "--force"}, []string{"id"}, "f", true},
		{[]string{"a", "--force", "b"}, []string{"a", "b"}, "", true},
		{[]string{"--force", "--", "-o", "x"}, []string{"-o", "x"}, "", true},
		{[]string{"a", "--", "--force"}, []string{"a", "--force"}, "", false},
		{nil, nil, "", false},
	} {
		s := New("bottled-x", "", "usage: bottled-x\n\n")
		fs := s.Command("export")
		o := fs.String("o", "", "the file")
		force := fs.Bool("force", false, "replace it")
		words, err := s.ParseCommand(fs, c.args, io.Discard)
		if err != nil || !slices.Equal(words, c.words) || *o != c.o || *force != c.force {
			t.Errorf("%q: %q -o %q --force %v, %v; want %q -o %q --force %v", c.args, words, *o, *force, err, c.words, c.o, c.force)
		}
	}
}

// TestCheckDirs: a directory that is a file, or under one, is told in one
// message that names it and how to give it, by where it came from; one
// that does not exist yet is fine.
func TestCheckDirs(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	claude, data := filepath.Join(root, "claude"), filepath.Join(root, "mem")
	settings := "/h/.claude-mem/settings.json"
	for _, c := range []struct {
		claude, data sources.Dir
		want         string // "" for none
	}{
		{sources.Dir{Path: claude}, sources.Dir{Path: data}, ""},
		{sources.Dir{Path: claude}, sources.Dir{Path: file, From: sources.FromFlag, Where: "--data-dir"},
			"the data directory " + file + " is not a directory (a file): give --data-dir a directory"},
		{sources.Dir{Path: claude}, sources.Dir{Path: file, From: sources.FromSettings, Where: settings},
			"the data directory " + file + " is not a directory (a file): give CLAUDE_MEM_DATA_DIR in " + settings + " (or --data-dir) a directory"},
		{sources.Dir{Path: claude}, sources.Dir{Path: filepath.Join(file, "mem")},
			"the data directory " + filepath.Join(file, "mem") + " cannot be made: " + file + " is not a directory (a file): give --data-dir a directory, or move what is there away"},
		{sources.Dir{Path: file, From: sources.FromEnv, Where: sources.ClaudeDirEnv}, sources.Dir{Path: data},
			"Claude Code's directory " + file + " is not a directory (a file): give CLAUDE_CONFIG_DIR (or --claude-dir) the directory Claude Code uses"},
		{sources.Dir{Path: root}, sources.Dir{Path: data}, ""},
	} {
		err := CheckDirs(sources.Dirs{Claude: c.claude, Data: c.data})
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%+v %+v: %v, want %q", c.claude, c.data, err, c.want)
		}
	}
}
