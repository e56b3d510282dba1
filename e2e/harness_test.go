package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/settle"
	"github.com/bottled-dev/bottled/internal/skips"
	"github.com/bottled-dev/bottled/internal/standin"
	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/watch"
)

// Environment variables that find and require the real Claude Code.
const (
	// EnvClaude is the path of the `claude` binary to test (.ci/run
	// installs a pinned version and sets it); without it, `claude` on PATH.
	EnvClaude = "BOTTLED_CLAUDE"
	// EnvRequire, "1" in CI, makes a missing Claude Code fail the tests
	// instead of skipping them.
	EnvRequire = "BOTTLED_REQUIRE_CLAUDE_CODE"
)

var (
	bottledBin string // built once by TestMain
	claudeBin  string // found by TestMain; "" when absent
	claudeWhy  string // why claudeBin is absent
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bottled-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Both binaries, side by side as install expects them.
	bottledBin = filepath.Join(dir, "bottled")
	if err := testbin.Binaries(dir, "github.com/bottled-dev/bottled/cmd/bottled", "github.com/bottled-dev/bottled/cmd/bottled-mcp"); err != nil {
		fmt.Fprintln(os.Stderr, "build bottled:", err)
		return 1
	}
	claudeBin, claudeWhy = findClaude()
	return skips.Main(m) // m.Run, then what was skipped (see internal/skips)
}

func findClaude() (path, why string) {
	if p := os.Getenv(EnvClaude); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("%s=%s: %v", EnvClaude, p, err)
		}
		return p, ""
	}
	p, err := exec.LookPath("claude")
	if err != nil {
		return "", fmt.Sprintf("no claude on PATH and %s is not set (.ci/run installs it)", EnvClaude)
	}
	return p, ""
}

// requireClaude skips the test when Claude Code is absent, or fails it
// under EnvRequire.
func requireClaude(t testing.TB) {
	t.Helper()
	if claudeBin != "" {
		return
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("Claude Code is required (%s=1): %s", EnvRequire, claudeWhy)
	}
	skips.Note(t, "Claude Code", "put claude on PATH or set "+EnvClaude+"; .ci/run installs the tested release")
	t.Skipf("Claude Code not found: %s", claudeWhy)
}

// apiKey is what Claude Code sends the stand-in; it is never checked.
const apiKey = "sk-ant-standin-0000000000000000000000000000"

// world is one test's machine: its own HOME, Claude Code and data
// directories, project directory, stand-in API and bottled daemon.
type world struct {
	t       testing.TB
	home    string
	claude  string // CLAUDE_CONFIG_DIR
	data    string // CLAUDE_MEM_DATA_DIR
	project string // the cwd Claude Code runs in
	bin     string // first on PATH: claude, as a user who installed it has it
	api     *standin.Server
	daemon  *proc
	runs    int // claude invocations so far, for debug-log names
}

// newWorld sets up a machine with bottled installed (hooks and the Read
// permission, as `bottled install --no-start` writes them), the daemon
// running and Claude Code onboarded, talking to a stand-in API that
// answers with script.
func newWorld(t testing.TB, script standin.Script) *world {
	t.Helper()
	w := newWorldNoDaemon(t, script)
	w.startDaemon()
	return w
}

// newWorldNoDaemon is newWorld without the daemon: bottles are made only
// by the hooks' own renders.
func newWorldNoDaemon(t testing.TB, script standin.Script) *world {
	t.Helper()
	requireClaude(t)
	root := t.TempDir()
	w := &world{t: t, home: root}
	w.claude = filepath.Join(root, ".claude")
	w.data = filepath.Join(root, ".claude-mem")
	w.project = filepath.Join(root, "project")
	w.bin = filepath.Join(root, "bin")
	for _, d := range []string{w.claude, w.project, w.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// With claude on PATH, install registers the MCP server through it.
	if err := os.Symlink(claudeBin, filepath.Join(w.bin, "claude")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	api, err := standin.Start(ctx, script)
	if err != nil {
		t.Fatal(err)
	}
	w.api = api
	w.onboard()
	if out, err := w.bottled("install", "--no-start"); err != nil {
		t.Fatalf("bottled install --no-start: %v\n%s", err, out)
	}
	return w
}

// stopDaemon stops the daemon with SIGTERM and waits for it, within a
// deadline generous enough for the renders in flight, which it lets
// finish, on a busy machine.
func (w *world) stopDaemon() {
	w.t.Helper()
	w.daemon.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.daemon.done:
	case <-time.After(waitDeadline):
		w.t.Fatalf("the daemon did not stop within %v of SIGTERM", waitDeadline)
	}
}

// startDaemon starts `bottled run` with timings fast enough for tests and
// waits until it answers on its socket.
func (w *world) startDaemon() {
	w.t.Helper()
	w.daemon = w.start("run", "--verbose", "--debounce", "40ms", "--max-wait", "200ms", "--rescan", "1s")
	w.eventually("the daemon answers on its socket", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
		defer cancel()
		_, err := watch.Query(ctx, w.data)
		return err == nil
	})
}

// onboard writes Claude Code's state file so that neither the onboarding
// nor the trust dialog nor the API-key question stops the interactive
// screen.
func (w *world) onboard() {
	key := apiKey[len(apiKey)-20:]
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects": map[string]any{w.project: map[string]any{
			"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true,
		}},
	}
	b, _ := json.Marshal(state)
	if err := os.WriteFile(filepath.Join(w.claude, ".claude.json"), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// env is the environment every process of this world runs with: nothing
// of the caller's HOME or config, and no way to the network but the
// stand-in.
func (w *world) env() []string {
	env := []string{
		"HOME=" + w.home,
		"PATH=" + w.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CLAUDE_CONFIG_DIR=" + w.claude,
		"CLAUDE_MEM_DATA_DIR=" + w.data,
		"ANTHROPIC_BASE_URL=" + w.api.URL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1",
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return env
}

// bottled runs the bottled binary with this world's directories and
// returns its combined output.
func (w *world) bottled(args ...string) (string, error) {
	w.t.Helper()
	cmd := exec.Command(bottledBin, args...)
	cmd.Env = w.env()
	cmd.Dir = w.project
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// claudeRun is one finished `claude` process.
type claudeRun struct {
	stdout, stderr string
	debug          string // its --debug-file
	err            error
}

// claudeTimeout bounds one headless Claude Code run.
const claudeTimeout = 90 * time.Second

// run runs `claude -p` with args (the prompt, --resume…) in the project
// directory and waits for it.
func (w *world) run(extraEnv []string, args ...string) claudeRun {
	w.t.Helper()
	w.runs++
	debug := filepath.Join(w.home, fmt.Sprintf("claude-debug-%02d.log", w.runs))
	ctx, cancel := context.WithTimeout(context.Background(), claudeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBin, append([]string{"--debug-file", debug}, args...)...)
	cmd.Env = append(w.env(), extraEnv...)
	cmd.Dir = w.project
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := claudeRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
	if b, err := os.ReadFile(debug); err == nil {
		r.debug = string(b)
	}
	return r
}

// claude runs `claude -p` and fails the test if it fails.
func (w *world) claudeP(args ...string) claudeRun {
	w.t.Helper()
	r := w.run(nil, append([]string{"-p"}, args...)...)
	if r.err != nil {
		w.t.Fatalf("claude -p %q: %v\nstdout:\n%s\nstderr:\n%s", args, r.err, r.stdout, r.stderr)
	}
	return r
}

// hookLog returns the debug log's lines about hooks, for failure
// messages.
func hookLog(debug string) string {
	var out []string
	for _, l := range strings.Split(debug, "\n") {
		if strings.Contains(l, "Hook") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var hookTiming = regexp.MustCompile(`SessionStart:(\w+).*?finished with status (\d+) \((\d+)ms\)`)

// hookTimes returns the SessionStart hook runs in a debug log, as
// "source:milliseconds".
func hookTimes(debug string) []string {
	var out []string
	for _, m := range hookTiming.FindAllStringSubmatch(debug, -1) {
		out = append(out, m[1]+":"+m[3]+"ms")
	}
	return out
}

// proc is a long-running bottled process.
type proc struct {
	cmd    *exec.Cmd
	stderr *testbin.SyncBuffer
	done   chan struct{} // closed once the process has exited
}

func (w *world) start(args ...string) *proc {
	w.t.Helper()
	p := &proc{stderr: &testbin.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bottledBin, args...)
	p.cmd.Env = w.env()
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	w.t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
		if w.t.Failed() {
			w.t.Logf("bottled %s log:\n%s", args[0], p.stderr.String())
		}
	})
	return p
}

// bottlePath is where the session's live bottle is.
func (w *world) bottlePath(id string) string {
	return bottles.BottlePath(bottles.BottlesDir(w.data), id)
}

func (w *world) bottle(id string) string {
	b, _ := os.ReadFile(w.bottlePath(id))
	return string(b)
}

// transcript is the session's transcript as Claude Code wrote it.
func (w *world) transcript(id string) string {
	matches, _ := filepath.Glob(filepath.Join(w.claude, "projects", "*", id+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	b, _ := os.ReadFile(matches[0])
	return string(b)
}

// waitBottle waits until the daemon's bottle of the session satisfies ok.
func (w *world) waitBottle(id, what string, ok func(string) bool) string {
	w.t.Helper()
	var last string
	w.eventually(what, func() bool {
		last = w.bottle(id)
		return ok(last)
	})
	return last
}

// waitDeadline bounds every wait: far beyond what any takes when it
// holds, for a busy machine (nothing here is timed). statusTimeout bounds
// one status query, which a poll tries again.
const (
	waitDeadline  = waitfor.Deadline
	statusTimeout = 10 * time.Second
)

func (w *world) eventually(what string, cond func() bool) {
	w.t.Helper()
	waitfor.Cond(w.t, what, cond)
}

// archived lists the paths of the archived bottles of a session.
func (w *world) archived(id string) []string {
	var out []string
	dir := bottles.ArchiveDir(bottles.BottlesDir(w.data))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if s, ok := bottles.ArchivedSession(e.Name()); ok && s == id {
			out = append(out, filepath.Join(dir, e.Name())) // as a pointer names it
		}
	}
	return out
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// pointers counts the bottled pointers in a request: each is one hook
// context block that the model reads.
func pointers(r *standin.Request) int {
	return strings.Count(r.AllText(), sources.PointerHeading)
}

// onePointer fails the test unless the request, made after what, carries
// exactly one pointer.
func onePointer(t *testing.T, what string, r *standin.Request) {
	t.Helper()
	if n := pointers(r); n != 1 {
		t.Errorf("%s the request carries %d pointers, want 1", what, n)
	}
}

var errNoTurn = errors.New("no model turn recorded")

// lastTurn returns the latest main-loop request among rs.
func lastTurn(rs []*standin.Request) (*standin.Request, error) {
	turns := standin.Turns(rs)
	if len(turns) == 0 {
		return nil, errNoTurn
	}
	return turns[len(turns)-1], nil
}

// waitSettled waits until every change to the session up to now is
// reflected on disk (see settle.Wait).
func (w *world) waitSettled(id string, since time.Time) {
	w.t.Helper()
	settle.Wait(w.t, w.data, id, since)
}

// screen is Claude Code's interactive screen, running under its own tmux
// server.
type screen struct {
	w      *world
	socket string // tmux -L name: a server of the test's own
	debug  string // Claude Code's --debug-file
}

// startScreen starts `claude args…` interactively in a 200×50 terminal.
func (w *world) startScreen(args ...string) *screen {
	w.t.Helper()
	tmuxBin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			w.t.Fatalf("tmux is required for the interactive-screen test (%s=1): %v", EnvRequire, err)
		}
		skips.Note(w.t, "tmux", "install it (apt install tmux, brew install tmux)")
		w.t.Skipf("no tmux: %v", err)
	}
	w.runs++
	s := &screen{w: w, socket: fmt.Sprintf("bottled-e2e-%d-%d", os.Getpid(), w.runs)}
	debug := filepath.Join(w.home, fmt.Sprintf("claude-debug-%02d.log", w.runs))
	s.debug = debug
	words := []string{shellWord(claudeBin), "--debug-file", shellWord(debug)}
	for _, a := range args {
		words = append(words, shellWord(a))
	}
	cmd := exec.Command(tmuxBin, "-L", s.socket, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "200", "-y", "50",
		"-c", w.project, strings.Join(words, " "))
	cmd.Env = w.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("screen at the end:\n%s", s.capture())
		}
		s.close()
	})
	return s
}

// close ends the screen: the tmux server, and Claude Code with it, which
// is waited for so that nothing writes into the test's directories after
// the test.
func (s *screen) close() {
	pid, _ := strconv.Atoi(strings.TrimSpace(s.tmux("display-message", "-p", "-t", "main", "#{pane_pid}")))
	exec.Command("tmux", "-L", s.socket, "kill-server").Run()
	deadline := time.Now().Add(waitDeadline)
	for pid > 0 && syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *screen) tmux(args ...string) string {
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.w.t.Logf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// typeLine types text at the prompt and presses Enter once the screen
// shows the text typed: an Enter that came with the text would be taken
// as part of a paste.
func (s *screen) typeLine(text string) {
	s.w.t.Helper()
	shown := strings.Count(s.capture(), text)
	s.tmux("send-keys", "-t", "main", "-l", text)
	s.w.eventually(fmt.Sprintf("the prompt shows %q", text), func() bool { return strings.Count(s.capture(), text) > shown })
	s.tmux("send-keys", "-t", "main", "Enter")
}

func (s *screen) capture() string {
	return s.tmux("capture-pane", "-p", "-t", "main", "-S", "-200")
}

// waitFor waits until the screen shows text, failing on any text in
// never (a dialog that must not appear).
func (s *screen) waitFor(text string, never ...string) string {
	s.w.t.Helper()
	var last string
	s.w.eventually(fmt.Sprintf("the screen shows %q", text), func() bool {
		last = s.capture()
		for _, n := range never {
			if strings.Contains(last, n) {
				s.w.t.Fatalf("the screen shows %q:\n%s", n, last)
			}
		}
		return strings.Contains(last, text)
	})
	return last
}
