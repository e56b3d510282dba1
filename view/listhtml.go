package view

import (
	"cmp"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/render"
)

// listRowBytes is about the size of one session's row in the list's
// HTML, so that a list of thousands is written into one allocation.
const listRowBytes = 450

// listHTML writes the sessions of list (newest first) as HTML, by
// project, the project of the most recently active session first and
// each project's sessions in list order; every value escaped. It writes
// the bytes itself rather than through a template or fmt, which took
// most of the time of a list of thousands.
func listHTML(list []index.Session, loc *time.Location) template.HTML {
	var projects []string
	members := map[string][]int{} // project → indexes into list
	for i, ses := range list {
		if _, ok := members[ses.Project]; !ok {
			projects = append(projects, ses.Project)
		}
		members[ses.Project] = append(members[ses.Project], i)
	}
	w := listWriter{loc: loc}
	w.b.Grow(len(list) * listRowBytes)
	for _, p := range projects {
		w.raw(`<section class="project"><h2>`)
		w.text(cmp.Or(p, "(no project)"))
		w.raw(` <span class="count">`)
		w.num(len(members[p]))
		w.raw("</span></h2>\n<ol class=\"sessions\">\n")
		for _, i := range members[p] {
			w.session(list[i])
		}
		w.raw("</ol>\n</section>\n")
	}
	return template.HTML(w.b.String()) // every value is escaped by text
}

// listWriter builds the list's HTML.
type listWriter struct {
	b       strings.Builder
	loc     *time.Location
	scratch []byte // for numbers and times
}

func (w *listWriter) session(s index.Session) {
	cls := `<li class="session" data-id="`
	if s.Archived {
		cls = `<li class="session cleared" data-id="`
	}
	w.raw(cls)
	w.text(s.ID)
	w.raw(`"><a href="`)
	w.text(sessionURL(s.ID))
	w.raw(`" dir="auto"><span class="prompt">`) // the prompt's direction, right to left for Arabic
	w.text(cmp.Or(trimmed(s.FirstPrompt, 160), "—"))
	w.raw("</span></a>\n" + `<span class="meta"><span title="last active">`)
	w.stamp(s.LastActive)
	w.raw(`</span> · started `)
	w.stamp(s.Started)
	w.raw(" · ")
	w.count(s.Turns, "turn")
	if s.Compactions > 0 {
		w.raw(" · ")
		w.count(s.Compactions, "compaction")
	}
	if s.Mode == render.ModeReconstructed {
		w.raw(` · <span class="mode" title="Claude Code deleted the transcript: the bottle was rebuilt from claude-mem">reconstructed</span>`)
	}
	if s.Archived {
		w.raw(` · <span class="mode">cleared</span>`)
	}
	w.raw(` · <code class="id">`)
	w.text(s.ID)
	w.raw("</code></span></li>\n")
}

// raw writes HTML as it is.
func (w *listWriter) raw(html string) { w.b.WriteString(html) }

// textEscaper escapes text as html/template's HTMLEscapeString does (the
// characters html.EscapeString escapes, and NUL), writing straight into
// the list's buffer without a string per value.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "\x00", "\uFFFD")

// text writes s escaped (textEscaper).
func (w *listWriter) text(s string) { textEscaper.WriteString(&w.b, s) }

func (w *listWriter) num(n int) {
	w.scratch = strconv.AppendInt(w.scratch[:0], int64(n), 10)
	w.b.Write(w.scratch)
}

// count writes "1 noun" or "N nouns".
func (w *listWriter) count(n int, noun string) {
	w.num(n)
	w.raw(" " + noun)
	if n != 1 {
		w.raw("s")
	}
}

// stamp writes t as index.FormatTime does.
func (w *listWriter) stamp(t time.Time) {
	if t.IsZero() {
		w.raw("—")
		return
	}
	w.scratch = t.In(w.loc).AppendFormat(w.scratch[:0], index.TimeLayout)
	w.b.Write(w.scratch)
}
