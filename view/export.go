package view

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/bottled-dev/bottled/bottles"
)

// Export formats.
const (
	FormatHTML     = "html"
	FormatMarkdown = "md"
)

// Export writes the bottle cur of session id to w as one standalone file:
// in FormatHTML the session's page with its style inlined and no script
// (its policy forbids any), readable offline and anywhere; in
// FormatMarkdown the bottle as it is. loc is the zone the bottle was
// rendered in.
func Export(w io.Writer, id string, cur *bottles.Current, format string, loc *time.Location) error {
	switch format {
	case FormatMarkdown:
		_, err := w.Write(cur.Data)
		return err
	case FormatHTML:
	default:
		return fmt.Errorf("unknown format %q (html or md)", format)
	}
	if loc == nil {
		loc = time.Local
	}
	pg, err := buildPage(newMarkdown(), newRenderCache(0), id, cur, loc)
	if err != nil {
		return err
	}
	css, err := assetFiles.ReadFile("assets/view.css")
	if err != nil {
		return err
	}
	title := "Session " + id
	if len(pg.Outline) > 0 {
		title = trimmed(pg.Outline[0].Text, 60)
	}
	f := frame{Title: title, Page: "export", Session: id, Body: sessionBody{bottlePage: pg}}
	var buf bytes.Buffer
	err = templates.ExecuteTemplate(&buf, "export-page", struct {
		Frame frame
		Style template.CSS
	}{f, template.CSS(css)}) // our own embedded style sheet
	if err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}
