// Package view is bottled's web view (`bottled view`): every session's
// bottle as a readable page, served on the loopback interface by the
// process that runs it, live while it is open, with the search index's
// search. It is one more of bottled's interfaces beside the MCP server: it
// reads bottles through the same calls as `bottled show` (a stale bottle
// is rendered first) and lists and searches through the same index calls
// and scopes as `bottled sessions` and `bottled search`. It also writes a
// session as one standalone HTML file (Export).
//
// Nobody but the user who started it reads it: requests must carry the
// per-run token (given once in the URL, then kept in an HttpOnly,
// SameSite=Strict cookie) and name the loopback address and port as their
// Host (DNS rebinding); pages send a strict Content-Security-Policy and
// load nothing from elsewhere. Bottle text is untrusted (markdown.go).
//
// It watches the bottles directory itself (the daemon keeps no port) and
// tells open pages over server-sent events which bottles changed (live.go).
package view

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/textcut"
)

// Tunables.
const (
	// RenderTimeout bounds rendering a stale or missing bottle before its
	// page is served: a person waits longer than Claude Code waits for the
	// hook, not as long as for `bottled show` (30 s).
	RenderTimeout = 10 * time.Second
	// shutdownGrace is how long open requests get to finish at Ctrl-C
	// before their connections are closed.
	shutdownGrace = 2 * time.Second
)

// Config is what the view needs to know. Its Reader's Location is the
// zone bottles were rendered in, its RenderTimeout (a render before a
// page) RenderTimeout if 0.
type Config struct {
	bottles.Reader
	// Project is the directory whose project a search covers by default,
	// as for `bottled search` (the working directory).
	Project string
	// Token is the secret every request must carry (NewToken).
	Token string
	// Daemon asks whether bottled's daemon runs for DataDir: nil when it
	// answers, else why not (watch.Query). Nil means never.
	Daemon  func(ctx context.Context) error
	Version string
}

// NewToken returns a new secret for a run: 32 random bytes in hex.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// Server serves the pages of one run.
type Server struct {
	cfg   Config
	ix    *index.Index
	host  string // the only Host requests may name: the listener's address
	md    *markdown
	cache *renderCache
	live  *hub
}

// New returns a server for the index ix that answers requests made to
// host (the listener's "127.0.0.1:port").
func New(cfg Config, ix *index.Index, host string) *Server {
	cfg.Defaults(RenderTimeout)
	return &Server{cfg: cfg, ix: ix, host: host, md: newMarkdown(), cache: newRenderCache(renderCacheBytes), live: newHub()}
}

// URL is the address to open: it carries the token, which the first
// request trades for a cookie.
func (s *Server) URL() string { return "http://" + s.host + "/?token=" + s.cfg.Token }

// Serve opens the search index of cfg.DataDir and serves the view on ln
// until ctx ends; ready, if set, is called with the server once it
// answers. It owns every goroutine it starts: the index's background
// build, the bottles watcher, the daemon check and the HTTP server's.
func Serve(ctx context.Context, cfg Config, ln net.Listener, ready func(*Server)) error {
	cfg.Defaults(RenderTimeout)
	// Built for a moment at most (index.OpenForReader), the rest in the
	// background while pages answer from what is indexed.
	ix, err := index.OpenForReader(ctx, cfg.DataDir, cfg.Location, cfg.Log)
	if err != nil {
		return err
	}
	defer ix.Close()
	s := New(cfg, ix, ln.Addr().String())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watcher, err := s.watchBottles()
	if err != nil {
		return err
	}
	s.askDaemon(ctx)
	srv := &http.Server{Handler: s.Handler(), BaseContext: func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	var watching, checking, serving error
	go func() { // finishes an unfinished index build; ends with ctx
		defer func() { done <- struct{}{} }()
		ix.FinishBuild(ctx, cfg.Log)
	}()
	go func() { // tells open pages which bottles changed; ends with ctx
		defer func() { done <- struct{}{} }()
		watching = s.follow(ctx, watcher)
	}()
	go func() { // follows whether the daemon runs; ends with ctx
		defer func() { done <- struct{}{} }()
		checking = s.checkDaemon(ctx)
	}()
	go func() { // stops the HTTP server when ctx ends
		defer func() { done <- struct{}{} }()
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer scancel()
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
	}()
	if ready != nil {
		ready(s)
	}
	serving = srv.Serve(ln)
	cancel()
	for range 4 {
		<-done
	}
	if errors.Is(serving, http.ErrServerClosed) {
		serving = nil
	}
	return errors.Join(serving, watching, checking)
}

// Handler returns the view's routes behind its guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.list)
	mux.HandleFunc("GET /s/{id}", s.session)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /events", s.events)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer()))
	return s.guard(mux)
}

// securityHeaders are sent with every answer, refusals included: nothing
// may run but the view's own script, nothing load from elsewhere, no
// other page frame it, and no answer be kept in a cache (pages hold
// whole conversations).
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"X-Frame-Options":              "DENY",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
	"Cache-Control":                "no-store",
}

// cookieName is the cookie that holds the token; named after the port,
// since browsers keep cookies per host, not per port, and two views may
// run at once.
func (s *Server) cookieName() string {
	_, port, _ := net.SplitHostPort(s.host)
	return "bottled-view-" + port
}

// guard refuses what does not come from the user's own browser tab: a
// Host other than the listener's (a DNS rebinding page), and a request
// without the token. A request carrying the token in its URL gets the
// cookie and is sent to the same URL without it, so that the token
// stays out of the history and of links.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if r.Host != s.host {
			refuse(w, "this page answers only at "+s.host+": open the address bottled view printed")
			return
		}
		q := r.URL.Query()
		if tok := q.Get("token"); tok != "" {
			if !s.valid(tok) {
				refuse(w, "this token is not this view's: open the address bottled view printed last")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.cfg.Token, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			moveOn(w, u.RequestURI())
			return
		}
		c, err := r.Cookie(s.cookieName())
		if err != nil || !s.valid(c.Value) {
			refuse(w, "open the address bottled view printed (it carries this run's token) to read this page")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// moveOn answers the request that brought the token with a page that
// goes on to target, the same address without it. Not a redirect: a
// SameSite=Strict cookie is not sent along a redirect whose chain began
// on another site (the launcher file bottled-view opens, a link pasted
// elsewhere), but it is on the navigation this page of the view starts.
func moveOn(w http.ResponseWriter, target string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Refresh", "0; url="+target)
	t := template.HTMLEscapeString(target)
	fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=%s"><title>bottled</title><a href="%s">Open bottled view</a>`+"\n", t, t)
}

// WriteLauncher writes the file bottled-view opens in the browser: a page
// that goes on to url (which carries the token) at once. Opening the file
// rather than the address keeps the token out of the command lines of the
// opener and the browser, which other users of the machine can read; the
// file is the user's alone (0600).
func WriteLauncher(path, url string) error {
	u := template.HTMLEscapeString(url)
	page := fmt.Sprintf(`<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">`+
		`<meta http-equiv="refresh" content="0; url=%s"><title>bottled view</title><a href="%s">Open bottled view</a>`+"\n", u, u)
	return os.WriteFile(path, []byte(page), 0o600)
}

func (s *Server) valid(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

// refuse answers 403 with why, as plain text.
func refuse(w http.ResponseWriter, why string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintln(w, "403 forbidden: "+why)
}

// trimmed is s cut to n characters (grapheme clusters), with an ellipsis
// after them when cut.
func trimmed(s string, n int) string {
	s = strings.TrimSpace(s)
	if head := textcut.Head(s, n, textcut.Graphemes); len(head) < len(s) {
		return head + textcut.Ellipsis
	}
	return s
}
