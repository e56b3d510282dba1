package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/skips"
	"github.com/bottled-dev/bottled/internal/synth"
)

// EnvRequireBrowser makes the browser tests fail, rather than skip, when
// no Chromium is found (.ci/run sets it).
const EnvRequireBrowser = "BOTTLED_REQUIRE_BROWSER"

// EnvChromium names the Chromium (or Chrome) binary to drive; without it
// the tests look for chromium, chromium-browser, google-chrome on PATH.
const EnvChromium = "BOTTLED_CHROMIUM"

// chromium returns the browser to drive, or skips the test (fails it
// under EnvRequireBrowser) when there is none.
func chromium(t testing.TB) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	why := "no chromium, chromium-browser or google-chrome on PATH, and " + EnvChromium + " is not set"
	if p := os.Getenv(EnvChromium); p != "" {
		names, why = []string{p}, EnvChromium+"="+p+" is not an executable"
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvRequireBrowser) == "1" {
		t.Fatalf("a browser is required (%s=1): %s", EnvRequireBrowser, why)
	}
	skips.Note(t, "Chromium", "install it (apt install chromium) or set "+EnvChromium+"; .ci/run installs it")
	t.Skip(why)
	return ""
}

// world is a Claude Code directory with sessions, a data directory, the
// daemon (`bottled run`) and the view (`bottled-view view`), as a user
// runs them.
type world struct {
	t            testing.TB
	claude, data string
	url          string // the view's address, token included
	procs        []*exec.Cmd
}

func newWorld(t testing.TB) *world {
	root := t.TempDir()
	return &world{t: t, claude: filepath.Join(root, "claude"), data: filepath.Join(root, "mem")}
}

// transcript is the path of a session's transcript in project directory
// key, which it makes.
func (w *world) transcript(key, id string) string {
	path := filepath.Join(w.claude, "projects", key, id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		w.t.Fatal(err)
	}
	return path
}

// appendTo appends records to a transcript.
func (w *world) appendTo(path string, records ...string) {
	w.t.Helper()
	synth.Append(w.t, path, strings.Join(records, ""))
}

// turn is a user prompt, a tool call and its output (the noise the bottle
// leaves out), and the assistant's answer, as Claude Code records them.
func turn(id, cwd string, at time.Time, n int, prompt, answer string) []string {
	u := fmt.Sprintf("u%d", n)
	rec := func(uuid, parent string, d time.Duration) synth.Rec {
		return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: at.Add(d), CWD: cwd}
	}
	parent := ""
	if n > 1 {
		parent = fmt.Sprintf("a%d", n-1)
	}
	return []string{
		rec(u, parent, 0).User(prompt),
		rec(fmt.Sprintf("t%d", n), u, time.Second).ToolUse(fmt.Sprintf("m%d", n), fmt.Sprintf("toolu_%d", n)),
		rec(fmt.Sprintf("r%d", n), fmt.Sprintf("t%d", n), 2*time.Second).ToolResult(fmt.Sprintf("toolu_%d", n), "TOOLNOISE output of the command"),
		rec(fmt.Sprintf("a%d", n), fmt.Sprintf("r%d", n), 3*time.Second).Assistant(fmt.Sprintf("m%db", n), answer),
	}
}

// start runs a binary of the build with the world's directories and args,
// stopped (SIGTERM, then waited for) when the test ends.
func (w *world) start(name string, args ...string) (*exec.Cmd, *bufio.Reader) {
	w.t.Helper()
	cmd := exec.Command(binary(name), append([]string{"--claude-dir", w.claude, "--data-dir", w.data}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.procs = append(w.procs, cmd)
	w.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			// SIGQUIT has the Go runtime print every goroutine's stack on
			// stderr, which is the test's: where it was stuck.
			_ = cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			w.t.Errorf("%s did not stop within 10 s of SIGTERM (its goroutines are above)", name)
		}
	})
	return cmd, bufio.NewReader(out)
}

// startDaemon runs `bottled run` with quick timings (the behaviour under
// test does not depend on them) and waits for the bottles of the
// transcripts there to be written.
func (w *world) startDaemon(ids ...string) {
	w.t.Helper()
	w.start("bottled", "run", "--debounce", "40ms", "--max-wait", "200ms", "--rescan", "1s")
	for _, id := range ids {
		w.waitFor("the bottle of "+id, func() bool {
			_, err := os.Stat(filepath.Join(w.data, "bottles", id+".md"))
			return err == nil
		})
	}
}

// startView runs `bottled-view view --no-open` and reads the address it
// prints first.
func (w *world) startView() {
	w.t.Helper()
	_, out := w.start("bottled-view", "view", "--no-open")
	line := make(chan string, 1)
	go func() { // reads the first line the view prints; ends with it
		l, _ := out.ReadString('\n')
		line <- strings.TrimSpace(l)
		_, _ = out.WriteTo(discard{}) // the rest, so that the view never blocks on stdout
	}()
	select {
	case w.url = <-line:
	case <-time.After(30 * time.Second):
		w.t.Fatal("bottled-view printed no address within 30 s")
	}
	u, err := url.Parse(w.url)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Query().Get("token") == "" {
		w.t.Fatalf("bottled-view printed %q, want http://127.0.0.1:PORT/?token=…", w.url)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// waitFor waits for ok, checking it every 10 ms, for at most 30 s.
func (w *world) waitFor(what string, ok func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(10 * time.Millisecond) // the poll's interval, not a stand-in for the condition
	}
}

// base is the view's address without the token.
func (w *world) base() string {
	u, _ := url.Parse(w.url)
	return "http://" + u.Host
}

// token is the token in the view's address.
func (w *world) token() string {
	u, _ := url.Parse(w.url)
	return u.Query().Get("token")
}

// browser is a headless Chromium tab, and the dialogs (alert, confirm…)
// any page opened in it.
type browser struct {
	ctx     context.Context
	dialogs chan string
}

func newBrowser(t testing.TB) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.WindowSize(1100, 900), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	b := &browser{dialogs: make(chan string, 16)}
	var bcancel context.CancelFunc
	b.ctx, bcancel = chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			select {
			case b.dialogs <- d.Message:
			default:
			}
		}
	}))
	t.Cleanup(func() { bcancel() })
	if err := chromedp.Do(b.ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", chromium(t), err)
	}
	return b
}

// do runs the actions, failing t with what if one fails.
func (b *browser) do(t testing.TB, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wait waits (at most d) for a JavaScript condition to hold in the page,
// across a navigation (a click on a link) that replaces the page it
// started polling in.
func (b *browser) wait(t testing.TB, what, cond string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(time.Until(deadline))))
		switch {
		case err == nil:
			return
		case time.Now().Before(deadline) && (strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigat")):
			continue // the page was replaced: poll in the new one
		}
		t.Fatalf("%s: %s did not hold within %s: %v", what, cond, d, err)
	}
}

func eval[T any](t testing.TB, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the page as name (a PNG) in dir, and in
// /tmp/bottled-view-shots/ for people to look at.
func (b *browser) screenshot(t testing.TB, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	for _, d := range []string{dir, filepath.Join(os.TempDir(), "bottled-view-shots")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshot: %s", filepath.Join(dir, name))
}

var errNoDialog = errors.New("no dialog")

// dialog is a dialog a page opened, errNoDialog if none.
func (b *browser) dialog() (string, error) {
	select {
	case m := <-b.dialogs:
		return m, nil
	default:
		return "", errNoDialog
	}
}

// patternedWorld is a world of one session whose prompt holds a token of
// Acme's, and a patterns file with a pattern for it and a line that
// cannot be used.
func patternedWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	w.appendTo(w.transcript("-home-dev-app", idApp), turn(idApp, "/home/dev/app", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), 1,
		"PATTERNED prompt with acme_0123456789abcdef0123456789abcdef", "PATTERNED answer")...)
	if err := os.MkdirAll(w.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bottles.RulesFile(w.data), []byte("Acme token: acme_[0-9a-f]{32}\nBroken: (unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}
