package view

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
)

// served is a view serving on a real loopback listener, as bottled-view
// runs it.
type served struct {
	s    *Server
	done chan error
	stop context.CancelFunc
}

func serve(t *testing.T, cfg Config) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sv := &served{done: make(chan error, 1), stop: cancel}
	ready := make(chan *Server, 1)
	go func() { sv.done <- Serve(ctx, cfg, ln, func(s *Server) { ready <- s }) }()
	select {
	case sv.s = <-ready:
	case err := <-sv.done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the view did not start within 30 s")
	}
	t.Cleanup(func() { sv.close(t) })
	return sv
}

// close stops the view and waits for Serve to return, open event streams
// and all.
func (sv *served) close(t *testing.T) {
	if sv.stop == nil {
		return
	}
	sv.stop()
	sv.stop = nil
	select {
	case err := <-sv.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return within 10 s of its context's end")
	}
}

func (sv *served) request(t *testing.T, path string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, "http://"+sv.s.host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: sv.s.cookieName(), Value: sv.s.cfg.Token})
	return req
}

// TestLiveEvents: the event stream says at once whether the daemon runs,
// then names each session whose bottle is written, live or archived;
// stopping the view ends the streams.
func TestLiveEvents(t *testing.T) {
	data := t.TempDir()
	writeTalks(t, data, talk{ID: "s-first", CWD: "/p", Start: day, Turns: [][2]string{{"hello", "hi"}}})
	sv := serve(t, Config{Reader: bottles.Reader{ClaudeDir: filepath.Join(data, "claude"), DataDir: data, Location: time.UTC}, Token: NewToken(),
		Daemon: func(context.Context) error { return errors.New("no socket") }})
	res, err := http.DefaultClient.Do(sv.request(t, "/events"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, ct)
	}
	events := make(chan [2]string, 100)
	go func() { // reads the stream until the view closes it
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, v}
			}
		}
	}()
	await := func(what, name, data string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("%s: the stream ended", what)
				}
				if ev[0] == name && (data == "" || ev[1] == data) {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no %s event %q within 10 s", what, name, data)
			}
		}
	}
	await("at the start", "daemon", "")
	writeTalks(t, data, talk{ID: "s-second", CWD: "/p", Start: day, Turns: [][2]string{{"new", "session"}}})
	await("a new bottle", "bottle", "s-second")
	replaceBottle(t, data, talk{ID: "s-first", CWD: "/p", Start: day, Turns: [][2]string{{"hello", "hi"}, {"more", "turns"}}})
	await("a bottle grown", "bottle", "s-first")
	sv.close(t)
	for range events {
	}
}

// TestDaemonBanner: without a daemon the pages say so; with one, they do
// not.
func TestDaemonBanner(t *testing.T) {
	data := t.TempDir()
	up := make(chan error, 1)
	up <- errors.New("no socket")
	sv := serve(t, Config{Reader: bottles.Reader{DataDir: data, ClaudeDir: data, Location: time.UTC}, Token: testToken,
		Daemon: func(context.Context) error {
			select {
			case err := <-up:
				up <- err
				return err
			default:
				return nil
			}
		}})
	res, err := http.DefaultClient.Do(sv.request(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_, _ = bufio.NewReader(res.Body).WriteTo(&b)
	res.Body.Close()
	mustContain(t, "the list without a daemon", b.String(), "No daemon is running", "bottled run")
	<-up // the daemon answers from now on
	sv.s.askDaemon(context.Background())
	_, body := (&testServer{t: t, s: sv.s, h: sv.s.Handler()}).do("/", sv.s.host, true)
	if _, after, _ := strings.Cut(body, `<div id="daemon"`); !strings.HasPrefix(after, ` class="banner" role="status" hidden></div>`) {
		t.Errorf("the list with a daemon shows the banner: %.200s", after)
	}
}
