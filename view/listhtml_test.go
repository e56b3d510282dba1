package view

import (
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/index"
)

// TestListEscapes: every prompt and project in the session list is text,
// escaped as html/template escapes text, so the only tags in the list are
// the list's own.
func TestListEscapes(t *testing.T) {
	hostile := append([]string{`a & b "quoted" 'single' <b>bold</b>`, "nul\x00byte", "invalid \xff utf-8 &amp; already"}, xssCases...)
	var list []index.Session
	for i, v := range hostile {
		list = append(list, index.Session{ID: "s-" + strings.Repeat("x", i+1), Project: v, FirstPrompt: v, Turns: 1,
			Started: testNow, LastActive: testNow})
	}
	out := string(listHTML(list, time.UTC))
	for _, v := range hostile {
		want := template.HTMLEscapeString(trimmed(v, 160))
		if strings.Count(out, want) < 2 { // the project's heading and the session's prompt
			t.Errorf("%q is not in the list escaped as %q:\n%s", v, want, out)
		}
	}
	own := map[string]bool{"section": true, "h2": true, "span": true, "ol": true, "li": true, "a": true, "code": true}
	for _, m := range tagPattern.FindAllStringSubmatch(out, -1) {
		if !own[strings.ToLower(m[1])] {
			t.Errorf("tag <%s%s> in the list", m[1], m[2])
		}
	}
	if strings.ContainsRune(out, 0) {
		t.Error("a NUL byte in the list")
	}
}
