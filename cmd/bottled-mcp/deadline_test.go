package main

import (
	"os"
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
			proj := filepath.Join(root, "claude", "projects", "-home-dev-app")
			if err := os.MkdirAll(proj, 0o700); err != nil {
				t.Fatal(err)
			}
			r := synth.Rec{Session: id, UUID: "u1", At: time.Now(), CWD: "/home/dev/app"}
			a := synth.Rec{Session: id, UUID: "a1", Parent: "u1", At: time.Now()}
			if err := os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(r.User("ODD-READ-P1 hello")+a.Assistant("m1", "ODD-READ-A1 hi")), 0o600); err != nil {
				t.Fatal(err)
			}
			m.Make(t, filepath.Join(proj, odd+".jsonl"))

			// Started in the session: finding which session it is in now
			// reads the heads of the newer files in its directory.
			p := startMCP(t, bin, root, "CLAUDE_CODE_SESSION_ID="+id)
			got := p.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"session":"` + id + `","from":1}}}`)
			if !strings.Contains(got.line, "ODD-READ-A1 hi") {
				t.Errorf("read of %s: %s", id, got.line)
			}
			if got := p.call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"from":1}}}`); !strings.Contains(got.line, "ODD-READ-A1 hi") {
				t.Errorf("read of this session: %s", got.line)
			}
			p.call(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`)
		})
	}
}
