package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/cmd/internal/binflags"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// TestExport: a session, named by the start of its id, exported as a
// standalone page (style inlined, no script) or as its bottle, rendered
// first since it had none; -o writes the file whole, 0600, and never
// replaces one that exists unless --force.
func TestExport(t *testing.T) {
	w := newWorld(t)
	w.appendTo(w.transcript("-home-dev-app", idApp), turn(idApp, "/home/dev/app", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), 1,
		"EXPORTED prompt <b>bold?</b>", "EXPORTED answer with `code`")...)
	dirs := []string{"--claude-dir", w.claude, "--data-dir", w.data}
	var out, errs bytes.Buffer
	if err := run(context.Background(), append(dirs, "export", idApp[:8]), &out, &errs); err != nil {
		t.Fatalf("export: %v (%s)", err, errs.String())
	}
	page := out.String()
	for _, want := range []string{"<!doctype html>", "<style>", "EXPORTED prompt &lt;b&gt;bold?&lt;/b&gt;", "<code>code</code>", "default-src 'none'"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "/assets/") {
		t.Error("the exported page loads or runs something")
	}
	bottle, err := os.ReadFile(filepath.Join(w.data, "bottles", idApp+".md"))
	if err != nil {
		t.Fatalf("export did not render the bottle first: %v", err)
	}
	file := filepath.Join(t.TempDir(), "session.md")
	if err := run(context.Background(), append(dirs, "export", "--format", "md", "-o", file, idApp), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, bottle) {
		t.Error("the markdown export is not the bottle")
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode: %v %v", fi.Mode(), err)
	}
	if err := os.WriteFile(file, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), append(dirs, "export", "-o", file, idApp), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "exists: --force replaces it") {
		t.Errorf("export over a file: %v", err)
	}
	if got, _ := os.ReadFile(file); string(got) != "mine" {
		t.Error("export replaced a file without --force")
	}
	if err := run(context.Background(), append(dirs, "export", "--force", "-o", file, idApp), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); !bytes.HasPrefix(got, []byte("<!doctype html>")) {
		t.Error("--force did not replace the file")
	}
	for _, args := range [][]string{{"export"}, {"export", "--format", "pdf", idApp}, {"view", "extra"}, {"view", "--port", "-1"}, {"frobnicate"}, {}} {
		if err := run(context.Background(), append(dirs, args...), io.Discard, io.Discard); !errors.As(err, new(binflags.UsageError)) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if err := run(context.Background(), []string{"-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestExportWithUnusablePatterns: a patterns file with a line that cannot
// be used does not stop an export: stderr says what is wrong, once, and
// the bottle is redacted with the rules that can be used.
func TestExportWithUnusablePatterns(t *testing.T) {
	w := patternedWorld(t)
	patterns := bottles.RulesFile(w.data)
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"--claude-dir", w.claude, "--data-dir", w.data, "export", "--format", "md", idApp}, &out, &errs); err != nil {
		t.Fatalf("export: %v (%s)", err, errs.String())
	}
	if !strings.Contains(out.String(), "PATTERNED answer") || strings.Contains(out.String(), "acme_0123456789abcdef") {
		t.Errorf("the export is not the bottle redacted by the usable pattern:\n%s", out.String())
	}
	if e := errs.String(); strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "bottled-view: warning: ") ||
		!strings.Contains(e, patterns) || !strings.Contains(e, "line 2") {
		t.Errorf("stderr %q, want one warning naming %s and line 2", e, patterns)
	}
}

// TestUsageInBottledsWords: bad usage of either command is one line, in
// bottled's words and --flag spelling, said by the caller alone, pointing
// to the help of the program the user ran: bottled-view's, or the bottled
// command's when bottled ran it.
func TestUsageInBottledsWords(t *testing.T) {
	testbin.CheckUsage[binflags.UsageError](t, []testbin.UsageCase{
		{"bottled-view", []string{"view", "--port", "abc"}, `--port takes a whole number, not "abc" (see bottled-view --help)`},
		{"bottled-view", []string{"view", "--no-open=perhaps"}, `--no-open takes true or false, not "perhaps" (see bottled-view --help)`},
		{"bottled-view", []string{"export", "--bogus", "abcdef"}, "unknown flag --bogus (see bottled-view --help)"},
		{"bottled-view", []string{"--frobnicate", "view"}, "unknown flag --frobnicate (see bottled-view --help)"},
		{"bottled", []string{"export", "-o"}, "-o needs a value (see bottled export --help)"},
		{"bottled", []string{"view", "-x"}, "unknown flag -x (see bottled view --help)"},
	}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, stdout, stderr)
	})
}

// TestExportOutIsNoFile: an -o that names no file that can be written is
// told in what it is and what to give instead, before anything is
// rendered, and nothing is written: a directory that does not exist, a
// directory (with --force too), a path under a file.
func TestExportOutIsNoFile(t *testing.T) {
	w := newWorld(t)
	w.appendTo(w.transcript("-home-dev-app", idApp), turn(idApp, "/home/dev/app", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), 1,
		"OUT prompt", "OUT answer")...)
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "nodir")
	for _, c := range []struct {
		out   string
		force bool
		want  string
	}{
		{filepath.Join(missing, "x.html"), false, missing + " does not exist: make it or give -o a path in a directory that does"},
		{filepath.Join(missing, "x.html"), true, missing + " does not exist: make it or give -o a path in a directory that does"},
		{root, false, root + " is a directory: give -o a file's path"},
		{root, true, root + " is a directory: give -o a file's path"},
		{filepath.Join(file, "x.html"), true, file + " is not a directory: give -o a path in a directory"},
	} {
		args := []string{"--claude-dir", w.claude, "--data-dir", w.data, "export", "-o", c.out}
		if c.force {
			args = append(args, "--force")
		}
		err := run(context.Background(), append(args, idApp), io.Discard, io.Discard)
		if err == nil || err.Error() != c.want {
			t.Errorf("-o %s (force %v): %v, want %q", c.out, c.force, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want only the file", root, len(entries))
	}
	if _, err := os.Stat(filepath.Join(w.data, "bottles", idApp+".md")); err == nil {
		t.Error("the bottle was rendered for an export that cannot be written")
	}
}

// TestFlagsAfterArguments: as bottled's commands do, bottled-view's take
// their flags before or after SESSION; after "--" every word is an
// argument.
func TestFlagsAfterArguments(t *testing.T) {
	w := newWorld(t)
	w.appendTo(w.transcript("-home-dev-app", idApp), turn(idApp, "/home/dev/app", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), 1,
		"AFTER prompt", "AFTER answer")...)
	dirs := []string{"--claude-dir", w.claude, "--data-dir", w.data}
	file := filepath.Join(t.TempDir(), "x.md")
	if err := run(context.Background(), append(dirs, "export", idApp[:8], "--format", "md", "-o", file), io.Discard, io.Discard); err != nil {
		t.Fatalf("export SESSION --format md -o FILE: %v", err)
	}
	if got, _ := os.ReadFile(file); !bytes.Contains(got, []byte("AFTER answer")) {
		t.Errorf("the export is not the bottle:\n%s", got)
	}
	err := run(context.Background(), append(dirs, "export", "--", idApp[:8], "--format", "md"), io.Discard, io.Discard)
	if !errors.As(err, new(binflags.UsageError)) || err.Error() != "export takes exactly one SESSION (got 3 arguments)" {
		t.Errorf(`export -- SESSION --format md: %v, want three arguments`, err)
	}
}

// TestRefusesFileForDirectory: view and export given a data directory or
// a Claude Code directory that is a file say so, in the line every
// bottled command says it in, and exit 1, before they do anything.
func TestRefusesFileForDirectory(t *testing.T) {
	for _, flag := range []string{"--data-dir", "--claude-dir"} {
		for _, cmd := range [][]string{{"export", "111111"}, {"view", "--no-open"}} {
			args, file := testbin.FileForDir(t, flag)
			var out, errOut bytes.Buffer
			err := run(context.Background(), append(args, cmd...), &out, &errOut)
			code := binflags.Exit("bottled-view", err, &errOut)
			if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), file+" is not a directory (a file): give "+flag) ||
				strings.Count(errOut.String(), "\n") != 1 {
				t.Errorf("%s a file, %v: exit %d, stdout %q, stderr %q", flag, cmd, code, out.String(), errOut.String())
			}
		}
	}
}
