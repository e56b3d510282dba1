package view

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Live pages: the view watches the bottles directory and its archive
// (the daemon keeps no port, and bottles are written by the daemon, the
// hooks and the CLI alike), and tells every open page, over server-sent
// events, the id of each session whose bottle changed; a page of that
// session, or the list, fetches its new content. A bottle is renamed into
// place whole, so one event is one new bottle: nothing is debounced, and a
// page hears of a write within milliseconds.

// Tunables.
const (
	// daemonPoll is how often the view asks whether the daemon runs: a
	// status query costs the daemon microseconds, and a page that says
	// "no daemon" a couple of seconds late misleads nobody.
	daemonPoll = 2 * time.Second
	// daemonAsk bounds one question to the daemon.
	daemonAsk = time.Second
	// keepAlive is how often an idle event stream gets a comment, so that
	// a connection the browser dropped is noticed and closed.
	keepAlive = 15 * time.Second
)

// daemonKey is the key in a subscriber's pending set that says the
// daemon's state changed (session ids are never empty).
const daemonKey = ""

// hub hands changes to the open event streams without ever waiting for
// one: each subscriber has a set of what changed since it last wrote,
// which a burst of writes only adds to.
type hub struct {
	mu     sync.Mutex // guards subs, daemon and daemonWhy
	subs   map[*subscriber]struct{}
	daemon bool   // the daemon answered the last check
	why    string // why it did not
}

type subscriber struct {
	mu      sync.Mutex // guards pending
	pending map[string]struct{}
	wake    chan struct{} // capacity 1: something is pending
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe() *subscriber {
	sub := &subscriber{pending: map[string]struct{}{}, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub
}

func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
}

// changed tells every subscriber that key changed.
func (h *hub) changed(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		sub.mu.Lock()
		sub.pending[key] = struct{}{}
		sub.mu.Unlock()
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// setDaemon records whether the daemon answers, telling the subscribers
// when that changed.
func (h *hub) setDaemon(up bool, why string) {
	h.mu.Lock()
	same := h.daemon == up && h.why == why
	h.daemon, h.why = up, why
	h.mu.Unlock()
	if !same {
		h.changed(daemonKey)
	}
}

func (h *hub) daemonState() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.daemon, h.why
}

// take empties the subscriber's pending set.
func (sub *subscriber) take() []string {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	keys := make([]string, 0, len(sub.pending))
	for k := range sub.pending {
		keys = append(keys, k)
	}
	clear(sub.pending)
	return keys
}

// watchBottles starts watching the data directory, the bottles directory
// and its archive (those that exist: the others are added when they
// appear).
func (s *Server) watchBottles() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch the bottles: %w", err)
	}
	bottles, archive := s.bottlesDirs()
	for _, dir := range []string{s.cfg.DataDir, bottles, archive} {
		if err := w.Add(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			w.Close()
			return nil, fmt.Errorf("watch %s: %w", dir, err)
		}
	}
	return w, nil
}

// follow passes the watcher's events on to the hub until ctx ends, then
// closes the watcher.
func (s *Server) follow(ctx context.Context, w *fsnotify.Watcher) error {
	defer w.Close()
	bottles, archive := s.bottlesDirs()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				s.live.changed("*") // every page looks again
				continue
			}
			s.cfg.Log.Warn("watch the bottles", "err", err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
			switch {
			case ev.Name == bottles || ev.Name == archive:
				if ev.Has(fsnotify.Create) {
					_ = w.Add(ev.Name) // made after the view started
					s.live.changed("*")
				}
			case dir == bottles:
				if id := sessionOfFile(name, false); id != "" {
					s.live.changed(id)
				}
			case dir == archive:
				if id := sessionOfFile(name, true); id != "" {
					s.live.changed(id)
				}
			}
		}
	}
}

// checkDaemon asks whether the daemon runs every daemonPoll, until ctx
// ends (Serve asked once before it serves).
func (s *Server) checkDaemon(ctx context.Context) error {
	if s.cfg.Daemon == nil {
		return nil
	}
	tick := time.NewTicker(daemonPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			s.askDaemon(ctx)
		}
	}
}

// askDaemon asks once whether the daemon runs.
func (s *Server) askDaemon(ctx context.Context) {
	if s.cfg.Daemon == nil {
		s.live.setDaemon(false, "")
		return
	}
	actx, cancel := context.WithTimeout(ctx, daemonAsk)
	err := s.cfg.Daemon(actx)
	cancel()
	switch {
	case ctx.Err() != nil:
	case err != nil:
		s.live.setDaemon(false, err.Error())
	default:
		s.live.setDaemon(true, "")
	}
}

// events streams the changes: "bottle" events whose data is a session id
// ("*" for any), and "daemon" events whose data is the daemon banner's
// text. It ends when the page goes away or the view stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flush := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	sub := s.live.subscribe()
	defer s.live.unsubscribe(sub)
	fmt.Fprint(w, "retry: 1000\n\n")
	s.writeDaemon(w)
	if err := flush.Flush(); err != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-sub.wake:
			for _, key := range sub.take() {
				if key == daemonKey {
					s.writeDaemon(w)
					continue
				}
				fmt.Fprintf(w, "event: bottle\ndata: %s\n\n", key)
			}
		}
		if err := flush.Flush(); err != nil {
			return
		}
	}
}

func (s *Server) writeDaemon(w http.ResponseWriter) {
	fmt.Fprintf(w, "event: daemon\ndata: %s\n\n", s.daemonBanner())
}

// daemonBanner says whether the pages follow the daemon's renders.
func (s *Server) daemonBanner() string {
	up, _ := s.live.daemonState()
	if up {
		return ""
	}
	return "No daemon is running (start it with bottled run, or bottled install): this shows the bottles as they are on disk, and a session's page renders its bottle when you open it."
}
