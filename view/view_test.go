package view

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
)

// TestGuard: only the user's own tab reads the view. A request without
// the token, or naming another Host than the loopback address and port
// (a DNS rebinding page), is refused; the token in the URL is traded for
// an HttpOnly, SameSite=Strict cookie and a redirect to the URL without
// it; every answer, refusals too, carries the strict policy.
func TestGuard(t *testing.T) {
	data := t.TempDir()
	writeTalks(t, data, talk{ID: "s-guard", CWD: "/home/u/app", Start: day, Turns: [][2]string{{"hello", "hi"}}})
	ts := newTestServer(t, data)
	for _, c := range []struct {
		name   string
		path   string
		host   string
		cookie bool
		code   int
	}{
		{"the list with the cookie", "/", testHost, true, http.StatusOK},
		{"a session with the cookie", "/s/s-guard", testHost, true, http.StatusOK},
		{"the list without it", "/", testHost, false, http.StatusForbidden},
		{"a session without it", "/s/s-guard", testHost, false, http.StatusForbidden},
		{"the events without it", "/events", testHost, false, http.StatusForbidden},
		{"the script without it", "/assets/view.js", testHost, false, http.StatusForbidden},
		{"a search without it", "/search?q=hello", testHost, false, http.StatusForbidden},
		{"a wrong token", "/?token=" + strings.Repeat("0", 64), testHost, false, http.StatusForbidden},
		{"a foreign host with the cookie", "/", "evil.example:41234", true, http.StatusForbidden},
		{"localhost with the cookie", "/", "localhost:41234", true, http.StatusForbidden},
		{"another port with the cookie", "/", "127.0.0.1:9", true, http.StatusForbidden},
		{"a foreign host with the token", "/?token=" + testToken, "evil.example", false, http.StatusForbidden},
	} {
		res, _ := ts.do(c.path, c.host, c.cookie)
		if res.StatusCode != c.code {
			t.Errorf("%s: %d, want %d", c.name, res.StatusCode, c.code)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", c.name, csp)
		}
	}
	res, body := ts.do("/s/s-guard?token="+testToken+"&part=body", testHost, false)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the token: %d, want 200", res.StatusCode)
	}
	if !strings.Contains(body, `<meta http-equiv="refresh" content="0; url=/s/s-guard?part=body">`) || strings.Contains(body, testToken) {
		t.Errorf("the token's page does not go on to the same URL without it:\n%s", body)
	}
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if c.Value != testToken || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Name != "bottled-view-41234" {
		t.Errorf("cookie %+v", c)
	}
}

// TestSessionPage: a bottle as a page, from its blocks: who spoke and
// when, its outline as links to the lines, legs marked, observations
// folded under their turn, claude-mem's summaries marked as not verbatim.
func TestSessionPage(t *testing.T) {
	data := t.TempDir()
	legs := writeGolden(t, data, "compaction-preserved")
	obs := writeGolden(t, data, "memory-placement")
	recon := writeGolden(t, data, "reconstructed")
	ts := newTestServer(t, data)

	res, body := ts.get("/s/" + legs)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%d: %s", res.StatusCode, body)
	}
	if n := strings.Count(body, `<section class="msg user"`); n != 5 {
		t.Errorf("%d user messages, want 5", n)
	}
	if n := strings.Count(body, `<section class="msg assistant"`); n != 5 {
		t.Errorf("%d assistant messages, want 5", n)
	}
	mustContain(t, "the page of a compacted session", body,
		`<h2 class="leg" id="L`, "Leg 2 — compacted (auto) at 15:01", "Leg 3 — compacted (manual) at 15:03",
		`<li dir="auto" class="compaction"><a href="#L41">`, `<a href="#L20">`, "PRES-P1 map out the atlas tile pipeline",
		`<h3 class="who">User <time>2026-11-20 15:00</time></h3>`, "PRES-A5 Committed: parallel zoom 14 simplification.",
		"/home/dev/src/atlas")
	// Every anchor is there once.
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`id="(L\d+)"`).FindAllStringSubmatch(body, -1) {
		if seen[m[1]] {
			t.Errorf("id %s is on the page twice", m[1])
		}
		seen[m[1]] = true
	}
	// Every outline link has its target on the page.
	golden, err := os.ReadFile(filepath.Join("..", "testdata", "render", "compaction-preserved", "bottle.golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	outline := regexp.MustCompile(`(?m)^- line (\d+) · `).FindAllStringSubmatch(string(golden), -1)
	if len(outline) != 7 {
		t.Errorf("%d outline lines in the golden bottle, want 7", len(outline))
	}
	for _, m := range outline {
		if !strings.Contains(body, `id="L`+m[1]+`"`) {
			t.Errorf("no anchor for outline line %s", m[1])
		}
	}

	_, body = ts.get("/s/" + obs)
	mustContain(t, "the page with observations", body,
		`<details class="fold"`, "<summary>What happened · 2</summary>",
		"[#1001] Read retry settings — The retry count is hard-coded to three in the client package",
		// The trail is folded too, and the text after it goes on.
		"<summary>Did · 2</summary>", "edited client/retry.go (+1 −1)", `<section class="msg assistant cont"`)
	mustNotContain(t, "the page with observations", body, "*What happened:*", "*Did:*")

	_, body = ts.get("/s/" + recon)
	mustContain(t, "the reconstructed page", body, `<section class="msg summary"`,
		"Session summary (generated by claude-mem — not verbatim)", "reconstructed from claude-mem: assistant messages not preserved",
		"<strong>Request:</strong> RECON-SUM-REQUEST-1")

	// A start of an id is the session's page, under its whole id.
	res, _ = ts.get("/s/" + legs[:8])
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/"+legs {
		t.Errorf("a start of the id: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ = ts.get("/s/no-such-session")
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("no such session: %d", res.StatusCode)
	}
}

// TestQuotedLines: a line of a message that looks like the bottle's
// structure shows as it was typed, without the quoting backslash, and
// stays inside its message.
func TestQuotedLines(t *testing.T) {
	data := t.TempDir()
	writeTalks(t, data, talk{ID: "s-quoted", CWD: "/p", Start: day, Turns: [][2]string{{"before\n\n**Assistant** (10:00)\nforged answer", "the real answer"}}})
	_, body := newTestServer(t, data).get("/s/s-quoted")
	if n := strings.Count(body, `<section class="msg assistant"`); n != 1 {
		t.Errorf("%d assistant messages, want 1 (a quoted heading became a turn)", n)
	}
	mustContain(t, "the page", body, "<strong>Assistant</strong> (10:00)")
	mustNotContain(t, "the page", body, `\<strong>`, `\**Assistant`)
}

// xssCases are prompts and answers that would run script in the page if
// bottle text were trusted.
var xssCases = []string{
	`<script>window.__pwned = 1</script>`,
	`<img src=x onerror="window.__pwned = 1">`,
	`[click me](javascript:window.__pwned=1)`,
	`[tabbed](java&#9;script:window.__pwned=1)`,
	`[newline](java&#10;script:window.__pwned=1)`,
	`[entity](javascript&colon;window.__pwned=1)`,
	`[upper](JaVaScRiPt:window.__pwned=1)`,
	`[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
	`[vb](vbscript:msgbox(1))`,
	`<javascript:window.__pwned=1>`,
	`<a href="javascript:window.__pwned=1">raw link</a>`,
	`![tracker](https://evil.example/pixel.png)`,
	`![bad image](javascript:window.__pwned=1)`,
	"<iframe src=\"https://evil.example/\"></iframe>\n\n<style>body{display:none}</style>",
	`<svg onload="window.__pwned=1"></svg>`,
}

// TestUntrustedText: bottle text is shown, never run. Raw HTML is text,
// links go only to http, https and mailto (and anchors), images are
// links, whichever speaker wrote them.
func TestUntrustedText(t *testing.T) {
	data := t.TempDir()
	var turns [][2]string
	for _, c := range xssCases {
		turns = append(turns, [2]string{c, c})
	}
	turns = append(turns, [2]string{"see [the docs](https://example.com/docs) and <https://example.com/auto>", "mail [me](mailto:me@example.com)"})
	writeTalks(t, data, talk{ID: "s-xss", CWD: "/p", Start: day, Turns: turns})
	_, body := newTestServer(t, data).get("/s/s-xss")
	_, text, _ := strings.Cut(body, `<div class="turns">`)
	text, _, _ = strings.Cut(text, `<footer`)
	if text == "" {
		t.Fatalf("no turns on the page:\n%s", body)
	}
	// Text is escaped, so every "<" left starts a tag the page made: only
	// these, with no handler and no link but to allowed places.
	allowed := map[string]bool{"section": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "time": true, "div": true,
		"span": true, "p": true, "a": true, "strong": true, "em": true, "code": true, "pre": true, "ul": true, "ol": true, "li": true,
		"details": true, "summary": true, "blockquote": true, "br": true, "del": true}
	for _, m := range tagPattern.FindAllStringSubmatch(text, -1) {
		name, attrs := strings.ToLower(m[1]), strings.ToLower(m[2])
		if !allowed[name] {
			t.Errorf("the page makes a <%s> element: %s", name, m[0])
		}
		if strings.Contains(attrs, " on") || strings.Contains(attrs, "src=") || strings.Contains(attrs, "style=") {
			t.Errorf("the page makes an element with %s", m[0])
		}
		if _, href, ok := strings.Cut(attrs, `href="`); ok && !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "mailto:") {
			t.Errorf("the page links to %s", m[0])
		}
	}
	mustContain(t, "the page", text, "&lt;script&gt;window.__pwned = 1&lt;/script&gt;", "&lt;img src=x onerror=",
		`<a href="https://example.com/docs">the docs</a>`, `<a href="https://example.com/auto">`, `<a href="mailto:me@example.com">me</a>`,
		`<a href="https://evil.example/pixel.png">[image: tracker]</a>`, "click me")
}

var tagPattern = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)

func TestAllowedURL(t *testing.T) {
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://example.com", true}, {"HTTP://example.com", true}, {"mailto:a@b", true}, {"#L12", true},
		{"javascript:x", false}, {" javascript:x", false}, {"java\tscript:x", false}, {"java\nscript:x", false},
		{"\x01javascript:x", false}, {"data:text/html,x", false}, {"file:///etc/passwd", false}, {"/s/other", false},
		{"//evil.example/x", false}, {"", false},
	} {
		if got := allowedURL([]byte(c.url)); got != c.ok {
			t.Errorf("allowedURL(%q) = %v, want %v", c.url, got, c.ok)
		}
	}
}

// TestList: every session, by project (most recently active project
// first), newest first within each, each a plain link whose URL holds its
// id; cleared sessions behind a toggle.
func TestList(t *testing.T) {
	data := t.TempDir()
	writeTalks(t, data,
		talk{ID: "s-app-1", CWD: "/home/u/app", Start: day, Turns: [][2]string{{"make the retry loop back off", "done"}}},
		talk{ID: "s-app-2", CWD: "/home/u/app", Start: day.AddDate(0, 0, 2), Turns: [][2]string{{"the retry loop in the tool too", "done"}, {"and test it", "ok"}}},
		talk{ID: "s-web", CWD: "/home/u/web", Start: day.AddDate(0, 0, 1), Turns: [][2]string{{"fix <the> header", "done"}}},
		talk{ID: "s-gone", CWD: "/home/u/web", Start: day.AddDate(0, 0, 3), Turns: [][2]string{{"a session then cleared", "ok"}}},
	)
	if _, err := bottles.Open(data, func() time.Time { return testNow }, time.UTC).Archive("s-gone"); err != nil {
		t.Fatal(err)
	}
	recon := writeGolden(t, data, "reconstructed") // its transcript deleted by Claude Code
	ts := newTestServer(t, data)
	_, body := ts.get("/")
	mustContain(t, "the list", body, `href="/s/`+recon+`"`, `>reconstructed</span>`, "<h2>billing")
	app, web := strings.Index(body, "<h2>/home/u/app"), strings.Index(body, "<h2>/home/u/web")
	if app < 0 || web < 0 || app > web {
		t.Errorf("projects at %d (app) and %d (web), want app first, the most recently active", app, web)
	}
	a2, a1 := strings.Index(body, `href="/s/s-app-2"`), strings.Index(body, `href="/s/s-app-1"`)
	if a2 < 0 || a1 < 0 || a2 > a1 {
		t.Errorf("sessions at %d (s-app-2) and %d (s-app-1), want the newest first", a2, a1)
	}
	mustContain(t, "the list", body, "fix &lt;the&gt; header", "2 turns", `href="/?archived=1">Show 1 cleared session<`)
	mustNotContain(t, "the list", body, "s-gone")

	_, body = ts.get("/?archived=1")
	mustContain(t, "the list with cleared sessions", body, `<li class="session cleared" data-id="s-gone"><a href="/s/s-gone" dir="auto">`, "Hide cleared sessions")
	_, body = ts.get("/s/s-gone")
	mustContain(t, "a cleared session's page", body, "a session then cleared", "cleared (archived bottle)")

	_, part := ts.get("/?part=list")
	if strings.Contains(part, "<html") || !strings.Contains(part, `href="/s/s-app-2"`) {
		t.Errorf("the list's part is not the list alone:\n%s", part)
	}
}

// TestSearchPage: the search box searches as bottled search does, in a
// project or every project, and each hit links to its line in its
// session's page.
func TestSearchPage(t *testing.T) {
	data := t.TempDir()
	writeTalks(t, data,
		talk{ID: "s-app-1", CWD: "/home/u/app", Start: day, Turns: [][2]string{{"make the retry loop back off", "Added jitter to the retry loop."}}},
		talk{ID: "s-web", CWD: "/home/u/web", Start: day.AddDate(0, 0, 1), Turns: [][2]string{{"what about jitter here", "none"}}},
	)
	ts := newTestServer(t, data)
	_, body := ts.get("/search?" + url.Values{"q": {"jitter"}, "project": {"/home/u/app"}}.Encode())
	mustContain(t, "a search in a project", body, `href="/s/s-app-1#L`, "1 hit in /home/u/app (1 sessions)",
		`every project (2 sessions)</a>`, `value="jitter"`)
	mustNotContain(t, "a search in a project", body, "/s/s-web")
	// The hit's line is the line the word is on.
	i := strings.Index(body, `href="/s/s-app-1#L`)
	var line int
	if _, err := fmtSscan(body[i+len(`href="/s/s-app-1#L`):], &line); err != nil {
		t.Fatal(err)
	}
	cur, err := bottles.Open(data, nil, time.UTC).ReadCurrent("s-app-1")
	if err != nil || cur == nil {
		t.Fatal(err)
	}
	if l := lineText(render.LinesOf(cur.Data), line); !strings.Contains(l, "jitter") {
		t.Errorf("the hit links to line %d, %q", line, l)
	}

	_, body = ts.get("/search?" + url.Values{"q": {"jitter"}, "project": {"/home/u/app"}, "all": {"1"}}.Encode())
	mustContain(t, "a search of every project", body, `href="/s/s-app-1#L`, `href="/s/s-web#L`, "2 hits in every project")

	res, body := ts.get("/search?q=jitter&all=1&since=yesterday-ish")
	if n := strings.Count(body, "give a date"); res.StatusCode != http.StatusBadRequest || n != 1 {
		t.Errorf("a bad since: %d, the formats said %d times, want once", res.StatusCode, n)
	}
	// The box is on every page, with what it searches.
	for _, path := range []string{"/", "/s/s-web", "/search"} {
		_, body := ts.get(path)
		mustContain(t, path, body, `<input type="search" name="q"`)
	}
	_, body = ts.get("/s/s-web")
	mustContain(t, "a session page's search box", body, `name="project" value="/home/u/web"`)
}

// TestExport: a standalone HTML file with its style inlined, no script,
// and a policy that forbids any; or the bottle as it is.
func TestExport(t *testing.T) {
	data := t.TempDir()
	id := writeGolden(t, data, "memory-placement")
	cur, err := bottles.Open(data, nil, time.UTC).ReadCurrent(id)
	if err != nil {
		t.Fatal(err)
	}
	var html strings.Builder
	if err := Export(&html, id, cur, FormatHTML, time.UTC); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	mustContain(t, "the export", h, "<style>", "--user-edge", `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'`,
		"[#1001] Read retry settings", `<section class="msg user"`)
	mustNotContain(t, "the export", h, "<script", `<link rel="stylesheet"`, "/assets/")
	var md strings.Builder
	if err := Export(&md, id, cur, FormatMarkdown, time.UTC); err != nil || md.String() != string(cur.Data) {
		t.Errorf("the markdown export is not the bottle: %v", err)
	}
	if err := Export(&md, id, cur, "pdf", time.UTC); err == nil {
		t.Error("an unknown format exported")
	}
}

// TestContentTypes: every page says it is HTML, whatever its status, so
// that a browser told not to sniff shows it.
func TestContentTypes(t *testing.T) {
	data := t.TempDir()
	writeTalks(t, data, talk{ID: "s-type-one", CWD: "/p", Start: day, Turns: [][2]string{{"a", "b"}}}, talk{ID: "s-type-two", CWD: "/p", Start: day, Turns: [][2]string{{"c", "d"}}})
	ts := newTestServer(t, data)
	for _, c := range []struct {
		path string
		code int
	}{{"/", 200}, {"/s/s-type-one", 200}, {"/s/nothing-here", 404}, {"/s/s-type", 300}, {"/search?q=a&since=never", 400}, {"/search?q=a", 200}} {
		res, _ := ts.get(c.path)
		if res.StatusCode != c.code || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("%s: %d %q, want %d and HTML", c.path, res.StatusCode, res.Header.Get("Content-Type"), c.code)
		}
	}
}

func TestTrimmed(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"  short  ", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 11, "eleven rune…"},
		{"ééééé", 3, "ééé…"},
		{"日本語のプロンプト", 4, "日本語の…"},
		{"", 3, ""},
		// Characters of several code points are counted, and kept, whole.
		{"ab\U0001F468\u200D\U0001F469\u200D\U0001F467cd", 3, "ab\U0001F468\u200D\U0001F469\u200D\U0001F467…"},
		{"cafe\u0301 au lait", 4, "cafe\u0301…"},
		{"\u0E01\u0E48\u0E01\u0E48\u0E01\u0E48", 2, "\u0E01\u0E48\u0E01\u0E48…"},
		{"\U0001F1EF\U0001F1F5\U0001F1EF\U0001F1F5", 1, "\U0001F1EF\U0001F1F5…"},
	} {
		if got := trimmed(c.in, c.n); got != c.want {
			t.Errorf("trimmed(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
