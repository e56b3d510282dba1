package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// argsEnv is a HOME, a Claude config dir C with the test session's
// transcript and a data dir D with its bottle, and a fake installed binary.
// The environment variables point elsewhere, so a command that finds the
// session got its directories from the flags.
type argsEnv struct {
	claude, data, transcript, bin string
	exec                          *[]string // what `bottled mcp` ran: the path, then argv
}

func newArgsEnv(t *testing.T) argsEnv {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(root, "env-claude"))
	t.Setenv("CLAUDE_MEM_DATA_DIR", filepath.Join(root, "env-mem"))
	t.Setenv("PATH", t.TempDir()) // no claude, no systemctl: install only says what it would run
	e := argsEnv{claude: filepath.Join(root, "claude"), data: filepath.Join(root, "mem"), bin: filepath.Join(root, "bin", "bottled")}
	e.transcript = filepath.Join(e.claude, "projects", "-home-dev-app", sessionID+".jsonl")
	if err := os.MkdirAll(filepath.Dir(e.transcript), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.transcript, []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(e.bin), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{e.bin, filepath.Join(filepath.Dir(e.bin), mcpBinary), filepath.Join(filepath.Dir(e.bin), viewBinary)} {
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	oldExe, oldExec := executable, execServer
	executable = func() (string, error) { return e.bin, nil }
	e.exec = new([]string)
	execServer = func(path string, argv, _ []string) error { *e.exec = append([]string{path}, argv...); return nil }
	t.Cleanup(func() { executable, execServer = oldExe, oldExec })
	var out bytes.Buffer
	if code := run(context.Background(), []string{"bottled", "--claude-dir", e.claude, "--data-dir", e.data, "render", sessionID},
		strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("render: %s", out.String())
	}
	// Built now, so that a search need not say it builds it.
	if code := run(context.Background(), []string{"bottled", "--data-dir", e.data, "index"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("index: %s", out.String())
	}
	return e
}

// expand replaces {C}, {D}, {T} and {ID} with the environment's Claude
// dir, data dir, transcript and session id.
func (e argsEnv) expand(s string) string {
	return strings.NewReplacer("{C}", e.claude, "{D}", e.data, "{T}", e.transcript, "{ID}", sessionID).Replace(s)
}

// searchHits is the number of hits in search --json output, or -1 when
// out is not a JSON array of hits.
func searchHits(out string) int {
	var hits []hitJSON
	if json.Unmarshal([]byte(out), &hits) != nil || !strings.HasPrefix(out, "[") {
		return -1
	}
	return len(hits)
}

// TestFlagsAnywhere: every command takes its flags, and the global ones,
// anywhere before a "--", before or after its arguments, as --flag value or
// --flag=value; after "--", everything is an argument. Flags beat the
// environment, which beats the defaults.
func TestFlagsAnywhere(t *testing.T) {
	const (
		C = "--claude-dir={C}"
		D = "--data-dir={D}"
	)
	compact := `{"session_id":"{ID}","transcript_path":"{T}","hook_event_name":"SessionStart","source":"compact"}`
	clear := `{"session_id":"{ID}","reason":"clear"}`
	tests := []struct {
		name   string
		args   []string
		env    map[string]string // beside newArgsEnv's
		stdin  string
		code   int
		stdout []string // substrings of stdout; none: stdout is empty
		stderr []string // substrings of stderr; none: stderr is empty
		json   bool     // stdout is search --json's array…
		hits   int      // …of this many hits
		check  func(t *testing.T, e argsEnv, stdout string)
	}{
		// search: "flag" is in the user's message and the assistant's.
		{name: "search, flags first", args: []string{C, D, "search", "--all", "--json", "flag"}, json: true, hits: 2},
		{name: "search, flags after the query", args: []string{"search", "flag", "--all", "--json", C, D}, json: true, hits: 2},
		{name: "search, flags between words", args: []string{"search", "--all", "add", "--json", "flag", "--claude-dir", "{C}", "--data-dir", "{D}"}, json: true, hits: 1},
		{name: "search --limit N after the query", args: []string{"search", "flag", "--all", "--limit", "1", "--json", C, D}, json: true, hits: 1},
		{name: "search --limit=N after the query", args: []string{"search", "flag", "--json", "--limit=1", "--all", C, D}, json: true, hits: 1},
		{name: "search, bool flag with a value", args: []string{"search", "flag", "--all=true", "--json=true", "--archived=false", C, D}, json: true, hits: 2},
		{name: "search, repeated words", args: []string{"search", "flag", "flag", "--all", "--json", C, D}, json: true, hits: 2},
		{name: "search, a phrase", args: []string{"search", `"add a flag"`, "--all", "--json", C, D}, json: true, hits: 1},
		{name: "search, table after the query", args: []string{"search", "added", "--all", C, D},
			stdout: []string{"WHEN", "PROJECT", "RENDER-A1 Added --flag."}},
		{name: "search, words after --", args: []string{"search", "--all", "--json", C, D, "--", "added", "--flag"}, json: true, hits: 1},
		{name: "search -- --json searches for json", args: []string{"search", "--all", C, D, "--", "--json"},
			code: exitFailed, stderr: []string{"no hits"}},
		{name: "search, a word with a dash after --", args: []string{"search", "--all", "--json", C, D, "--", "-5"}, code: exitFailed, json: true},
		{name: "search, -5 ends the flags", args: []string{"search", "--all", "--json", C, D, "added", "-5", "--json"}, code: exitFailed, json: true},
		{name: "search, -x is a flag", args: []string{"search", "--all", C, D, "added", "-x"},
			code: exitUsage, stderr: []string{"bottled: unknown flag -x (see bottled search --help)"}},
		{name: "search, without --all after the query", args: []string{"search", "flag", "--json", C, D}, code: exitFailed, json: true},
		{name: "search, unknown flag after the query", args: []string{"search", "flag", "--bogus", C, D},
			code: exitUsage, stderr: []string{"bottled: unknown flag --bogus"}},
		{name: "search --limit without its value", args: []string{"search", "flag", C, D, "--limit"},
			code: exitUsage, stderr: []string{"bottled: --limit needs a whole number (see bottled search --help)"}},
		{name: "search, no query but flags", args: []string{"search", "--all", "--json", C, D},
			code: exitUsage, stderr: []string{"bottled: search takes a QUERY"}},
		{name: "search --help after the query", args: []string{"search", "flag", "--help"},
			stdout: []string{"bottled search", "--limit N"}},
		{name: "search -h after the query", args: []string{"search", "flag", "-h"},
			stdout: []string{"bottled search", "--limit N"}},

		// status: the session is found only in C; the database only in D.
		{name: "status, global flags after the command", args: []string{"status", "--json", "--data-dir", "{D}", "--claude-dir", "{C}"},
			stdout: []string{`"source": "disk"`, `"session": "{ID}"`, `"path": "{D}/claude-mem.db"`}},
		{name: "status, global flags on both sides", args: []string{C, "status", D, "--json"},
			stdout: []string{`"session": "{ID}"`, `"path": "{D}/claude-mem.db"`}},
		{name: "status, the later of two --data-dir wins", args: []string{"--data-dir", "/nonexistent", C, "status", D, "--json"},
			stdout: []string{`"path": "{D}/claude-mem.db"`}},
		{name: "status, flags beat the environment", args: []string{"status", "--json", C, D},
			env:    map[string]string{"CLAUDE_CONFIG_DIR": "/nonexistent/claude", "CLAUDE_MEM_DATA_DIR": "/nonexistent/mem"},
			stdout: []string{`"session": "{ID}"`, `"path": "{D}/claude-mem.db"`}},
		{name: "status, the environment beats the defaults", args: []string{"status", "--json"},
			env:    map[string]string{"CLAUDE_CONFIG_DIR": "{C}", "CLAUDE_MEM_DATA_DIR": "{D}"},
			stdout: []string{`"session": "{ID}"`, `"path": "{D}/claude-mem.db"`}},
		{name: "status, an argument", args: []string{"status", "extra", C, D},
			code: exitUsage, stderr: []string{"bottled: status takes no arguments"}},
		{name: "status, unknown flag", args: []string{"status", D, "--bogus"},
			code: exitUsage, stderr: []string{"bottled: unknown flag --bogus"}},

		// render: --stdout prints the bottle; without it, its path.
		{name: "render ID --stdout", args: []string{"render", "{ID}", "--stdout", C, D},
			stdout: []string{"# Session bottle", "RENDER-A1 Added --flag."}},
		{name: "render --stdout ID, global flags after", args: []string{"render", "--stdout", "{ID}", "--claude-dir", "{C}", "--data-dir", "{D}"},
			stdout: []string{"# Session bottle"}},
		{name: "render ID --transcript FILE", args: []string{"render", "{ID}", "--transcript", "{T}", "--data-dir", "{D}"},
			stdout: []string{"{D}/bottles/{ID}.md\tfull"}},
		{name: "render ID, dirs after", args: []string{"render", "{ID}", D, C},
			stdout: []string{"{D}/bottles/{ID}.md\tfull\t(unchanged"}},
		{name: "render, two ids around a flag", args: []string{"render", "{ID}", "--stdout", "other", C, D},
			code: exitUsage, stderr: []string{"bottled: render takes exactly one SESSION_ID (got 2 arguments)"}},
		{name: "render, unknown flag after the id", args: []string{"render", "{ID}", "--nope", C, D},
			code: exitUsage, stderr: []string{"bottled: unknown flag --nope (see bottled render --help)"}},

		// index
		{name: "index --data-dir D --rebuild", args: []string{"index", "--data-dir", "{D}", "--rebuild"},
			stdout: []string{"rebuilt in", "index     {D}/bottled-index-v", "holds     1 bottle of 1 session"}},
		{name: "index, an argument among flags", args: []string{"index", "--rebuild", "extra", D},
			code: exitUsage, stderr: []string{"bottled: index takes no arguments"}},

		// install and uninstall, dry runs: they name the dirs of the flags.
		{name: "install --dry-run, dirs after", args: []string{"install", C, "--dry-run", D},
			stdout: []string{"(dry run) hooks: would register", "{C}/settings.json", "--data-dir {D}"},
			check: func(t *testing.T, e argsEnv, _ string) {
				if _, err := os.Stat(filepath.Join(e.claude, "settings.json")); !os.IsNotExist(err) {
					t.Errorf("a dry run wrote settings.json: %v", err)
				}
			}},
		{name: "install --dry-run --no-start", args: []string{"install", "--no-start", D, C, "--dry-run"},
			stdout: []string{"(dry run)", "{C}/settings.json"}},
		{name: "uninstall --dry-run, dirs after", args: []string{"uninstall", "--dry-run", C, D},
			stdout: []string{"(dry run) hooks: none registered in {C}/settings.json", "bottles are kept in {D}/bottles"}},
		{name: "install, an argument", args: []string{"install", "--dry-run", "now", C, D},
			code: exitUsage, stderr: []string{"bottled: install takes no arguments"}},

		// hooks: exit 0 whatever the flags.
		{name: "hook session-start, dirs after", args: []string{"hook", "session-start", "--claude-dir", "{C}", "--data-dir", "{D}"}, stdin: compact,
			stdout: []string{`"hookEventName":"SessionStart"`, "{D}/bottles/{ID}.md"}},
		{name: "hook session-start, flags everywhere", args: []string{C, "hook", D, "session-start", "--timeout=3s", "--mcp-tools"}, stdin: compact,
			stdout: []string{"{D}/bottles/{ID}.md", "mcp__bottled__read"}},
		{name: "hook session-start, unknown flag", args: []string{"hook", "session-start", C, D, "--frobnicate"}, stdin: compact,
			stderr: []string{"bottled: unknown flag --frobnicate (see bottled hook session-start --help)"}},
		{name: "hook session-end, dirs after", args: []string{"hook", "session-end", D, C}, stdin: clear,
			stderr: []string{"archived bottle of cleared session", "to={D}/bottles/archive/"},
			check: func(t *testing.T, e argsEnv, _ string) {
				if archived, _ := filepath.Glob(filepath.Join(e.data, "bottles", "archive", "*-"+sessionID+".1.md")); len(archived) != 1 {
					t.Errorf("session-end archived %d bottles in %s, want 1", len(archived), e.data)
				}
			}},

		// mcp runs bottled-mcp with the directories it was given.
		{name: "mcp, dirs after", args: []string{"mcp", "--data-dir", "{D}", "--claude-dir", "{C}"},
			check: func(t *testing.T, e argsEnv, _ string) {
				want := []string{filepath.Join(filepath.Dir(e.bin), mcpBinary), "bottled", "--claude-dir", e.claude, "--data-dir", e.data}
				if !slices.Equal(*e.exec, want) {
					t.Errorf("mcp ran %q, want %q", *e.exec, want)
				}
			}},
		{name: "mcp, dirs on both sides", args: []string{D, "mcp", C},
			check: func(t *testing.T, e argsEnv, _ string) {
				want := []string{filepath.Join(filepath.Dir(e.bin), mcpBinary), "bottled", "--claude-dir", e.claude, "--data-dir", e.data}
				if !slices.Equal(*e.exec, want) {
					t.Errorf("mcp ran %q, want %q", *e.exec, want)
				}
			}},
		{name: "mcp, an argument", args: []string{"mcp", "x", C, D}, code: exitUsage, stderr: []string{"bottled: mcp takes no arguments"}},

		// view and export run bottled-view, with the same directories.
		{name: "view, flags after", args: []string{"view", "--no-open", "--port", "8123", D, C},
			check: func(t *testing.T, e argsEnv, _ string) {
				want := []string{filepath.Join(filepath.Dir(e.bin), viewBinary), "bottled", "--claude-dir", e.claude, "--data-dir", e.data,
					"view", "--port", "8123", "--no-open"}
				if !slices.Equal(*e.exec, want) {
					t.Errorf("view ran %q, want %q", *e.exec, want)
				}
			}},
		{name: "view, a bad port", args: []string{"view", "--port", "70000", C, D}, code: exitUsage,
			stderr: []string{"bottled: --port must be from 0 to 65535"}},
		{name: "export, the start of an id", args: []string{"export", sessionID[:8], "--format", "md", C, D},
			check: func(t *testing.T, e argsEnv, _ string) {
				want := []string{filepath.Join(filepath.Dir(e.bin), viewBinary), "bottled", "--claude-dir", e.claude, "--data-dir", e.data,
					"export", "--format", "md", "--", sessionID}
				if !slices.Equal(*e.exec, want) {
					t.Errorf("export ran %q, want %q", *e.exec, want)
				}
			}},
		// bottled-view checks the file -o names (TestExportChecksItsFileOnce).
		{name: "export -o, --force", args: []string{"export", sessionID, "-o", "-page.html", "--force", C, D},
			check: func(t *testing.T, e argsEnv, _ string) {
				want := []string{filepath.Join(filepath.Dir(e.bin), viewBinary), "bottled", "--claude-dir", e.claude, "--data-dir", e.data,
					"export", "--format", "html", "-o=-page.html", "--force", "--", sessionID}
				if !slices.Equal(*e.exec, want) {
					t.Errorf("export ran %q, want %q", *e.exec, want)
				}
			}},
		{name: "export, a bad format", args: []string{"export", sessionID, "--format", "pdf", C, D}, code: exitUsage,
			stderr: []string{`bottled: --format must be html or md, not "pdf"`}},
		{name: "export, no session", args: []string{"export", C, D}, code: exitUsage,
			stderr: []string{"bottled: export takes exactly one SESSION"}},

		// run: checked before it starts.
		{name: "run, a bad flag value after the dirs", args: []string{"run", C, D, "--log-format", "yaml"},
			code: exitUsage, stderr: []string{`bottled: --log-format must be text or json, not "yaml"`}},
		{name: "run, an argument", args: []string{"run", "now", C, D, "--verbose"},
			code: exitUsage, stderr: []string{"bottled: run takes no arguments"}},

		{name: "unknown command", args: []string{C, "frobnicate", D}, code: exitUsage, stderr: []string{`bottled: unknown command "frobnicate"`}},
		{name: "--version", args: []string{"--version"}, stdout: []string{"bottled version "}},
		{name: "--help says where flags go", args: []string{"--help"}, stdout: []string{"Flags may come before or after a command's arguments", `"--" ends the flags`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newArgsEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, e.expand(v))
			}
			args := []string{"bottled"}
			for _, a := range tc.args {
				args = append(args, e.expand(a))
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(e.expand(tc.stdin)), &stdout, &stderr)
			out, errOut := stdout.String(), stderr.String()
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout %q\nstderr %q", code, tc.code, out, errOut)
			}
			switch {
			case tc.json && searchHits(out) != tc.hits:
				t.Errorf("stdout %q: want a JSON array of %d hits", out, tc.hits)
			case !tc.json && len(tc.stdout) == 0 && out != "":
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, e.expand(want)) {
					t.Errorf("stdout lacks %q:\n%s", e.expand(want), out)
				}
			}
			if len(tc.stderr) == 0 && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, e.expand(want)) {
					t.Errorf("stderr %q lacks %q", errOut, e.expand(want))
				}
			}
			if tc.code == exitUsage && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("a usage error of more than one line: %q", errOut)
			}
			if tc.check != nil {
				tc.check(t, e, out)
			}
		})
	}
}

// TestMissingBinaryBeside: mcp, view and export run nothing when the
// binary they run is not beside bottled, and say how to build it.
func TestMissingBinaryBeside(t *testing.T) {
	e := newArgsEnv(t)
	for _, bin := range []string{mcpBinary, viewBinary} {
		if err := os.Remove(filepath.Join(filepath.Dir(e.bin), bin)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		bin  string
	}{{[]string{"mcp"}, mcpBinary}, {[]string{"view"}, viewBinary}, {[]string{"export", sessionID}, viewBinary}} {
		code, _, stderr := bottled(t, nil, append(dirFlags(e.claude, e.data), c.args...)...)
		if code != exitFailed || !strings.Contains(stderr, filepath.Join(filepath.Dir(e.bin), c.bin)+" is missing") ||
			!strings.Contains(stderr, "./cmd/bottled ./cmd/"+c.bin) || len(*e.exec) > 0 {
			t.Errorf("%q: exit %d, ran %q, stderr %q; want 1, nothing run, how to build %s", c.args, code, *e.exec, stderr, c.bin)
		}
	}
}
