package view

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"sessionURL": sessionURL,
	"lineURL":    func(id string, line int) string { return fmt.Sprintf("%s#L%d", sessionURL(id), line) },
}).ParseFS(templateFiles, "templates/*.html"))

// sessionURL is the page of a session: its id is in the path, so that a
// link can be opened in a new tab, bookmarked and shared between windows.
func sessionURL(id string) string { return "/s/" + url.PathEscape(id) }

// assetServer serves the embedded style sheet and script.
func assetServer() http.Handler {
	sub, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.FileServerFS(sub)
}

// frame is what every page's frame shows: the search box (with what it
// searches) and the daemon banner.
type frame struct {
	Title   string
	Page    string // list, session, search, message: the script's cue
	Session string // the session a session page shows
	Banner  string
	Query   string
	Project string // the project the search box searches, "" for all
	All     bool
	Body    any
}

func (s *Server) frame(title, page string) frame {
	return frame{Title: title, Page: page, Banner: s.daemonBanner(), Project: s.cfg.Project}
}

// write executes template name into a buffer first, so that a failure is
// a clean 500: name-page, the page with its frame, or name alone when
// part is set (a live page fetches only its part).
func (s *Server) write(w http.ResponseWriter, name string, f frame, part bool) {
	s.writeStatus(w, http.StatusOK, name, f, part)
}

// writeStatus is write with another status than 200.
func (s *Server) writeStatus(w http.ResponseWriter, status int, name string, f frame, part bool) {
	buf := pageBuffers.Get().(*bytes.Buffer)
	defer putPageBuffer(buf)
	tmpl := name + "-page"
	if part {
		tmpl = name
	}
	if err := templates.ExecuteTemplate(buf, tmpl, f); err != nil {
		s.cfg.Log.Warn("page", "template", name, "err", err)
		http.Error(w, "could not make the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// pageBuffers holds the buffers pages are written into: a list of
// thousands of sessions is megabytes, and a live list is fetched again
// on every change, so its buffer is kept rather than grown again from
// nothing each time.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// pageBufferKept is the largest buffer kept for the next page: a list of
// about 20,000 sessions.
const pageBufferKept = 8 << 20

func putPageBuffer(b *bytes.Buffer) {
	if b.Cap() > pageBufferKept {
		return
	}
	b.Reset()
	pageBuffers.Put(b)
}

// message answers with a page that says one thing.
func (s *Server) message(w http.ResponseWriter, status int, title, text string) {
	f := s.frame(title, "message")
	f.Body = text
	s.writeStatus(w, status, "message", f, false)
}

type listBody struct {
	Sessions template.HTML // the projects and their sessions as HTML (listHTML)
	Count    int
	Archived bool // cleared sessions are shown
	Cleared  int  // cleared sessions left out
	Note     string
}

// list serves every session, by project (the project of the most
// recently active first), newest first within each; cleared ones when
// asked for (?archived=1).
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	archived := r.URL.Query().Get("archived") == "1"
	body, err := s.listBody(r, archived)
	if err != nil {
		s.message(w, http.StatusInternalServerError, "Sessions", "The session list could not be read: "+err.Error())
		return
	}
	f := s.frame("Sessions", "list")
	f.All = true // the list shows every project: so does its search, unless unticked
	f.Body = body
	s.write(w, "list", f, r.URL.Query().Get("part") == "list")
}

func (s *Server) listBody(r *http.Request, archived bool) (*listBody, error) {
	ctx := r.Context()
	// One query lists the cleared sessions too (a cleared session shown is
	// one not resumed since, as Scope.Archived has it), and those are
	// counted rather than shown unless asked for: a second query would
	// cost a list of thousands a third more.
	all, err := s.ix.Sessions(ctx, index.Scope{Limit: index.Every, Archived: true})
	if err != nil {
		return nil, err
	}
	list := all
	if !archived {
		// all keeps its length (for Cleared) and is not read again.
		list = slices.DeleteFunc(all, func(s index.Session) bool { return s.Archived })
	}
	body := &listBody{Count: len(list), Archived: archived, Cleared: len(all) - len(list)}
	if b, err := s.ix.Building(ctx); err == nil && b != nil && b.Indexed < b.Total {
		body.Note = fmt.Sprintf("The search index is still being built: these are the newest %d of %d sessions (%d%%); the rest come as it goes.",
			b.Indexed, b.Total, b.Percent())
	}
	body.Sessions = listHTML(list, s.cfg.Location)
	return body, nil
}

type sessionBody struct {
	*bottlePage
	Warning string
}

// session serves a session's bottle as a page: brought up to date first,
// as `bottled show` does; a live page's refresh (?part=body) reads it as
// it is on disk, since a change the watcher saw is the newest bottle.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	arg := r.PathValue("id")
	id, err := s.cfg.FindSession(arg)
	var amb *bottles.AmbiguousError
	switch {
	case errors.As(err, &amb):
		s.ambiguous(w, amb)
		return
	case err != nil:
		s.message(w, http.StatusNotFound, "No such session", err.Error())
		return
	case id != arg:
		http.Redirect(w, r, sessionURL(id), http.StatusSeeOther)
		return
	}
	part := r.URL.Query().Get("part") == "body"
	var cur *bottles.Current
	warning := ""
	if part {
		cur, err = s.onDisk(id)
	} else {
		cur, err = s.cfg.EnsureRead(r.Context(), id)
	}
	switch {
	case err != nil && cur != nil:
		warning = fmt.Sprintf("This bottle could not be brought up to date (%v); it is shown as rendered at %s.",
			err, cur.State.Rendered.In(s.cfg.Location).Format("2006-01-02 15:04:05"))
	case err != nil:
		s.message(w, http.StatusNotFound, "No bottle", err.Error())
		return
	case cur == nil:
		s.message(w, http.StatusNotFound, "No bottle", "Session "+id+" has no bottle.")
		return
	}
	pg, err := buildPage(s.md, s.cache, id, cur, s.cfg.Location)
	if err != nil {
		s.message(w, http.StatusInternalServerError, "Unreadable bottle", err.Error())
		return
	}
	title := "Session " + id[:min(len(id), 8)]
	if len(pg.Outline) > 0 {
		title = trimmed(pg.Outline[0].Text, 60)
	}
	f := s.frame(title, "session")
	f.Session = id
	if pg.Project != "" {
		f.Project = pg.Project
	}
	f.Body = sessionBody{bottlePage: pg, Warning: warning}
	s.write(w, "session", f, part)
}

// ambiguous lists the sessions a start of an id names.
func (s *Server) ambiguous(w http.ResponseWriter, amb *bottles.AmbiguousError) {
	f := s.frame("Which session?", "message")
	type cand struct{ ID, LastActive, FirstPrompt string }
	var cands []cand
	for _, c := range amb.Candidates {
		cands = append(cands, cand{c.ID, index.FormatTime(c.LastActive, s.cfg.Location), trimmed(c.FirstPrompt, 120)})
	}
	f.Body = struct {
		Prefix string
		Count  int
		List   []cand
	}{amb.Prefix, amb.Count, cands}
	s.writeStatus(w, http.StatusMultipleChoices, "ambiguous", f, false)
}

type searchBody struct {
	Hits    []searchHit
	Error   string
	Note    string
	Where   string
	Wider   []widerLink
	Since   string
	Until   string
	Cleared bool
}

type searchHit struct {
	Session, When, Speaker, Project, Snippet string
	Line                                     int
	Archived                                 bool
}

type widerLink struct{ Text, URL string }

// search runs a search as `bottled search` does: in the project of
// ?project= (the view's working directory's by default), or every
// project with ?all=1; cleared sessions with ?archived=1; ?since= and
// ?until= as the CLI reads them.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := s.frame("Search", "search")
	f.Query = strings.TrimSpace(q.Get("q"))
	if p, ok := q["project"]; ok {
		f.Project = p[0]
	}
	f.All = q.Get("all") == "1" || f.Project == ""
	body := &searchBody{Since: q.Get("since"), Until: q.Get("until"), Cleared: q.Get("archived") == "1"}
	f.Body = body
	if f.Query == "" {
		s.write(w, "search", f, false)
		return
	}
	f.Title = f.Query + " — search"
	scope := index.Scope{Archived: body.Cleared, Limit: index.MaxLimit}
	if !f.All {
		scope.Project = f.Project
	}
	if err := scope.Bound(body.Since, body.Until, s.cfg.Now(), s.cfg.Location); err != nil {
		body.Error = err.Error() // which, and the forms index.ParseTime reads
		s.writeStatus(w, http.StatusBadRequest, "search", f, false)
		return
	}
	hits, err := s.ix.Search(r.Context(), f.Query, scope)
	if err != nil {
		body.Error = err.Error()
		s.write(w, "search", f, false)
		return
	}
	for _, h := range hits {
		body.Hits = append(body.Hits, searchHit{Session: h.Session, When: index.FormatTime(h.Time, s.cfg.Location), Speaker: h.Kind.String(),
			Project: h.Project, Snippet: h.Snippet, Line: h.Line, Archived: h.Archived})
	}
	if ext, err := s.ix.Extent(r.Context(), scope); err == nil {
		s.describe(body, f, scope, ext)
	}
	s.write(w, "search", f, false)
}

// describe says what a search covered and links to wider ones, as
// `bottled search` says it on stderr.
func (s *Server) describe(body *searchBody, f frame, scope index.Scope, ext index.Extent) {
	switch {
	case scope.Project == "":
		body.Where = "every project"
	case ext.InProject:
		body.Where = ext.Project
	default:
		body.Where = "the sessions under " + ext.Project
	}
	body.Where += fmt.Sprintf(" (%d sessions", ext.Sessions)
	if ext.Cleared > 0 {
		body.Where += fmt.Sprintf(", %d cleared left out", ext.Cleared)
	}
	body.Where += ")"
	if b := ext.Build; b != nil && b.Indexed < b.Total {
		body.Note = fmt.Sprintf("Searched the newest %d of %d sessions (%d%%): the search index is still being built.", b.Indexed, b.Total, b.Percent())
	}
	link := func(all, archived bool) string {
		v := url.Values{"q": {f.Query}, "project": {f.Project}}
		if all {
			v.Set("all", "1")
		}
		if archived {
			v.Set("archived", "1")
		}
		for k, x := range map[string]string{"since": body.Since, "until": body.Until} {
			if x != "" {
				v.Set(k, x)
			}
		}
		return "/search?" + v.Encode()
	}
	if scope.Project != "" && ext.All > ext.Sessions {
		body.Wider = append(body.Wider, widerLink{fmt.Sprintf("every project (%d sessions)", ext.All), link(true, scope.Archived)})
	}
	if ext.Cleared > 0 {
		body.Wider = append(body.Wider, widerLink{fmt.Sprintf("with the %d cleared sessions", ext.Cleared), link(scope.Project == "", true)})
	}
}
