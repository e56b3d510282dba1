package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/oddfile"
	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/sources"
)

// TestHookAnswersWithinItsDeadline runs the real `bottled hook
// session-start` for a compaction where reading the disk would wait: a
// file that is not a regular file (a named pipe, whose open waits for a
// writer for ever; a socket; a link to a named pipe) or a transcript under
// another program's write lease, as the session's transcript or beside
// it in its project directory; and claude-mem's database locked by its
// writer, which makes every read wait out SQLite's busy timeout (5 s). The
// hook must answer within its --timeout, give or take what starting a
// process costs on a busy machine, exit 0, and print nothing or one JSON
// object: beside an odd file, the pointer.
func TestHookAnswersWithinItsDeadline(t *testing.T) {
	dir := t.TempDir()
	if err := testbin.Binaries(dir, "github.com/bottled-dev/bottled/cmd/bottled"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bottled")
	const odd = "0dd00000-0000-4000-8000-0000000000f1"
	type hookCase struct {
		name string
		// prepare makes the fault in env e, whose session sessionID has a
		// transcript (and no bottle yet), and returns the session the hook
		// runs for.
		prepare func(t *testing.T, e env) string
		timeout time.Duration
		// slack is how late the answer may come; pointer: it must be the
		// pointer; warn: stderr must say so.
		slack   time.Duration
		pointer bool
		warn    string
		// stdin, if set, is the hook's stdin instead of the payload.
		stdin func(t *testing.T) io.Reader
	}
	proj := func(e env) string { return filepath.Join(e.claude, "projects", "-home-dev-app") }
	// besideDeadline is the deadline of a hook that must answer with the
	// pointer beside an odd file: the session's render must fit in it on
	// a busy machine under -race (1 s did not, in CI), and a hook that the
	// odd file held would still miss it and its slack.
	const besideDeadline = 5 * time.Second
	var cases []hookCase
	for _, m := range oddfile.Makers {
		cases = append(cases,
			hookCase{m.Name + " beside the transcript", func(t *testing.T, e env) string {
				m.Make(t, filepath.Join(proj(e), odd+".jsonl"))
				return sessionID
			}, besideDeadline, 10 * time.Second, true, "", nil},
			hookCase{m.Name + " as the transcript", func(t *testing.T, e env) string {
				m.Make(t, filepath.Join(proj(e), odd+".jsonl"))
				return odd
			}, time.Second, 10 * time.Second, false, "nothing to render", nil})
	}
	leased := func(t *testing.T, e env) {
		path := filepath.Join(proj(e), odd+".jsonl")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(transcript, sessionID, odd)), 0o600); err != nil {
			t.Fatal(err)
		}
		oddfile.Lease(t, path)
	}
	cases = append(cases,
		hookCase{"a transcript under a lease beside the transcript", func(t *testing.T, e env) string {
			leased(t, e)
			return sessionID
		}, besideDeadline, 10 * time.Second, true, "", nil},
		hookCase{"the transcript under a lease", func(t *testing.T, e env) string {
			leased(t, e)
			return odd
		}, time.Second, 10 * time.Second, false, "holds a lease", nil},
		// Locked, the database holds a reader for 5 s (its busy
		// timeout): the answer must come well before, without it. The
		// hook gives the database half its deadline and renders in the
		// other half, which under -race on a busy machine 0.5 s did not
		// always fit (CI); 3 s and its slack still end before the 5 s.
		hookCase{"claude-mem's database locked", func(t *testing.T, e env) string {
			lockMemory(t, e.data)
			return sessionID
		}, 3 * time.Second, 1500 * time.Millisecond, true, "database is locked", nil},
	)
	// Claude Code has been seen to leave a hook's stdin open: the payload
	// is read for 2 s at most, within the hook's deadline.
	cases = append(cases, hookCase{name: "stdin left open without a payload", prepare: func(t *testing.T, e env) string { return sessionID },
		timeout: 300 * time.Millisecond, slack: 1400 * time.Millisecond, warn: "no answer within",
		stdin: func(t *testing.T) io.Reader {
			// An *os.File, which the hook gets as it is: exec would copy
			// from another reader and wait for the copy to end.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r
		}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, true)
			id := tc.prepare(t, e)
			payload, _ := json.Marshal(map[string]string{"session_id": id, "transcript_path": filepath.Join(proj(e), id+".jsonl"),
				"cwd": "/home/dev/app", "hook_event_name": "SessionStart", "source": "compact"})
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout+tc.slack)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--claude-dir", e.claude, "--data-dir", e.data,
				"hook", "session-start", "--timeout", tc.timeout.String())
			cmd.Env = testbin.Timed()
			cmd.Stdin = bytes.NewReader(payload)
			if tc.stdin != nil {
				cmd.Stdin = tc.stdin(t)
			}
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			t.Logf("answered in %v; stderr: %s", took.Round(time.Millisecond), errOut.String())
			switch {
			case ctx.Err() != nil:
				t.Fatalf("no answer after %v, with --timeout %v", took.Round(time.Millisecond), tc.timeout)
			case err != nil:
				t.Fatalf("%v (a hook always exits 0); stderr:\n%s", err, errOut.String())
			case out.Len() > 0 && !json.Valid(out.Bytes()):
				t.Fatalf("stdout is not one JSON object: %q", out.String())
			case tc.pointer && !strings.Contains(out.String(), "additionalContext"):
				t.Fatalf("no pointer beside the odd file: stdout %q, stderr:\n%s", out.String(), errOut.String())
			case !strings.Contains(errOut.String(), tc.warn):
				t.Fatalf("stderr does not say %q:\n%s", tc.warn, errOut.String())
			}
		})
	}
}

// lockMemory writes a claude-mem database in dataDir with the real
// claude-mem and holds it locked, as its writer does when it takes the
// database for itself, until the test ends: every other connection's
// read waits out its busy timeout.
func lockMemory(t *testing.T, dataDir string) {
	t.Helper()
	w := memwriter.Require(t)
	path := sources.ClaudeMemFile(dataDir)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	w.Write(t, path, memwriter.Op{"op": "session", "content": sessionID, "project": "app", "prompt": "RENDER-P1 add a flag"})
	memwriter.Hold(t, path, []string{"PRAGMA locking_mode=EXCLUSIVE", "BEGIN EXCLUSIVE", "UPDATE sdk_sessions SET project = project"})
	// Another connection cannot read it now.
	ro := memwriter.OpenRO(t, path, "_pragma=busy_timeout(0)")
	if err := ro.QueryRow("SELECT count(*) FROM sdk_sessions").Scan(new(int)); err == nil {
		t.Fatal("the database is not locked")
	}
}
