package watch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/oddfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/waitfor"
)

// hookDeadline is the --timeout the hooks of these tests run with, and
// hookSlack what a busy machine may add to it (starting the process, the
// race detector): a hook that has not exited by then never will.
const (
	hookDeadline = 3 * time.Second
	hookSlack    = 10 * time.Second
)

// TestFaultNotRegularTranscripts puts, with the daemon running, files
// that are not regular files where transcripts are expected in a project
// directory: named pipes (whose open blocks until a writer comes), a unix
// socket (which cannot be opened), a symlink to a named pipe, a
// transcript replaced by a named pipe; and, as a file system that blocks,
// two transcripts under another program's write lease (an open blocks
// until the lease is given up). The daemon keeps serving the other
// sessions of the directory, does not spin, and stops on SIGTERM; the
// SessionStart hook, for a sibling session and for the odd file's own,
// answers within its deadline and exits 0; so does `bottled status`; and
// the rescan goes on checking every bottle.
func TestFaultNotRegularTranscripts(t *testing.T) {
	t.Parallel()
	const (
		s1, s2 = "0dd00000-0000-4000-8000-00000000000a", "0dd00000-0000-4000-8000-00000000000b"
		odd1   = "0dd00000-0000-4000-8000-0000000000f1"
		odd2   = "0dd00000-0000-4000-8000-0000000000f2"
	)
	// oddTranscripts makes, with makeOdd, an odd file where the transcript
	// of each session of ids is expected.
	oddTranscripts := func(makeOdd func(testing.TB, string), ids ...string) func(*testing.T, string) []string {
		return func(t *testing.T, proj string) []string {
			for _, id := range ids {
				makeOdd(t, filepath.Join(proj, id+".jsonl"))
			}
			return ids
		}
	}
	tests := []struct {
		name string
		// atStart: the odd files are there when the daemon starts (its
		// catch-up meets them); otherwise they appear while it runs.
		atStart bool
		// make makes the odd files in the project directory and returns
		// the sessions they stand for.
		make func(t *testing.T, proj string) []string
		// leased: the odd files are regular, but held; renders of them
		// fail (and are tried again) until the lease is given up, and
		// then reach their bottles.
		leased bool
	}{
		{"two named pipes", false, oddTranscripts(oddfile.FIFO, odd1, odd2), false},
		{"a named pipe there at start", true, oddTranscripts(oddfile.FIFO, odd1), false},
		{"a unix socket", false, oddTranscripts(oddfile.Socket, odd1), false},
		{"a link to a named pipe", false, oddTranscripts(oddfile.LinkToFIFO, odd1), false},
		{"a transcript replaced by a named pipe", false, oddTranscripts(oddfile.ReplaceWithFIFO, s2), false},
		{"two transcripts under a lease", false, func(t *testing.T, proj string) []string {
			for _, id := range []string{odd1, odd2} {
				path := filepath.Join(proj, id+".jsonl")
				synth.Append(t, path, userRec(id, "u1", "", "ODD-P1 leased soon"))
			}
			return []string{odd1, odd2}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claude, data := dirs(t)
			proj := filepath.Dir(transcriptIn(t, claude, "-home-dev-app", s1))
			for _, id := range []string{s1, s2} {
				synth.Append(t, filepath.Join(proj, id+".jsonl"), userRec(id, "u1", "", "ODD-P1 "+id)+assistantRec(id, "a1", "u1", "m1", "ODD-A1 done."))
			}
			var odd []string
			if tc.atStart {
				odd = tc.make(t, proj)
			}
			// The rescan checks a transcript once it is quiet for 100 ms.
			d := startDaemon(t, claude, data, "--check-quiet", "100ms")
			d.waitContains(s1, "ODD-A1 done.")
			if !tc.atStart {
				if !tc.leased {
					d.waitContains(s2, "ODD-A1 done.")
				}
				odd = tc.make(t, proj)
			}
			var leases []*os.File
			if tc.leased {
				for _, id := range odd {
					d.waitContains(id, "ODD-P1 leased soon")
					l := oddfile.Lease(t, filepath.Join(proj, id+".jsonl"))
					// The daemon sees the write and opens the file.
					if _, err := l.WriteString(userRec(id, "u2", "u1", "ODD-P2 written under the lease")); err != nil {
						t.Fatal(err)
					}
					leases = append(leases, l)
				}
			}
			pid := d.cmd.Process.Pid
			ticks0, began := cpuTicks(t, pid), time.Now()

			// The other sessions of the directory are still followed.
			synth.Append(t, filepath.Join(proj, s1+".jsonl"), userRec(s1, "u2", "a1", "ODD-P2 still followed"))
			d.waitContains(s1, "ODD-P2 still followed")

			// The hook answers, for a sibling and for the odd file's session.
			if out := hook(t, claude, data, s1, filepath.Join(proj, s1+".jsonl")); !strings.Contains(out, "additionalContext") {
				t.Errorf("the hook gave no pointer for %s beside the odd files: %q", s1, out)
			}
			for _, id := range odd {
				hook(t, claude, data, id, filepath.Join(proj, id+".jsonl"))
			}
			statusWithin(t, claude, data)

			// The rescan still checks every bottle: one removed comes back
			// (once its transcript has been quiet) though no event says so.
			if err := os.Remove(bottles.BottlePath(bottles.BottlesDir(data), s1)); err != nil {
				t.Fatal(err)
			}
			d.waitContains(s1, "ODD-P2 still followed")

			st, err := d.status()
			if err != nil {
				t.Fatal(err)
			}
			if !tc.leased {
				if st.Renders.Failed != 0 {
					t.Errorf("%d renders failed: %+v", st.Renders.Failed, st.Errors)
				}
				if !strings.Contains(d.stderr.String(), "not a regular file") {
					t.Errorf("the daemon's log does not say which file it leaves alone:\n%s", d.stderr.String())
				}
			}
			ticks, wall := cpuTicks(t, pid)-ticks0, time.Since(began)
			cpu := time.Duration(ticks) * (time.Second / clockTicks)
			t.Logf("daemon CPU %v over %v beside the odd files", cpu, wall.Round(time.Millisecond))
			if cpu > wall/2+300*time.Millisecond {
				t.Errorf("the daemon used %v of CPU in %v beside the odd files: it spins", cpu, wall.Round(time.Millisecond))
			}

			if tc.leased {
				// Given up, the leases no longer hold the renders back.
				for _, l := range leases {
					l.Close()
				}
				for _, id := range odd {
					// A render that failed is tried again after 100 ms, 200, 400… (fastFlags)
					waitfor.Within(t, time.Minute, id+"'s bottle shows what was written under the lease", func() bool {
						return strings.Contains(d.bottle(id), "ODD-P2 written under the lease")
					})
				}
			}
			if !strings.Contains(d.bottle(s2), "ODD-A1 done.") {
				t.Errorf("the bottle of %s lost what it showed:\n%s", s2, d.bottle(s2))
			}
			if code := d.stop(); code != 0 {
				t.Errorf("exit code %d after SIGTERM, want 0", code)
			}
			statusWithin(t, claude, data) // without the daemon: from the disk
		})
	}
}

// hook runs `bottled hook session-start` for a compaction of session id
// whose transcript is at path, with the --timeout hookDeadline, as
// Claude Code does, and returns its stdout: it must exit 0 within the
// deadline (give or take hookSlack), and print nothing or one JSON object.
func hook(t *testing.T, claude, data, id, path string) string {
	t.Helper()
	payload, _ := json.Marshal(map[string]string{"session_id": id, "transcript_path": path, "cwd": "/home/dev/app",
		"hook_event_name": "SessionStart", "source": "compact"})
	out, errOut, took, err := runWithin(hookDeadline+hookSlack, string(payload), "--claude-dir", claude, "--data-dir", data,
		"hook", "session-start", "--timeout", hookDeadline.String())
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		t.Errorf("hook for %s: no answer after %v, with a deadline of %v", id, took.Round(time.Millisecond), hookDeadline)
	case err != nil:
		t.Errorf("hook for %s: %v (a hook always exits 0); stderr:\n%s", id, err, errOut)
	case out != "" && !json.Valid(bytes.TrimSpace([]byte(out))):
		t.Errorf("hook for %s: stdout is not one JSON object: %q", id, out)
	}
	return out
}

// statusWithin runs `bottled status`, which must answer within the hook's
// deadline and slack (it asks the daemon, or checks the disk without one).
func statusWithin(t *testing.T, claude, data string) {
	t.Helper()
	_, errOut, took, err := runWithin(hookDeadline+hookSlack, "", "--claude-dir", claude, "--data-dir", data, "status")
	var ee *exec.ExitError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		t.Errorf("bottled status: no answer after %v", took.Round(time.Millisecond))
	case err != nil && !errors.As(err, &ee):
		t.Errorf("bottled status: %v\n%s", err, errOut)
	}
}

// runWithin runs bottled with args and stdin, killing it after limit; the
// error is context.DeadlineExceeded if it had to be killed.
func runWithin(limit time.Duration, stdin string, args ...string) (stdout, stderr string, took time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		err = context.DeadlineExceeded
	}
	return out.String(), errOut.String(), took, err
}
