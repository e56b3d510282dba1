package watch_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/settle"
	"github.com/bottled-dev/bottled/internal/skips"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/watch"
)

// binary is the bottled binary the end-to-end tests run, built once by
// TestMain (with the race detector when the tests have it).
var binary string

// testsAtOnce is how many tests run at once unless -parallel says: most
// of this package's tests start a daemon (or the CLI) and wait for what it
// does, using little CPU, so go test's default, one test per CPU, keeps
// them waiting in turn. On 2 cores, `go test -count=1 ./watch` took 26 s
// at 2 at once, 17 s at 4, 11 s at 8 (the process tests' CPU in all:
// 20 s of user and system time whatever the number).
const testsAtOnce = 8

func TestMain(m *testing.M) {
	flag.Parse()
	parallelAtLeast(testsAtOnce)
	dir, err := os.MkdirTemp("", "bottled-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "bottled")
	if err := testbin.Binaries(dir, "github.com/bottled-dev/bottled/cmd/bottled"); err != nil {
		fmt.Fprintln(os.Stderr, "build bottled:", err)
		os.Exit(1)
	}
	code := skips.Main(m) // m.Run, then what was skipped (see internal/skips)
	os.RemoveAll(dir)
	os.Exit(code)
}

// parallelAtLeast sets -test.parallel to n when the command line did not
// set it and n is more than its default.
func parallelAtLeast(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); p != nil && !given {
		if cur, err := strconv.Atoi(p.Value.String()); err == nil && cur < n {
			p.Value.Set(strconv.Itoa(n))
		}
	}
}

// fastFlags make the daemon quick enough for tests; the behaviour under
// test does not depend on the values. A test waiting for what a rescan
// finds waits a fifth of a second for it; one that must see changes
// through file events alone passes --rescan 1h. A failed render is tried
// again after 100 ms, then 200, 400…, rather than after 1 s, 2, 4…
var fastFlags = []string{"--debounce", "40ms", "--max-wait", "200ms", "--rescan", "200ms", "--retry-min", "100ms"}

// daemon is a running `bottled run` on temporary directories.
type daemon struct {
	t            testing.TB
	claude, data string
	cmd          *exec.Cmd
	stderr       *testbin.SyncBuffer
	exited       chan error
}

// transcriptIn is the path of session id's transcript in a project
// directory of claude, which it makes.
func transcriptIn(t testing.TB, claude, project, id string) string {
	t.Helper()
	path := filepath.Join(claude, "projects", project, id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

func dirs(t testing.TB) (claude, data string) {
	root := t.TempDir()
	return filepath.Join(root, "claude"), filepath.Join(root, "mem")
}

// startDaemon starts `bottled run` with the fast test timings, then extra
// flags (a flag given twice takes its last value), and waits until it
// answers on its socket.
func startDaemon(t testing.TB, claude, data string, extra ...string) *daemon {
	t.Helper()
	return startDaemonCmd(t, claude, data, nil, extra...)
}

// startDaemonCmd is startDaemon with a chance to change the command before
// it starts (to run it in other namespaces, say).
func startDaemonCmd(t testing.TB, claude, data string, prep func(*exec.Cmd), extra ...string) *daemon {
	t.Helper()
	d := launchDaemon(t, claude, data, prep, extra...)
	eventually(t, "the daemon answers on its socket", func() bool {
		_, err := d.status()
		return err == nil
	})
	return d
}

// launchDaemon is startDaemonCmd without waiting for the daemon to answer.
func launchDaemon(t testing.TB, claude, data string, prep func(*exec.Cmd), extra ...string) *daemon {
	t.Helper()
	d := &daemon{t: t, claude: claude, data: data, stderr: &testbin.SyncBuffer{}, exited: make(chan error, 1)}
	args := append([]string{"--claude-dir", claude, "--data-dir", data, "run", "--verbose"}, fastFlags...)
	d.cmd = exec.Command(binary, append(args, extra...)...)
	d.cmd.Stderr = d.stderr
	if prep != nil {
		prep(d.cmd)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if ownMounts(d.cmd) {
		// Its own mounts: see its data directory through its root.
		d.data = fmt.Sprintf("/proc/%d/root%s", d.cmd.Process.Pid, data)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.kill()
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.stderr.String())
		}
	})
	return d
}

// statusTimeout bounds a status query: generous, for a daemon on a busy
// machine (a query that fails is tried again by the callers that poll).
const statusTimeout = 10 * time.Second

func (d *daemon) status() (*watch.Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	return watch.Query(ctx, d.data)
}

// stopDeadline bounds how long a daemon takes to exit after SIGTERM: it
// lets the renders in flight finish, each bounded by the daemon's render
// timeout (2 min), which a busy machine running the race detector can
// approach with large transcripts. What a test checks of a stop is what
// the daemon did (see TestDaemonSIGTERMWhileBusy), never how long it took.
const stopDeadline = 3 * time.Minute

// kill ends the daemon as a crash does (kill -9) and waits until it has
// exited.
func (d *daemon) kill() {
	d.cmd.Process.Kill()
	<-d.exited
}

// stop sends SIGTERM and returns the exit code.
func (d *daemon) stop() int {
	d.t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	return d.wait()
}

// wait waits for the daemon to exit, which it does within stopDeadline of
// a SIGTERM, and returns the exit code.
func (d *daemon) wait() int {
	d.t.Helper()
	select {
	case err := <-d.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			d.t.Fatal(err)
		}
		return 0
	case <-time.After(stopDeadline):
		d.t.Fatalf("daemon did not exit within %v of SIGTERM", stopDeadline)
		return -1
	}
}

// logged waits until the daemon's log holds text n times.
func (d *daemon) logged(text string, n int) {
	d.t.Helper()
	eventually(d.t, fmt.Sprintf("the daemon logged %q %d times", text, n), func() bool {
		return strings.Count(d.stderr.String(), text) >= n
	})
}

// holdBottles takes the lock every writer of the data directory's bottles
// takes to put a bottle in place (the daemon, a hook, the render command),
// making the bottles directory first: until release, no bottle is
// written, and each render waits at that last step with its temporary
// file written.
func holdBottles(t testing.TB, data string) (release func()) {
	t.Helper()
	dir := bottles.BottlesDir(data)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	release = sync.OnceFunc(func() { f.Close() }) // closing drops the lock
	t.Cleanup(release)
	return release
}

// temporaries counts the temporary bottles in the data directory: the
// renders waiting to put their bottle in place, or what killed writers
// left.
func temporaries(data string) int {
	entries, _ := os.ReadDir(bottles.BottlesDir(data))
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), safefile.TempPrefix) {
			n++
		}
	}
	return n
}

// busyDaemon starts the daemon with the bottles held (holdBottles) and
// waits until busy says of the renders waiting to put their bottle in
// place that the daemon is as busy as the test needs, its start-up
// catch-up not over: a busy daemon until release.
func busyDaemon(t *testing.T, claude, data string, busy func(waiting int) bool, extra ...string) (d *daemon, release func()) {
	t.Helper()
	release = holdBottles(t, data)
	d = startDaemon(t, claude, data, extra...)
	eventually(t, "the daemon has its renders in flight", func() bool { return busy(temporaries(data)) })
	if st, err := d.status(); err != nil || st.CatchUp.Over {
		t.Fatalf("catch-up over (status err %v) with every render waiting: the test no longer has a busy daemon", err)
	}
	return d, release
}

func (d *daemon) bottle(id string) string {
	b, _ := os.ReadFile(bottles.BottlePath(bottles.BottlesDir(d.data), id))
	return string(b)
}

// waitBottle waits until the session's bottle satisfies ok.
func (d *daemon) waitBottle(id, what string, ok func(string) bool) string {
	d.t.Helper()
	var last string
	eventually(d.t, what, func() bool {
		last = d.bottle(id)
		return ok(last)
	})
	return last
}

func (d *daemon) waitContains(id string, texts ...string) string {
	d.t.Helper()
	return d.waitBottle(id, fmt.Sprintf("bottle of %s shows %q", id, texts), func(b string) bool { return containsAll(b, texts...) })
}

// waitRescans waits until the daemon has finished n more rescans (their
// checks of the bottles included) than it had when called.
func (d *daemon) waitRescans(n int) {
	d.t.Helper()
	from := -1
	eventually(d.t, fmt.Sprintf("%d more rescans", n), func() bool {
		st, err := d.status()
		if err != nil {
			return false
		}
		if from < 0 {
			from = st.Rescans
		}
		return st.Rescans >= from+n
	})
}

// waitSettled waits until every change to the session up to now is
// reflected on disk (see settle.Wait).
func (d *daemon) waitSettled(id string, since time.Time) {
	d.t.Helper()
	settle.Wait(d.t, d.data, id, since)
}

// eventually waits until cond holds (see waitfor.Cond).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitfor.Cond(t, what, cond)
}

// Transcript records of session id, stamped now, as Claude Code 2.1.x
// writes them.
func userRec(id, uuid, parent, text string) string {
	return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: time.Now(), CWD: "/home/dev/app"}.User(text)
}

func assistantRec(id, uuid, parent, msg, text string) string {
	return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: time.Now()}.Assistant(msg, text)
}

func toolUseRec(id, uuid, parent, msg, toolID string) string {
	return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: time.Now()}.ToolUse(msg, toolID)
}

// firstTurn writes session id's first turn, a prompt and its answer, to
// its transcript in a project directory of claude, and returns the
// transcript's path.
func firstTurn(t testing.TB, claude, project, id, prompt, answer string) string {
	t.Helper()
	path := transcriptIn(t, claude, project, id)
	synth.Append(t, path, userRec(id, "u1", "", prompt)+assistantRec(id, "a1", "u1", "m1", answer))
	return path
}

// promptedSessions writes n sessions whose transcripts hold one prompt,
// each in a project directory of its own (-home-dev-p0, -p1…), session i
// with the id idFormat makes of i. It returns the ids and the paths.
func promptedSessions(t testing.TB, claude, idFormat string, n int, prompt string) (ids, paths []string) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf(idFormat, i)
		path := transcriptIn(t, claude, fmt.Sprintf("-home-dev-p%d", i), id)
		synth.Append(t, path, userRec(id, "u1", "", prompt))
		ids, paths = append(ids, id), append(paths, path)
	}
	return ids, paths
}

// watchedFirstTurn writes a session's first turn, starts the daemon and
// waits until the session's bottle shows the answer. It returns the
// transcript's path and the daemon.
func watchedFirstTurn(t *testing.T, claude, data, project, id, prompt, answer string) (string, *daemon) {
	t.Helper()
	path := firstTurn(t, claude, project, id, prompt, answer)
	d := startDaemon(t, claude, data)
	d.waitContains(id, answer)
	return path, d
}

// TestDaemonFollowsTranscripts starts the daemon before Claude Code's
// directory even exists, then plays a session: the project directory and
// transcript appear, prompts and answers are appended, a line arrives in
// two halves, and the file is truncated and rewritten.
func TestDaemonFollowsTranscripts(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	d := startDaemon(t, claude, data)
	const id = "0b5e3c7e-1f4a-4d8e-9a6b-2c1d0e9f8a71"
	path := transcriptIn(t, claude, "-home-dev-app", id)
	synth.Append(t, path, userRec(id, "u1", "", "E2E-P1 add a --dry-run flag"))
	d.waitContains(id, "E2E-P1 add a --dry-run flag")

	synth.Append(t, path, assistantRec(id, "a1", "u1", "m1", "E2E-A1 Added --dry-run."))
	d.waitContains(id, "E2E-A1 Added --dry-run.")
	synth.Append(t, path, userRec(id, "u2", "a1", "E2E-P2 now document it")+assistantRec(id, "a2", "u2", "m2", "E2E-A2 Documented in README."))
	d.waitContains(id, "E2E-P2 now document it", "E2E-A2 Documented in README.")

	// A torn line is not a record yet: the render it causes changes nothing.
	line := userRec(id, "u3", "a2", "E2E-P3 TORN-THEN-WHOLE release it")
	half := time.Now()
	synth.Append(t, path, line[:len(line)/2])
	d.waitSettled(id, half)
	if strings.Contains(d.bottle(id), "TORN-THEN-WHOLE") {
		t.Fatalf("half a line was rendered")
	}
	synth.Append(t, path, line[len(line)/2:])
	d.waitContains(id, "E2E-P3 TORN-THEN-WHOLE release it")

	// Truncated and rewritten in place: the bottle follows the new content.
	if err := os.WriteFile(path, []byte(userRec(id, "v1", "", "E2E-REWRITTEN start over")), 0o600); err != nil {
		t.Fatal(err)
	}
	b := d.waitContains(id, "E2E-REWRITTEN start over")
	if strings.Contains(b, "E2E-P1") {
		t.Errorf("bottle still shows the content from before the rewrite")
	}
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestDaemonIgnoresSubagents checks that subagent transcripts, flat
// (2.0.x) or in <session>/subagents/ (2.1.x), never get bottles of their
// own.
func TestDaemonIgnoresSubagents(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "5d2f8a10-3b7c-4e61-8f0a-9c4b2d6e1a37"
	proj := filepath.Join(claude, "projects", "-p")
	if err := os.MkdirAll(filepath.Join(proj, id, "subagents"), 0o700); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, claude, data)
	synth.Append(t, filepath.Join(proj, "agent-c8d9b115.jsonl"), userRec(id, "s1", "", "SUBAGENT flat"))
	synth.Append(t, filepath.Join(proj, id, "subagents", "agent-a1.jsonl"), userRec(id, "s2", "", "SUBAGENT nested"))
	synth.Append(t, filepath.Join(proj, id+".jsonl"), userRec(id, "u1", "", "MAIN prompt"))
	d.waitContains(id, "MAIN prompt")
	entries, _ := os.ReadDir(bottles.BottlesDir(data))
	for _, e := range entries {
		if e.Name() != id+".md" && strings.HasSuffix(e.Name(), ".md") {
			t.Errorf("unexpected bottle %s", e.Name())
		}
	}
	if strings.Contains(d.bottle(id), "SUBAGENT") {
		t.Errorf("subagent text in the session's bottle")
	}
}

func TestDaemonSingleInstance(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	startDaemon(t, claude, data)
	var stderr bytes.Buffer
	cmd := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "run")
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "another bottled daemon is running") {
		t.Fatalf("second daemon: err %v, stderr %q; want exit 1 naming the running daemon", err, stderr.String())
	}
}

// TestDaemonCatchUp starts the daemon on transcripts written while it was
// not running: the stale bottles are rendered, the fresh one is left alone.
func TestDaemonCatchUp(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	proj := filepath.Join(claude, "projects", "-p")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	ids := []string{"c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002", "c0000000-0000-4000-8000-000000000003"}
	for i, id := range ids {
		synth.Append(t, filepath.Join(proj, id+".jsonl"), userRec(id, "u1", "", fmt.Sprintf("CATCHUP-%d first", i)))
	}
	// Render the first one now, as an earlier daemon would have.
	runBottled(t, claude, data, "", "render", ids[0])
	fresh := bottles.BottlePath(bottles.BottlesDir(data), ids[0])
	before, _ := os.Stat(fresh)
	synth.Append(t, filepath.Join(proj, ids[1]+".jsonl"), assistantRec(ids[1], "a1", "u1", "m1", "CATCHUP-1 answered while down"))

	d := startDaemon(t, claude, data)
	d.waitContains(ids[1], "CATCHUP-1 answered while down")
	d.waitContains(ids[2], "CATCHUP-2 first")
	eventually(t, "catch-up is over", func() bool {
		st, err := d.status()
		return err == nil && st.CatchUp.Over && st.CatchUp.Done == 3
	})
	after, _ := os.Stat(fresh)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a fresh bottle was rewritten at catch-up")
	}
}

// TestDaemonSIGTERMWhileBusy stops the daemon in the middle of a catch-up,
// while every worker has a render in flight (each waits to put its bottle
// in place while a writer holds the bottles' lock): it starts no render
// after SIGTERM (it says how many are in flight, and no more bottles are
// written after that), takes in every one's result (each logs its bottle),
// exits 0 once they are written, and every bottle on
// disk is whole (no temporary files, every size matching its recorded
// state).
func TestDaemonSIGTERMWhileBusy(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const workers = 4
	for i := range 3 * workers {
		id := fmt.Sprintf("b0000000-0000-4000-8000-%012d", i)
		firstTurn(t, claude, "-p", id, fmt.Sprintf("BUSY %d prompt", i), fmt.Sprintf("BUSY %d answer", i))
	}
	d, release := busyDaemon(t, claude, data, func(waiting int) bool { return waiting == workers }, "--workers", fmt.Sprint(workers))
	d.cmd.Process.Signal(syscall.SIGTERM)
	const stopping = `msg="stopping once the renders in flight finish" renders=`
	d.logged(stopping, 1)
	release()
	if code := d.wait(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	_, after, _ := strings.Cut(d.stderr.String(), stopping)
	var inFlight int
	fmt.Sscanf(after, "%d", &inFlight)
	if written := strings.Count(after, `msg="bottle written"`); inFlight != workers || written != inFlight {
		t.Errorf("%d renders in flight at SIGTERM (workers: %d), then %d bottles written: a render started after SIGTERM, or one finished without the daemon's taking in its result", inFlight, workers, written)
	}
	dir := bottles.BottlesDir(data)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != inFlight {
		t.Errorf("%d files in the bottles directory after a stop with %d renders in flight: a render started after SIGTERM, or one in flight was not waited for", len(entries), inFlight)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
			continue
		}
		path := filepath.Join(dir, e.Name())
		st, err := bottles.ReadState(path)
		info, _ := os.Stat(path)
		if err != nil || info == nil || int64(st.Bytes) != info.Size() {
			t.Errorf("%s is not a whole bottle (state err %v)", e.Name(), err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, watch.SocketFile)); !os.IsNotExist(err) {
		t.Errorf("socket left behind after exit (stat err %v)", err)
	}
}

// TestDaemonFollowsClaudeMem writes claude-mem rows with the real
// claude-mem while the daemon runs: the database appears after the daemon
// started, its rows sit in the WAL, a writer checkpoints it, and rows keep
// coming; every observation reaches the bottle.
func TestDaemonFollowsClaudeMem(t *testing.T) {
	t.Parallel()
	w := memwriter.Require(t)
	claude, data := dirs(t)
	const id = "7e3a9c21-4b5d-4f60-8a1e-3d2c5b7f9e04"
	path := transcriptIn(t, claude, "-home-dev-app", id)
	synth.Append(t, path, userRec(id, "u1", "", "MEM-P1 run the tests")+toolUseRec(id, "a1", "u1", "m1", "toolu_E2E1")+
		assistantRec(id, "a2", "a1", "m1", "MEM-A1 All green."))
	d := startDaemon(t, claude, data)
	d.waitContains(id, "MEM-A1 All green.")

	db := filepath.Join(data, "claude-mem.db")
	w.Write(t, db,
		memwriter.Op{"op": "session", "content": id, "project": "app", "prompt": "MEM-P1 run the tests"},
		memwriter.Op{"op": "register", "content": id, "memory": "mem-" + id},
		memwriter.Op{"op": "prompt", "content": id, "number": 1, "text": "MEM-P1 run the tests"},
		memwriter.Op{"op": "tool_use", "content": id, "tool_use_id": "toolu_E2E1", "tool_name": "Bash", "prompt_number": 1},
		memwriter.Op{"op": "observation", "content": id, "prompt_number": 1, "type": "discovery", "title": "Ran the test suite",
			"narrative": "MEM-OBS1 every package passed. More detail here.", "tool_use_ids": []string{"toolu_E2E1"}},
		memwriter.Op{"op": "kill"})
	d.waitContains(id, "] Ran the test suite — MEM-OBS1 every package passed")

	w.Write(t, db, memwriter.Op{"op": "checkpoint", "mode": "TRUNCATE"})
	w.Write(t, db,
		memwriter.Op{"op": "observation", "content": id, "prompt_number": 1, "type": "change", "title": "Checked coverage",
			"narrative": "MEM-OBS2 coverage is 84 percent. Fine."},
		memwriter.Op{"op": "kill"})
	b := d.waitContains(id, "] Checked coverage — MEM-OBS2 coverage is 84 percent")
	if !strings.Contains(b, "MEM-OBS1") {
		t.Errorf("an observation was lost across the checkpoint")
	}
	st, err := d.status()
	if err != nil || !st.DB.Reachable || st.DB.SchemaVersion == 0 {
		t.Errorf("status DB = %+v, err %v; want reachable with a schema version", st.DB, err)
	}
}

// TestDaemonKeepsFullBottle deletes a transcript (Claude Code prunes them
// after 30 days): the full bottle stays, even though claude-mem could
// reconstruct one.
func TestDaemonKeepsFullBottle(t *testing.T) {
	t.Parallel()
	w := memwriter.Require(t)
	claude, data := dirs(t)
	const id = "9f1e2d3c-4b5a-4c6d-8e7f-0a1b2c3d4e5f"
	w.Write(t, filepath.Join(data, "claude-mem.db"),
		memwriter.Op{"op": "session", "content": id, "project": "app", "prompt": "KEEP-P1 fix the bug"},
		memwriter.Op{"op": "prompt", "content": id, "number": 1, "text": "KEEP-P1 fix the bug"})
	path, d := watchedFirstTurn(t, claude, data, "-p", id, "KEEP-P1 fix the bug", "KEEP-A1 Fixed the off-by-one.")
	d.waitContains(id, "mode: full")
	gone := time.Now()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	d.waitSettled(id, gone)
	if b := d.bottle(id); !strings.Contains(b, "mode: full") || !strings.Contains(b, "KEEP-A1") {
		t.Errorf("full bottle was replaced after the transcript went away:\n%s", b)
	}
}

// TestDaemonLeavesClearedSessionArchived runs the SessionEnd hook for
// /clear while the daemon watches: the bottle moves to the archive, the
// records Claude Code appends as the session ends do not bring it back,
// and resuming the conversation does.
func TestDaemonLeavesClearedSessionArchived(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "a3c9e1f0-2b4d-4e6f-8a0b-c1d2e3f4a5b6"
	path, d := watchedFirstTurn(t, claude, data, "-p", id, "CLEAR-P1 tidy the logs", "CLEAR-A1 Tidied.")

	clearedAsClaudeCode(t, d, id, path, "a1")
	synth.Append(t, path, userRec(id, "u2", "h1", "CLEAR-RESUMED one more thing"))
	d.waitContains(id, "CLEAR-RESUMED one more thing")
}

// runBottled runs a bottled command on claude and data with stdin, and
// returns its output; it fails the test if the command fails.
func runBottled(t *testing.T, claude, data, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--claude-dir", claude, "--data-dir", data}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bottled %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clearSession runs the SessionEnd hook as Claude Code does on /clear.
func clearSession(t *testing.T, claude, data, id, path string) {
	t.Helper()
	runBottled(t, claude, data, `{"session_id":"`+id+`","transcript_path":"`+path+`","hook_event_name":"SessionEnd","reason":"clear"}`, "hook", "session-end")
}

// clearedAsClaudeCode clears session id, whose transcript is at path, as
// Claude Code's /clear does: its SessionEnd hook runs, then the hook's
// record (h1, a child of parent) is appended. The bottle must be archived
// at once and stay so once the daemon has read the record, which has no
// content.
func clearedAsClaudeCode(t *testing.T, d *daemon, id, path, parent string) {
	t.Helper()
	clearSession(t, d.claude, d.data, id, path)
	if d.bottle(id) != "" {
		t.Fatalf("bottle still live after /clear")
	}
	ended := time.Now()
	synth.Append(t, path, `{"type":"attachment","parentUuid":"`+parent+`","uuid":"h1","sessionId":"`+id+`","attachment":{"type":"hook_success","hookName":"SessionEnd"}}`+"\n")
	d.waitSettled(id, ended)
	if d.bottle(id) != "" {
		t.Fatalf("the daemon brought the archived bottle back for the SessionEnd hook's record, which has no content")
	}
}

// TestDaemonLeavesHeadlessClearArchived plays `claude -p "/clear" --resume
// ID` as Claude Code 2.1.332 writes it: the command is enqueued (and
// dequeued) in the cleared session's transcript around SessionEnd(clear).
// A command in the queue is not content: the archived bottle stays
// archived.
func TestDaemonLeavesHeadlessClearArchived(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "b4d0f2a1-3c5e-4f70-9b1c-d2e3f4a5b6c7"
	path, d := watchedFirstTurn(t, claude, data, "-p", id, "HCLEAR-P1 bump the version", "HCLEAR-A1 Bumped.")

	// The hook runs within the daemon's debounce of the enqueue, so the
	// daemon sees the queue records only once the bottle is archived.
	clearSession(t, claude, data, id, path)
	ended := time.Now()
	q := synth.Rec{Session: id, At: ended}
	synth.Append(t, path, q.Queue("enqueue", "/clear")+q.Queue("dequeue", ""))
	d.waitSettled(id, ended)
	if d.bottle(id) != "" {
		t.Fatalf("the daemon brought the archived bottle back for an enqueued /clear")
	}
	if bottles.Open(data, nil, nil).ArchivedPath(id) == "" {
		t.Fatalf("no archived bottle")
	}
}

// TestDaemonLeavesObserverSessionsAlone runs the daemon beside claude-mem's
// observer sessions: Claude Code sessions claude-mem runs for itself with
// their working directory in <data-dir>/observer-sessions. They are not
// the user's conversations: no bottle, counted apart in the status; an
// explicit `bottled render` of one still works.
func TestDaemonLeavesObserverSessionsAlone(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	observerCWD := filepath.Join(data, "observer-sessions")
	const (
		observer  = "0b5e7a1c-2d3f-4a5b-8c6d-7e8f9a0b1c2d" // in the observer's project directory
		elsewhere = "1c6f8b2d-3e4a-4b6c-9d7e-8f9a0b1c2d3e" // its records name the observer's cwd
		user      = "2d7a9c3e-4f5b-4c7d-8e9f-a0b1c2d3e4f5"
	)
	observerProj := filepath.Join(claude, "projects", sources.ProjectKey(observerCWD))
	userProj := filepath.Join(claude, "projects", "-home-dev-app")
	for _, dir := range []string{observerProj, userProj} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	obsRec := func(id, uuid, parent, text string) string {
		return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: time.Now(), CWD: observerCWD}.User(text)
	}
	synth.Append(t, filepath.Join(observerProj, observer+".jsonl"), obsRec(observer, "o1", "", "OBSERVER-1 You are a Claude-Mem observer"))
	d := startDaemon(t, claude, data)
	synth.Append(t, filepath.Join(userProj, elsewhere+".jsonl"), obsRec(elsewhere, "o1", "", "OBSERVER-2 You are a Claude-Mem observer"))
	synth.Append(t, filepath.Join(observerProj, observer+".jsonl"), assistantRec(observer, "o2", "o1", "m1", "OBSERVER-1 <observation>"))
	synth.Append(t, filepath.Join(userProj, user+".jsonl"), userRec(user, "u1", "", "OBS-USER-P1 the user's own session"))
	d.waitContains(user, "OBS-USER-P1")
	d.waitSettled(elsewhere, time.Time{})
	for _, id := range []string{observer, elsewhere} {
		if d.bottle(id) != "" {
			t.Errorf("the daemon bottled observer session %s", id)
		}
	}
	// The one found by its records is counted apart too, and the survey of
	// the bottles counts as the status does.
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last status: %s", last)
		}
	})
	eventually(t, "status and its survey count 2 observer sessions and 1 transcript, its bottle fresh", func() bool {
		st, err := d.status()
		if err != nil || st.Bottles == nil {
			return false
		}
		sv := st.Bottles
		last = fmt.Sprintf("observer %d, sessions %d; survey: observer %d, transcripts %d, fresh %d",
			st.Observer, st.Sessions, sv.Observer, sv.Transcripts, sv.Fresh)
		return st.Observer == 2 && st.Sessions == 1 && sv.Observer == 2 && sv.Transcripts == 1 && sv.Fresh == 1
	})

	out, err := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "render", "--stdout", observer).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OBSERVER-1 <observation>") {
		t.Errorf("render of an observer session by id: %v\n%s", err, out)
	}
}

// TestDaemonReportsUnknownRecords appends records bottled does not know,
// as a newer Claude Code would write them: the bottle is still rendered,
// and the daemon's debug log and status name what is new.
func TestDaemonReportsUnknownRecords(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "c5e7a9b1-2d3f-4a5b-8c7d-9e0f1a2b3c4d"
	path := transcriptIn(t, claude, "-p", id)
	d := startDaemon(t, claude, data)
	synth.Append(t, path, userRec(id, "u1", "", "DRIFT-P1 hello")+`{"type":"quantum-checkpoint","sessionId":"`+id+`"}`+"\n"+
		`{"type":"attachment","uuid":"x1","parentUuid":"u1","sessionId":"`+id+`","attachment":{"type":"mood_ring"}}`+"\n"+
		assistantRec(id, "a1", "x1", "m1", "DRIFT-A1 hi"))
	d.waitContains(id, "DRIFT-A1 hi")
	eventually(t, "status names the unknown records", func() bool {
		st, err := d.status()
		if err != nil {
			return false
		}
		for _, s := range st.Recent {
			if s.Session == id && s.Unknown != nil {
				return s.Unknown.RecordTypes["quantum-checkpoint"] == 1 && s.Unknown.AttachmentTypes["mood_ring"] == 1
			}
		}
		return false
	})
	// The status and the log line come from the same render's report, in
	// no set order.
	eventually(t, "the debug log names the unknown record type", func() bool {
		return strings.Contains(d.stderr.String(), "quantum-checkpoint×1")
	})
}

// TestDaemonKeepsIndexCurrent: the daemon indexes each bottle it writes,
// so the search index reflects the bottle without anyone syncing it.
func TestDaemonKeepsIndexCurrent(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	d := startDaemon(t, claude, data)
	const id = "5d2e8f61-3b7a-4c09-8e1f-6a4b2c9d7e30"
	path := transcriptIn(t, claude, "-home-dev-app", id)
	ix, err := index.Open(context.Background(), data, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	turns := []string{"INDEXWORDONE add a flag", "INDEXWORDTWO document it", "INDEXWORDTHREE release it"}
	parent := ""
	for i, text := range turns {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		synth.Append(t, path, userRec(id, u, parent, text)+assistantRec(id, a, u, "m"+a, "done "+text))
		parent = a
		d.waitContains(id, text)
		eventually(t, "the index reflects the bottle", func() bool {
			stale, err := ix.Stale(context.Background())
			return err == nil && len(stale) == 0
		})
		word := strings.Fields(text)[0]
		hits, err := ix.Search(context.Background(), word, index.Scope{})
		if err != nil || len(hits) != 2 {
			t.Fatalf("search %s: %v %+v, want the user's and the assistant's block", word, err, hits)
		}
	}
	if strings.Contains(d.stderr.String(), "index") && strings.Contains(d.stderr.String(), "level=WARN") {
		t.Errorf("the daemon warned:\n%s", d.stderr.String())
	}
}

// TestDaemonRebuildsALostIndex removes the search index under a running
// daemon: the next bottle it writes finds the index gone, and the daemon
// builds it again in the background (never in the render), so that the
// index is there again without a restart.
func TestDaemonRebuildsALostIndex(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	d := startDaemon(t, claude, data)
	const id = "5d2e8f61-3b7a-4c09-8e1f-6a4b2c9d7e31"
	path := transcriptIn(t, claude, "-home-dev-app", id)
	synth.Append(t, path, userRec(id, "u0", "", "LOSTINDEX-P1 first")+assistantRec(id, "a0", "u0", "ma0", "done first"))
	d.waitContains(id, "LOSTINDEX-P1")
	eventually(t, "the index is ready", func() bool { return strings.Count(d.stderr.String(), "search index ready") == 1 })
	if err := os.RemoveAll(index.Dir(data)); err != nil {
		t.Fatal(err)
	}
	synth.Append(t, path, userRec(id, "u1", "a0", "LOSTINDEX-P2 second")+assistantRec(id, "a1", "u1", "ma1", "done second"))
	d.waitContains(id, "LOSTINDEX-P2")
	eventually(t, "the daemon builds the index again", func() bool {
		_, err := os.Stat(index.Dir(data))
		return err == nil && strings.Count(d.stderr.String(), "search index ready") == 2
	})
}

// asideRecs is a /btw side question's transcript as Claude Code writes it
// (records of a subagent whose id names it a side question): a copy of the
// conversation so far, then the question in its reminder; answer, if not
// empty, follows.
func asideRecs(id, agent, question, answer string) string {
	rec := func(uuid, parent string) synth.Rec {
		return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: time.Now(), Agent: agent}
	}
	s := rec("u1", "").User("BTW-E2E-P1 tidy the imports") +
		rec(agent+"-q", "u1").User("<system-reminder>This is a side question from the user.</system-reminder>\n\n"+question)
	if answer != "" {
		s += rec(agent+"-a", agent+"-q").Assistant("m-"+agent, answer)
	}
	return s
}

// TestDaemonFollowsSideQuestions plays /btw side questions against a
// daemon that rescans only hourly, so that the file watches alone must
// bring them: one asked while the session works, whose answer is written
// after, and one asked while it is idle. Their transcripts are written in
// <session>/subagents/, which appears after the session's transcript.
func TestDaemonFollowsSideQuestions(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	d := startDaemon(t, claude, data, "--rescan", "1h")
	const id = "7e3a1c5b-9d2f-4b80-a6c4-1f8e3d5b7a92"
	path := transcriptIn(t, claude, "-home-dev-app", id)
	synth.Append(t, path, userRec(id, "u1", "", "BTW-E2E-P1 tidy the imports"))
	d.waitContains(id, "BTW-E2E-P1 tidy the imports")

	const first = "aside_question-1111111111111111"
	aside := filepath.Join(sources.SubagentsDir(path), "agent-"+first+".jsonl")
	if err := os.MkdirAll(filepath.Dir(aside), 0o700); err != nil {
		t.Fatal(err)
	}
	synth.Append(t, aside, asideRecs(id, first, "BTW-E2E-Q1 which linter do we run?", ""))
	d.waitContains(id, "BTW-E2E-Q1 which linter do we run?")
	synth.Append(t, aside, synth.Rec{Session: id, UUID: first + "-a", Parent: first + "-q", At: time.Now(), Agent: first}.
		Assistant("m-"+first, "BTW-E2E-QA1 golangci-lint, from the Makefile."))
	d.waitContains(id, "BTW-E2E-QA1 golangci-lint, from the Makefile.")

	synth.Append(t, path, assistantRec(id, "a1", "u1", "m1", "BTW-E2E-A1 Imports tidied."))
	d.waitContains(id, "BTW-E2E-A1 Imports tidied.")
	const second = "aside_question-2222222222222222"
	synth.Append(t, filepath.Join(filepath.Dir(aside), "agent-"+second+".jsonl"),
		asideRecs(id, second, "BTW-E2E-Q2 is the CI green?", "BTW-E2E-QA2 It was, on the last push."))
	b := d.waitContains(id, "BTW-E2E-Q2 is the CI green?", "BTW-E2E-QA2 It was, on the last push.")
	if !strings.Contains(b, "**User, aside (/btw)**") {
		t.Errorf("side questions not marked as asides:\n%s", b)
	}
}

// TestDaemonFindsSideQuestionsAtRescan asks a side question of a session
// last written before the daemon started: no file event leads to it (its
// directories are not watched), and the rescan finds it.
func TestDaemonFindsSideQuestionsAtRescan(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "8f4b2d6c-0e3a-4c91-b7d5-2a9f4e6c8b03"
	path := firstTurn(t, claude, "-home-dev-app", id, "BTW-E2E-P1 tidy the imports", "BTW-E2E-A1 Done.")
	if err := os.MkdirAll(sources.SubagentsDir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, claude, data)
	d.waitContains(id, "BTW-E2E-A1 Done.")
	const agent = "aside_question-3333333333333333"
	synth.Append(t, filepath.Join(sources.SubagentsDir(path), "agent-"+agent+".jsonl"),
		asideRecs(id, agent, "BTW-E2E-Q3 who owns this repo?", "BTW-E2E-QA3 The platform team."))
	d.waitContains(id, "BTW-E2E-Q3 who owns this repo?", "BTW-E2E-QA3 The platform team.")
}
