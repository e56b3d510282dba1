package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBrowserThatFails: a browser command that cannot start, or exits
// with a failure, is said on stderr with why (its exit status), with the
// address to open by hand; the view goes on serving.
func TestBrowserThatFails(t *testing.T) {
	script := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-browser")
	for _, c := range []struct {
		browser, want string
	}{
		{"/bin/false", "bottled-view: the browser command /bin/false failed (exit status 1): open {URL} yourself"},
		{script, "bottled-view: the browser command " + script + " failed (exit status 3): open {URL} yourself"},
		{missing, "bottled-view: could not start the browser command " + missing + " ("},
	} {
		t.Run(filepath.Base(c.browser), func(t *testing.T) {
			w := newWorld(t)
			t.Setenv("BROWSER", c.browser)
			cmd := exec.Command(binary("bottled-view"), "--claude-dir", w.claude, "--data-dir", w.data, "view")
			stdout, _ := cmd.StdoutPipe()
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
			url, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("no address: %v", err)
			}
			url = strings.TrimSpace(url)
			lines := make(chan string)
			go func() { // reads the view's stderr until it ends
				defer close(lines)
				for s := bufio.NewScanner(stderr); s.Scan(); {
					lines <- s.Text()
				}
			}()
			want := strings.ReplaceAll(c.want, "{URL}", url)
			deadline := time.After(30 * time.Second)
			var said []string
		read:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the view stopped; it said:\n%s", strings.Join(said, "\n"))
					}
					said = append(said, l)
					if strings.HasPrefix(l, want) && (strings.HasSuffix(l, url+" yourself")) {
						break read
					}
				case <-deadline:
					t.Fatalf("within 30 s, stderr did not say %q; it said:\n%s", want, strings.Join(said, "\n"))
				}
			}
			resp, err := http.Get(url)
			if err != nil {
				t.Fatalf("the view stopped serving: %v", err)
			}
			resp.Body.Close()
			go func() { // the rest of stderr, so that the view never blocks on it
				for range lines {
				}
			}()
		})
	}
}
