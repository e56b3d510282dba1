package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// The binaries installed beside bottled link what the hooks in this one
// must not pay for at start; the commands that need them replace this
// process with them.
const (
	mcpBinary  = "bottled-mcp"  // the MCP server (mcp): the MCP SDK
	viewBinary = "bottled-view" // the web view and export (view, export): net/http and the markdown renderer
)

// execServer replaces this process with a binary from beside it; tests
// record what it would run instead.
var execServer = syscall.Exec

// besideBottled is the binary name beside the bottled binary bin, and an
// error that says how to build it when it is not there.
func besideBottled(bin, name string) (string, error) {
	dir := filepath.Dir(bin)
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		return path, fmt.Errorf("%s is missing: build it beside bottled (go build -o %s/ ./cmd/bottled ./cmd/%s)", path, dir, name)
	}
	return path, nil
}

// execBeside replaces this process with the binary name from beside this
// bottled binary (its symbolic links resolved), given d's directories,
// then args, as argv[0] "bottled".
func execBeside(name string, d dirs, args ...string) error {
	exe, err := executable()
	if err != nil {
		return err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return err
	}
	bin, err := besideBottled(exe, name)
	if err != nil {
		return exitError{code: exitFailed, msg: err.Error()}
	}
	// argv[0] "bottled": the binary's messages then speak of the program
	// the user ran, and its errors point to bottled's help.
	argv := append([]string{"bottled", "--" + flagClaude, d.claude, "--" + flagDataDir, d.data}, args...)
	if err := execServer(bin, argv, os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", bin, err)
	}
	return nil
}
