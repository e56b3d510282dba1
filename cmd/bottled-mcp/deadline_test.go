package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/oddfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// TestReadBesideOddFiles runs the real bottled-mcp and reads, with its
// read tool, a session whose bottle is missing, so that it is rendered
// from its transcript, in a project directory that also holds, named like
// transcripts, files that are not regular files (a named pipe, whose open
// waits for a writer for ever; a socket; a link to a named pipe) and a
// transcript under another program's write lease (whose open waits until
// the lease is given up): the read answers, with the session's words,
// named or as the session the server was started in, and the server
// answers the next call.
func TestReadBesideOddFiles(t *testing.T) {
	dir := t.TempDir()
	if err := testbin.Binaries(dir, "github.com/bottled-dev/bottled/cmd/bottled-mcp"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bottled-mcp")
	const id, odd = "5e551000-0000-4000-8000-000000000001", "0dd00000-0000-4000-8000-0000000000f1"
	cases := []oddfile.Maker{{Name: "transcript under a lease", Make: func(tb testing.TB, path string) {
		r := synth.Rec{Session: odd, UUID: "u1", At: time.Now(), CWD: "/home/dev/app"}
		if err := os.WriteFile(path, []byte(r.User("ODD-P1 leased")), 0o600); err != nil {
			tb.Fatal(err)
		}
		oddfile.Lease(tb, path)
	}}}
	for _, m := range append(oddfile.Makers, cases...) {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			claude, data := filepath.Join(root, "claude"), filepath.Join(root, "mem")
			proj := filepath.Join(claude, "projects", "-home-dev-app")
			if err := os.MkdirAll(proj, 0o700); err != nil {
				t.Fatal(err)
			}
			r := synth.Rec{Session: id, UUID: "u1", At: time.Now(), CWD: "/home/dev/app"}
			a := synth.Rec{Session: id, UUID: "a1", Parent: "u1", At: time.Now()}
			if err := os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(r.User("ODD-READ-P1 hello")+a.Assistant("m1", "ODD-READ-A1 hi")), 0o600); err != nil {
				t.Fatal(err)
			}
			m.Make(t, filepath.Join(proj, odd+".jsonl"))

			cmd := exec.Command(bin, "--claude-dir", claude, "--data-dir", data)
			// Started in the session: finding which session it is in now
			// reads the heads of the newer files in its directory.
			cmd.Env = append(os.Environ(), "CLAUDE_CODE_SESSION_ID="+id)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				stdin.Close()
				cmd.Process.Kill()
				cmd.Wait()
			})
			lines := make(chan string)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stdout)
				sc.Buffer(nil, 16<<20)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			call := func(n int, method, params string) string {
				t.Helper()
				fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", n, method, params)
				deadline := time.After(20 * time.Second)
				for {
					select {
					case line, ok := <-lines:
						if !ok {
							t.Fatalf("the server ended without answering %s", method)
						}
						var v struct {
							ID int `json:"id"`
						}
						if json.Unmarshal([]byte(line), &v) == nil && v.ID == n {
							return line
						}
					case <-deadline:
						t.Fatalf("no answer to %s within 20 s", method)
					}
				}
			}
			call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}`)
			io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			got := call(2, "tools/call", `{"name":"read","arguments":{"session":"`+id+`","from":1}}`)
			if !strings.Contains(got, "ODD-READ-A1 hi") {
				t.Errorf("read of %s: %s", id, got)
			}
			if got := call(3, "tools/call", `{"name":"read","arguments":{"from":1}}`); !strings.Contains(got, "ODD-READ-A1 hi") {
				t.Errorf("read of this session: %s", got)
			}
			call(4, "tools/list", `{}`)
		})
	}
}
