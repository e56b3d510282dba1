package view

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
)

// TestRightToLeftText: every element that holds what the user or the
// assistant wrote (messages, outline entries, the list's prompts, titles,
// search snippets) takes its direction from its text (dir="auto"), so
// that Arabic and Hebrew read right to left, in the page and in the
// export alike; and the style aligns text to where it starts, not to the
// left.
func TestRightToLeftText(t *testing.T) {
	const (
		prompt = "أضف مهلة لإعادة المحاولة"
		answer = "הוספתי השהיה לניסיון החוזר"
	)
	data := t.TempDir()
	writeTalks(t, data, talk{ID: "s-rtl", CWD: "/home/u/app", Start: day, Turns: [][2]string{{prompt, answer}}})
	ts := newTestServer(t, data)
	_, list := ts.get("/")
	_, page := ts.get("/s/s-rtl")
	_, search := ts.get("/search?" + url.Values{"q": {"مهلة"}, "all": {"1"}}.Encode())
	cur, err := bottles.Open(data, nil, time.UTC).ReadCurrent("s-rtl")
	if err != nil {
		t.Fatal(err)
	}
	var export strings.Builder
	if err := Export(&export, "s-rtl", cur, FormatHTML, time.UTC); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, body, text string
		count            int // how many times the text is on the page
	}{
		{"the list's prompt", list, prompt, 1},
		{"the session page (title, outline, message)", page, prompt, 3},
		{"the session page's answer", page, answer, 1},
		{"the search page (query, snippet)", search, "مهلة", 2},
		{"the export (title, outline, message)", export.String(), prompt, 3},
		{"the export's answer", export.String(), answer, 1},
	} {
		if n := strings.Count(c.body, c.text); n < c.count {
			t.Errorf("%s: the text is there %d times, want %d:\n%s", c.what, n, c.count, c.body)
			continue
		}
		for at := 0; ; {
			i := strings.Index(c.body[at:], c.text)
			if i < 0 {
				break
			}
			at += i
			before := c.body[:at]
			inTag := strings.LastIndexByte(before, '<') > strings.LastIndexByte(before, '>') // an attribute's value
			inTitle := strings.LastIndex(before, "<title>") > strings.LastIndex(before, "</title>")
			if el := directedAncestor(before); el == "" && !inTag && !inTitle {
				t.Errorf("%s: no element around %q at byte %d takes its direction from its text", c.what, c.text, at)
			}
			at += len(c.text)
		}
	}
	style, err := assetFiles.ReadFile("assets/view.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(style)
	if strings.Contains(css, "text-align: left") || !strings.Contains(css, "text-align: start") {
		t.Errorf("the style forces left alignment, or does not align text to its start")
	}
}

// voidElements have no closing tag.
var voidElements = map[string]bool{"br": true, "hr": true, "img": true, "input": true, "meta": true, "link": true, "wbr": true}

// directedAncestor returns the opening tag of the nearest element open at
// the end of before (the HTML before a text) that has dir="auto", below
// <body>; "" when there is none.
func directedAncestor(before string) string {
	depth := 0
	for end := len(before); end > 0; {
		start := strings.LastIndexByte(before[:end], '<')
		if start < 0 {
			return ""
		}
		tag := before[start:end]
		end = start
		name := strings.TrimPrefix(tag, "</")
		name = strings.FieldsFunc(strings.TrimPrefix(name, "<"), func(r rune) bool { return r == ' ' || r == '>' || r == '/' })[0]
		switch {
		case strings.HasPrefix(tag, "</"):
			depth++
		case strings.HasPrefix(tag, "<!") || voidElements[name]:
		case depth > 0:
			depth--
		case name == "body":
			return ""
		case strings.Contains(tag, ` dir="auto"`):
			return tag
		}
	}
	return ""
}
