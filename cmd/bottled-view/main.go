// Command bottled-view is bottled's web view and export: `bottled-view
// view` serves every session's bottle as a live web page on the loopback
// interface (package view), `bottled-view export SESSION` writes one
// session as a standalone HTML or markdown file. `bottled view` and
// `bottled export` run it from beside the bottled binary.
//
// It is a binary of its own so that the hooks in bottled, which Claude
// Code waits for at every compaction and resume, do not pay for the start
// of net/http and the markdown renderer: linked into bottled, they made
// the fresh hook process 1.7–1.8 ms slower (README).
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/cmd/internal/binflags"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/version"
	"github.com/bottled-dev/bottled/view"
	"github.com/bottled-dev/bottled/watch"
)

// exportTimeout bounds the render of a stale bottle before an export, as
// for `bottled show`.
const exportTimeout = 30 * time.Second

const usage = "usage: bottled-view [--claude-dir DIR] [--data-dir DIR] view [--port N] [--no-open]\n" +
	"       bottled-view [--claude-dir DIR] [--data-dir DIR] export [--format html|md] [-o FILE] [--force] SESSION\n\n" +
	"bottled view and bottled export run this binary; their --help says more.\n\n"

func main() {
	binflags.Main("bottled-view", func(ctx context.Context) error {
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	})
}

// run parses the flags bottled's commands share (flags beat the
// environment, which beats the defaults), then runs view or export.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := binflags.New("bottled-view", "", usage)
	dirs, ok, err := fs.Parse(args, stdout, stderr)
	if !ok {
		return err
	}
	claude, data := dirs.Claude, dirs.Data
	switch fs.Arg(0) {
	case "view":
		return runView(ctx, fs, fs.Args()[1:], claude, data, stdout, stderr)
	case "export":
		return runExport(ctx, fs, fs.Args()[1:], claude, data, stdout, stderr)
	case "":
		return binflags.Usagef("give a command: view or export")
	}
	return binflags.Usagef("unknown command %q: view or export", fs.Arg(0))
}

func runView(ctx context.Context, bin *binflags.Set, args []string, claude, data string, stdout, stderr io.Writer) error {
	fs := bin.Command("view")
	port := fs.Int("port", 0, "the port to listen on, on 127.0.0.1 (0: a free one)")
	noOpen := fs.Bool("no-open", false, "print the address without opening it in the browser")
	words, err := bin.ParseCommand(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(words) > 0 {
		return binflags.Usagef("view takes no arguments")
	}
	if *port < 0 || *port > 65535 {
		return binflags.Usagef("--port must be from 0 to 65535")
	}
	project, err := os.Getwd()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w (another program has it? --port 0 takes a free one)", *port, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := view.Config{Reader: bottles.Reader{ClaudeDir: claude, DataDir: data, Log: log}, Project: project, Token: view.NewToken(),
		Version: version.String(),
		Daemon: func(ctx context.Context) error {
			_, err := watch.Query(ctx, data)
			return err
		}}
	launcher := ""
	if !*noOpen {
		dir, err := os.MkdirTemp("", "bottled-view-") // 0700
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		launcher = filepath.Join(dir, "open.html")
	}
	return view.Serve(ctx, cfg, ln, func(s *view.Server) {
		fmt.Fprintln(stdout, s.URL())
		fmt.Fprintln(stderr, bin.Name()+": serving on 127.0.0.1 only; Ctrl-C stops it")
		if launcher != "" {
			openBrowser(bin.Name(), s.URL(), launcher, stderr)
		}
	})
}

// openBrowser opens url in the user's browser ($BROWSER, else the
// system's opener), without waiting for it, through a launcher file (see
// view.WriteLauncher) so that the token is on no command line. If the
// command cannot start, or exits with a failure (xdg-open does when it
// finds no browser, a $BROWSER script may), it says so, with why and the
// address to open by hand; the view goes on serving either way.
func openBrowser(prog, url, launcher string, stderr io.Writer) {
	if err := view.WriteLauncher(launcher, url); err != nil {
		fmt.Fprintf(stderr, "%s: could not open a browser (%v): open %s yourself\n", prog, err, url)
		return
	}
	name := "xdg-open"
	switch {
	case os.Getenv("BROWSER") != "":
		name = os.Getenv("BROWSER")
	case runtime.GOOS == "darwin":
		name = "open"
	}
	cmd := exec.Command(name, launcher)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "%s: could not start the browser command %s (%v): open %s yourself\n", prog, name, err, url)
		return
	}
	// Waits for the opener, which exits once the browser has the page
	// (xdg-open, open) or when the browser it started quits (a $BROWSER
	// that is the browser itself), and says a failure; it ends with the
	// opener or with the process, which nothing waits for it to tell.
	go func() {
		if err := cmd.Wait(); err != nil {
			fmt.Fprintf(stderr, "%s: the browser command %s failed (%v): open %s yourself\n", prog, name, err, url)
		}
	}()
}

func runExport(ctx context.Context, bin *binflags.Set, args []string, claude, data string, stdout, stderr io.Writer) error {
	fs := bin.Command("export")
	format := fs.String("format", view.FormatHTML, "html (a standalone page, no script) or md (the bottle)")
	out := fs.String("o", "", "write to `FILE` (refused if it exists, unless --force) instead of stdout")
	force := fs.Bool("force", false, "replace FILE if it exists")
	words, err := bin.ParseCommand(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return binflags.Usagef("export takes exactly one SESSION (got %d arguments)", len(words))
	}
	if *format != view.FormatHTML && *format != view.FormatMarkdown {
		return binflags.Usagef("--format must be html or md, not %q", *format)
	}
	reader := bottles.Reader{ClaudeDir: claude, DataDir: data}
	reader.Defaults(exportTimeout)
	id, err := reader.FindSession(words[0])
	if err != nil {
		return binflags.AsUsage(err)
	}
	if *out != "" {
		if err := checkOut(*out, *force); err != nil {
			return err
		}
	}
	// The render redacts with the patterns that can be used; the user who
	// exports is told what is wrong with the others, and it goes on. The
	// file is read once, for both.
	rules, err := bottles.LoadRules(data)
	if err != nil {
		fmt.Fprintf(stderr, "%s: warning: %v\n", bin.Name(), err)
	}
	cur, err := reader.Store().EnsureRead(ctx, bottles.ReadRequest{SessionID: id, ClaudeDir: claude, Timeout: reader.RenderTimeout, Rules: rules})
	switch {
	case err != nil && cur == nil:
		return err
	case err != nil:
		fmt.Fprintf(stderr, "%s: warning: could not bring the bottle up to date (%v); exporting it as rendered at %s\n",
			bin.Name(), err, cur.State.Rendered.Local().Format("2006-01-02 15:04:05"))
	}
	if cur.Archived {
		fmt.Fprintf(stderr, "%s: session %s was cleared (/clear); this is its archived bottle\n", bin.Name(), id)
	}
	if *out == "" {
		return view.Export(stdout, id, cur, *format, time.Local)
	}
	var page bytes.Buffer
	if err := view.Export(&page, id, cur, *format, time.Local); err != nil {
		return err
	}
	if err := writeFile(*out, *force, page.Bytes()); err != nil {
		if why := checkOut(*out, *force); why != nil { // it changed meanwhile
			return why
		}
		return err
	}
	return nil
}

// checkOut says what keeps an export from being written to path, the
// -o FILE, in words that say what to give instead; nil if nothing does.
func checkOut(path string, force bool) error {
	fi, err := os.Lstat(path) // a symbolic link is replaced, never written through
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory: give -o a file's path", path)
	case err == nil && !force:
		return fmt.Errorf("%s exists: --force replaces it", path)
	case err == nil:
		return nil
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: make it or give -o a path in a directory that does", dir)
	case errors.Is(err, syscall.ENOTDIR), err == nil && !di.IsDir():
		return fmt.Errorf("%s is not a directory: give -o a path in a directory", firstFile(dir))
	}
	return nil
}

// firstFile is the first of dir's ancestors (or dir) that is not a
// directory, dir if none is found.
func firstFile(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && !fi.IsDir() {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// writeFile writes path whole or not at all, 0600 (it holds a
// conversation), as safefile writes; without force, a file that appeared
// meanwhile is not replaced.
func writeFile(path string, force bool, data []byte) error {
	if force {
		return safefile.Write(path, data)
	}
	dir := filepath.Dir(path)
	tmp, _, err := safefile.WriteTemp(dir, safefile.TempPrefix+filepath.Base(path)+"-*", data, true)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil { // fails if path exists, atomically
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists: --force replaces it", path)
		}
		return err
	}
	return safefile.SyncDir(dir)
}
