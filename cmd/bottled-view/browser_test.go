package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

const (
	idApp = "11111111-aaaa-4bbb-8ccc-000000000001"
	idWeb = "22222222-aaaa-4bbb-8ccc-000000000002"
	idXSS = "33333333-aaaa-4bbb-8ccc-000000000003"
)

// xssPrompt holds what would run script in the page if bottle text were
// trusted; each payload would set window.__pwned or open a dialog.
const xssPrompt = "XSSCASE <script>window.__pwned = 1; alert('script')</script>\n\n" +
	"<img src=x onerror=\"window.__pwned = 2; alert('img')\">\n\n" +
	"[click me](javascript:window.__pwned=3;alert('link')) and [tabbed](java&#9;script:alert('tab'))\n\n" +
	"<a href=\"javascript:alert('raw')\">raw link</a> <svg onload=\"alert('svg')\"></svg>"

// TestInBrowser drives a headless Chromium through the view of a Claude
// Code directory that the daemon keeps current, as a user does: the list,
// a session's page, a turn appearing live without a reload, the search
// box, and bottle text that must stay text.
func TestInBrowser(t *testing.T) {
	b := newBrowser(t)
	w := newWorld(t)
	day := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	app := w.transcript("-home-dev-app", idApp)
	w.appendTo(app, turn(idApp, "/home/dev/app", day, 1, "APPFIRST make the retry loop back off with zanzibarite jitter",
		"Added **exponential** backoff:\n\n```go\nfor attempt := range 5 {\n\tsleep(backoff(attempt))\n}\n```")...)
	w.appendTo(w.transcript("-home-dev-web", idWeb), turn(idWeb, "/home/dev/web", day.Add(time.Hour), 1, "WEBFIRST fix the header", "Fixed.")...)
	w.appendTo(w.transcript("-home-dev-web", idXSS), turn(idXSS, "/home/dev/web", day.Add(2*time.Hour), 1, xssPrompt,
		"ANSWERED <script>window.__pwned = 4</script> [again](javascript:alert('answer'))")...)
	w.startDaemon(idApp, idWeb, idXSS)
	w.startView()
	shots := t.TempDir()

	// The list: every session, by project, each a link holding its id.
	b.do(t, "open the list", chromedp.Navigate(w.url))
	b.wait(t, "the list", `document.querySelectorAll("li.session").length === 3`, 20*time.Second)
	if loc := eval[string](t, b, "location.href"); strings.Contains(loc, "token") {
		t.Errorf("the token stayed in the address: %s", loc)
	}
	list := eval[string](t, b, "document.body.innerText")
	for _, want := range []string{"APPFIRST", "WEBFIRST", "/home/dev/app", "/home/dev/web"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
	if !eval[bool](t, b, `[...document.querySelectorAll("li.session a")].every(a => /^\/s\/[0-9a-f-]{36}$/.test(a.getAttribute("href")))`) {
		t.Error("a session in the list is not a plain link to /s/<its id>")
	}
	if eval[bool](t, b, `!document.getElementById("daemon").hidden`) {
		t.Errorf("with the daemon running, the page says %q", eval[string](t, b, `document.getElementById("daemon").textContent`))
	}
	b.screenshot(t, shots, "list.png")

	// A session's page: its turns, none of the tool traffic, code as code.
	// Clicked from the page's own script, as the hit below: the list is
	// live, and a refresh replaces the node chromedp would have found.
	b.do(t, "open a session", chromedp.Evaluate[chromedp.Void](`document.querySelector('a[href="/s/`+idApp+`"]').click()`))
	b.wait(t, "the session page", `document.body.dataset.session === "`+idApp+`" && !!document.querySelector("section.msg.assistant")`, 20*time.Second)
	page := eval[string](t, b, "document.body.innerText")
	if !strings.Contains(page, "APPFIRST make the retry loop") || !strings.Contains(page, "exponential") {
		t.Errorf("the session page lacks its turns:\n%s", page)
	}
	if strings.Contains(page, "TOOLNOISE") || strings.Contains(page, "toolu_") {
		t.Errorf("the session page shows tool traffic:\n%s", page)
	}
	if !eval[bool](t, b, `!!document.querySelector("section.msg.assistant pre code.language-go")`) {
		t.Error("the code block is not shown as code")
	}
	b.screenshot(t, shots, "session.png")
	// On a narrow window, in the dark: nothing wider than the window.
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	b.do(t, "a narrow window", chromedp.EmulateViewport(380, 800))
	if eval[bool](t, b, `document.documentElement.scrollWidth > window.innerWidth + 1`) {
		t.Errorf("on a 380 px window the page is %d px wide", eval[int](t, b, "document.documentElement.scrollWidth"))
	}
	if bg := eval[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(22, 24, 27)" {
		t.Errorf("the dark page's background is %s", bg)
	}
	b.screenshot(t, shots, "session-narrow-dark.png")
	b.do(t, "back to a wide window", chromedp.EmulateViewport(1100, 900))
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
		t.Fatal(err)
	}

	// Live: a turn appended to the transcript reaches the open page,
	// through the daemon and the bottle, without a reload.
	b.do(t, "mark the page", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	w.appendTo(app, turn(idApp, "/home/dev/app", day.Add(10*time.Minute), 2, "APPLIVE now test quuxberry under load", "LIVEANSWER done")...)
	b.wait(t, "the live turn", `document.body.innerText.includes("APPLIVE now test quuxberry") && document.body.innerText.includes("LIVEANSWER")`, 20*time.Second)
	if !eval[bool](t, b, `window.__sameDocument === true`) {
		t.Error("the page was reloaded to show the new turn")
	}
	if n := eval[int](t, b, `document.querySelectorAll("section.msg.user").length`); n != 2 {
		t.Errorf("%d user messages after the append, want 2", n)
	}

	// Search: "/" focuses the box; a hit links to its line in its session.
	b.do(t, "press /", chromedp.KeyEvent("/"))
	if !eval[bool](t, b, `document.activeElement === document.querySelector('input[type="search"]')`) {
		t.Error(`"/" did not focus the search box`)
	}
	b.do(t, "search", chromedp.SendKeys(chromedp.CSS(`input[type="search"]`), "zanzibarite\r"))
	b.wait(t, "the hits", `location.pathname === "/search" && document.querySelectorAll("li.hit a").length >= 1`, 20*time.Second)
	href := eval[string](t, b, `document.querySelector("li.hit a").getAttribute("href")`)
	if !strings.HasPrefix(href, "/s/"+idApp+"#L") {
		t.Fatalf("the hit links to %q, want /s/%s#L<line>", href, idApp)
	}
	// Clicked from the page's own script: the search page came by a form's
	// submit, not chromedp.Navigate, and chromedp may still hold the node
	// ids of the page before it ("Could not find node with given id").
	b.do(t, "open the hit", chromedp.Evaluate[chromedp.Void](`document.querySelector("li.hit a").click()`))
	b.wait(t, "the hit's line", `location.pathname === "/s/`+idApp+`" && !!document.querySelector(".target") &&
		document.querySelector(".target").innerText.includes("zanzibarite")`, 20*time.Second)

	// Bottle text is text: nothing in it runs.
	b.do(t, "open the XSS session", chromedp.Navigate(w.base()+"/s/"+idXSS))
	b.wait(t, "the XSS page", `document.readyState === "complete" && document.body.innerText.includes("ANSWERED")`, 20*time.Second)
	page = eval[string](t, b, "document.body.innerText")
	for _, want := range []string{"<script>window.__pwned = 1; alert('script')</script>", `<img src=x onerror="window.__pwned = 2; alert('img')">`,
		"click me", `<a href="javascript:alert('raw')">raw link</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	if v := eval[string](t, b, `String(window.__pwned)`); v != "undefined" {
		t.Errorf("a script in the bottle ran: window.__pwned = %s", v)
	}
	if n := eval[int](t, b, `document.querySelectorAll(".turns script, .turns img, .turns svg, .turns iframe, .turns a[href^='javascript' i]").length`); n != 0 {
		t.Errorf("the page made %d elements of bottle text", n)
	}
	b.do(t, "click the links", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".turns a").forEach(a => a.click())`))
	if v := eval[string](t, b, `String(window.__pwned)`); v != "undefined" {
		t.Errorf("a link in the bottle ran script: window.__pwned = %s", v)
	}
	if m, err := b.dialog(); err == nil {
		t.Errorf("the page opened a dialog: %q", m)
	}

	// A bottle with claude-mem's observations (its transcript gone): they
	// are folded under their turns until opened.
	placed := copyGolden(t, w.data, "memory-placement")
	b.do(t, "open the session with observations", chromedp.Navigate(w.base()+"/s/"+placed))
	b.wait(t, "the folds", `document.querySelectorAll("details.fold").length >= 2`, 20*time.Second)
	if eval[bool](t, b, `document.querySelector("details.fold").open`) {
		t.Error("the observations are not folded")
	}
	b.do(t, "open a fold", chromedp.Click(chromedp.CSS(`details.fold summary`)))
	if !eval[bool](t, b, `document.querySelector("details.fold").open && document.querySelector("details.fold li").innerText.startsWith("[#")`) {
		t.Error("the fold does not open onto its observations")
	}
	b.screenshot(t, shots, "session-observations.png")

	// Refused: no token, a foreign Host.
	for _, c := range []struct {
		name string
		req  func() *http.Request
	}{
		{"no token", func() *http.Request { r, _ := http.NewRequest("GET", w.base()+"/s/"+idApp, nil); return r }},
		{"a foreign Host with the token", func() *http.Request {
			r, _ := http.NewRequest("GET", w.url, nil)
			r.Host = "attacker.example"
			return r
		}},
	} {
		res, err := http.DefaultClient.Do(c.req())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", c.name, res.StatusCode)
		}
	}
}

// copyGolden puts the golden bottle of a render case among the world's
// bottles (a session whose transcript is gone) and returns its id.
func copyGolden(t *testing.T, data, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "render", name, "bottle.golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "# Session bottle — ")
	id, _, _ := strings.Cut(rest, "\n")
	if err := os.WriteFile(filepath.Join(data, "bottles", id+".md"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLauncher: without --no-open the view opens the browser on a file
// of the user's alone that goes on to its address, so the token is on no
// command line; the browser gets in through it, the cookie set on the way
// (a redirect would have lost the SameSite=Strict cookie: the navigation
// began at a file).
func TestLauncher(t *testing.T) {
	b := newBrowser(t)
	w := newWorld(t)
	w.appendTo(w.transcript("-home-dev-app", idApp), turn(idApp, "/home/dev/app", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), 1, "LAUNCHED prompt", "ok")...)
	w.startDaemon(idApp)
	args := filepath.Join(t.TempDir(), "args")
	opener := filepath.Join(t.TempDir(), "opener")
	if err := os.WriteFile(opener, []byte("#!/bin/sh\necho \"$@\" > '"+args+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", opener)
	_, out := w.start("bottled-view", "view")
	url, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("no address: %v", err)
	}
	var launcher string
	w.waitFor("the opener", func() bool {
		b, err := os.ReadFile(args)
		launcher = strings.TrimSpace(string(b))
		return err == nil && launcher != ""
	})
	if strings.Contains(launcher, "token") || !strings.HasSuffix(launcher, ".html") {
		t.Fatalf("the opener was given %q", launcher)
	}
	for path, mode := range map[string]os.FileMode{launcher: 0o600, filepath.Dir(launcher): 0o700 | os.ModeDir} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, mode)
		}
	}
	if page, _ := os.ReadFile(launcher); !strings.Contains(string(page), strings.TrimSpace(url)) {
		t.Errorf("the launcher does not go on to %s:\n%s", url, page)
	}
	b.do(t, "open the launcher", chromedp.Navigate("file://"+launcher))
	b.wait(t, "the list through the launcher", `location.protocol === "http:" && !location.search.includes("token") &&
		document.querySelectorAll("li.session").length === 1`, 20*time.Second)
}
