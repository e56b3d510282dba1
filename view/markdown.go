package view

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/bottled-dev/bottled/render"
)

// Bottle text is untrusted: a prompt can hold anything a user pasted, an
// assistant's answer anything a web page said. It is rendered by goldmark
// without html.WithUnsafe, so raw HTML shows as text and goldmark drops
// link destinations it finds dangerous; on top of that every link and
// image destination is checked against an allow-list here (goldmark's
// check is a prefix test, and browsers ignore tabs and newlines inside a
// scheme), and images become links, so that no page loads anything from
// elsewhere.

// markdown renders message text; one for the user's messages (every line
// break kept: people paste logs) and one for the assistant's (markdown as
// written).
type markdown struct {
	user, assistant goldmark.Markdown
}

func newMarkdown() *markdown {
	build := func(hardWraps bool) goldmark.Markdown {
		var opts []renderer.Option
		if hardWraps {
			opts = append(opts, html.WithHardWraps())
		}
		return goldmark.New(
			goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
			goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
			goldmark.WithRendererOptions(append(opts, renderer.WithNodeRenderers(util.Prioritized(htmlAsText{}, 100)))...),
		)
	}
	return &markdown{user: build(true), assistant: build(false)}
}

// rendered is a message's HTML, cut where an anchor naming a bottle line
// goes: the anchors' lines are relative to the message's first line, so
// that the same message rendered once serves wherever it is in the bottle
// (a bottle that grows by a turn moves every line of it down).
type rendered struct {
	parts []renderedPart
	size  int
}

type renderedPart struct {
	line int // of the message, 0-based: the anchor before html
	html []byte
}

// writeTo writes the message as HTML whose first line is bottle line
// first, without an anchor for line taken (the id of what holds it).
func (r *rendered) writeTo(w *bytes.Buffer, first, taken int) {
	for _, p := range r.parts {
		if n := first + p.line; n != taken {
			w.WriteString(`<span class="ln" id="L`)
			w.WriteString(strconv.Itoa(n))
			w.WriteString(`"></span>`)
		}
		w.Write(p.html)
	}
}

// render renders src, the text of a message, with an anchor before each
// top-level part (paragraph, list, code block…).
func (m *markdown) render(src []byte, user bool) (*rendered, error) {
	md := m.assistant
	if user {
		md = m.user
	}
	doc := md.Parser().Parse(text.NewReader(src))
	lines := render.LinesOf(src)
	out := md.Renderer()
	r := &rendered{}
	var buf bytes.Buffer
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		off, _ := firstOffset(n)
		buf.Reset()
		if err := out.Render(&buf, src, n); err != nil {
			return nil, err
		}
		r.parts = append(r.parts, renderedPart{line: lines.At(off) - 1, html: bytes.Clone(buf.Bytes())})
		r.size += buf.Len() + 32
	}
	return r, nil
}

// firstOffset is where the source of block node n starts: its first line,
// or its first descendant's.
func firstOffset(n ast.Node) (int, bool) {
	if n.Type() == ast.TypeBlock {
		if l := n.Lines(); l != nil && l.Len() > 0 {
			return l.At(0).Start, true
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if off, ok := firstOffset(c); ok {
			return off, true
		}
	}
	return 0, false
}

// safeLinks is the AST transformer that keeps only links whose
// destinations are allowed (see allowedURL), turns the others into their
// text, and every image into a link to it (or into its text). It also puts
// a message's headings below the page's.
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var bad []ast.Node
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !allowedURL(n.Destination) {
				bad = append(bad, n)
			}
		case *ast.AutoLink:
			if !allowedURL(n.URL(src)) {
				bad = append(bad, n)
			}
		case *ast.Image:
			images = append(images, n)
		case *ast.Heading:
			// The page's own headings are h1 and h2: a message's come
			// below them.
			n.Level = min(n.Level+2, 6)
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		if allowedURL(img.Destination) {
			link := ast.NewLink()
			link.Destination = img.Destination
			link.Title = img.Title
			link.AppendChild(link, ast.NewString([]byte("[image: ")))
			moveChildren(img, link)
			link.AppendChild(link, ast.NewString([]byte("]")))
			img.Parent().ReplaceChild(img.Parent(), img, link)
		} else {
			bad = append(bad, img)
		}
	}
	for _, n := range bad {
		unwrap(n, src)
	}
}

// moveChildren moves from's children to the end of to's.
func moveChildren(from, to ast.Node) {
	for c := from.FirstChild(); c != nil; {
		next := c.NextSibling()
		from.RemoveChild(from, c)
		to.AppendChild(to, c)
		c = next
	}
}

// unwrap replaces a link or image by its text: its children, or, for an
// autolink, the URL as text.
func unwrap(n ast.Node, src []byte) {
	parent := n.Parent()
	if parent == nil {
		return
	}
	if a, ok := n.(*ast.AutoLink); ok {
		parent.ReplaceChild(parent, n, ast.NewString(append([]byte(nil), a.Label(src)...)))
		return
	}
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		n.RemoveChild(n, c)
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

// allowedURL reports whether a link may point to dest: http, https and
// mailto URLs, and anchors in the page. dest is read as a browser reads
// it: entities are already decoded by the parser, and the tabs, newlines
// and control characters a browser drops are dropped before the scheme is
// looked at.
func allowedURL(dest []byte) bool {
	var b strings.Builder
	for _, r := range string(dest) {
		if r <= ' ' || r == 0x7f {
			continue
		}
		b.WriteRune(r)
	}
	u := strings.ToLower(b.String())
	if strings.HasPrefix(u, "#") {
		return true
	}
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(u, scheme) {
			return true
		}
	}
	return false
}

// htmlAsText renders what would be raw HTML (a tag inline, an HTML block)
// as the text it is, escaped: goldmark without html.WithUnsafe leaves it
// out, but a user who pasted "<script>" said so, and the page shows it.
type htmlAsText struct{}

func (htmlAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				_, _ = w.Write(util.EscapeHTML(seg.Value(src)))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		_, _ = w.WriteString("<p class=\"html\">")
		lines := b.Lines()
		for i := range lines.Len() {
			line := lines.At(i)
			_, _ = w.Write(util.EscapeHTML(line.Value(src)))
		}
		if b.HasClosure() {
			_, _ = w.Write(util.EscapeHTML(b.ClosureLine.Value(src)))
		}
		_, _ = w.WriteString("</p>\n")
		return ast.WalkSkipChildren, nil
	})
}
