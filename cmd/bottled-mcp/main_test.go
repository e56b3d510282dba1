package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/cmd/internal/binflags"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// TestServesToolsOverStdio runs the server as Claude Code does, on pipes:
// initialize, then tools/list names the three tools.
func TestServesToolsOverStdio(t *testing.T) {
	root := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--claude-dir", filepath.Join(root, "claude"), "--data-dir", filepath.Join(root, "mem")}, inR, outW, io.Discard)
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	call := func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to %s: %v", msg, err)
		}
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil || v["result"] == nil {
			t.Fatalf("answer %s: %v", line, err)
		}
		return v
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	tools := call(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	b, _ := json.Marshal(tools)
	for _, name := range []string{`"read"`, `"search"`, `"sessions"`} {
		if !bytes.Contains(b, []byte(name)) {
			t.Errorf("tools/list lacks %s: %s", name, b)
		}
	}
	inW.Close()
	if err := <-done; err != nil && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "closed") {
		t.Errorf("server ended with %v", err)
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, nil, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "bottled-mcp version ") {
		t.Errorf("--version: %q, %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"--frobnicate"}, nil, io.Discard, io.Discard); !errors.As(err, new(binflags.UsageError)) {
		t.Errorf("an unknown flag: %v, want a usage error", err)
	}
	if err := run(context.Background(), []string{"extra"}, nil, io.Discard, io.Discard); !errors.As(err, new(binflags.UsageError)) {
		t.Errorf("an argument: %v, want a usage error", err)
	}
	if err := run(context.Background(), []string{"--data-dir", ""}, nil, io.Discard, io.Discard); !errors.As(err, new(binflags.UsageError)) {
		t.Errorf("an empty directory: %v, want a usage error", err)
	}
	if err := run(context.Background(), []string{"-h"}, nil, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

// TestBottledMCPRunsTheServer: `bottled mcp` replaces itself with
// bottled-mcp from beside it, which answers.
func TestBottledMCPRunsTheServer(t *testing.T) {
	dir := t.TempDir()
	testbin.Build(t, dir, nil, nil, "github.com/bottled-dev/bottled/cmd/bottled", "github.com/bottled-dev/bottled/cmd/bottled-mcp")
	cmd := exec.Command(filepath.Join(dir, "bottled"), "--claude-dir", filepath.Join(dir, "claude"), "--data-dir", filepath.Join(dir, "mem"), "mcp")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The answer is read before stdin closes: a client that goes away
	// gets none.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`+"\n")
	out, err := bufio.NewReader(stdout).ReadBytes('\n')
	stdin.Close()
	cmd.Wait()
	if err != nil || !bytes.Contains(out, []byte(`"result"`)) || !bytes.Contains(out, []byte(`"bottled"`)) {
		t.Errorf("bottled mcp: %v, %s", err, out)
	}
	os.Remove(filepath.Join(dir, "bottled-mcp"))
	cmd = exec.Command(filepath.Join(dir, "bottled"), "mcp")
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "bottled-mcp is missing") {
		t.Errorf("without bottled-mcp: %v, %s", err, msg)
	}
}

// TestUsageInBottledsWords: bad usage is one line, in bottled's words and
// --flag spelling, that the caller says (stderr is left alone: one message,
// not the flag package's besides), pointing to the help of the program the
// user ran: bottled-mcp's, or bottled mcp's when bottled ran it; the help
// spells the flags as bottled's does.
func TestUsageInBottledsWords(t *testing.T) {
	testbin.CheckUsage[binflags.UsageError](t, []testbin.UsageCase{
		{"bottled-mcp", []string{"--bogus"}, "unknown flag --bogus (see bottled-mcp --help)"},
		{"/usr/local/bin/bottled-mcp", []string{"--data-dir"}, "--data-dir needs a value (see bottled-mcp --help)"},
		{"bottled", []string{"--bogus"}, "unknown flag --bogus (see bottled mcp --help)"},
		{"bottled", []string{"--version=maybe"}, `--version takes true or false, not "maybe" (see bottled mcp --help)`},
	}, func(args []string, stdout, stderr io.Writer) error {
		return run(context.Background(), args, nil, stdout, stderr)
	})
	var help bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, nil, &help, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"\n   --claude-dir string  ", "\n   --data-dir string  ", "\n   --version  "} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, help.String())
		}
	}
	if strings.Contains(help.String(), " -data-dir") {
		t.Errorf("--help spells a flag with one dash:\n%s", help.String())
	}
}

// TestRefusesFileForDirectory: a data directory or a Claude Code
// directory that is a file is said on stderr at start, in the line every
// bottled command says it in, and the server exits 1, even with its stdin
// at its end (a client gone at once).
func TestRefusesFileForDirectory(t *testing.T) {
	for _, flag := range []string{"--data-dir", "--claude-dir"} {
		args, file := testbin.FileForDir(t, flag)
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		code := binflags.Exit("bottled-mcp", err, &errOut)
		if code != 1 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "bottled-mcp: ") ||
			!strings.Contains(errOut.String(), file+" is not a directory (a file): give "+flag) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%s a file: exit %d, stdout %q, stderr %q", flag, code, out.String(), errOut.String())
		}
	}
}
