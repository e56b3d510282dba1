package redact_test

import (
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
)

// TestCookies: the session values of a Cookie or Set-Cookie header, and
// of curl's -b and --cookie, are redacted; the cookies' names, their
// attributes and values too short or too plain to be a session stay.
func TestCookies(t *testing.T) {
	f := fakecred.New(30)
	sid, csrf := f.Str(fakecred.Alnum, 40), f.Str(fakecred.Alnum, 32)
	signed := "s%3A" + f.Str(fakecred.B64URL, 32) + "." + f.Str(fakecred.B64, 43)
	C := R("cookie")
	runContextCases(t, []contextCase{
		{"header", "Cookie: session=" + sid + "; theme=dark", "Cookie: session=" + C + "; theme=dark"},
		{"header, two sessions", "Cookie: session=" + sid + "; csrftoken=" + csrf,
			"Cookie: session=" + C + "; csrftoken=" + C},
		{"lower case", "cookie: sid=" + sid, "cookie: sid=" + C},
		{"set-cookie", "Set-Cookie: sid=" + sid + "; Path=/; HttpOnly", "Set-Cookie: sid=" + C + "; Path=/; HttpOnly"},
		{"in prose", "the server sent Cookie: sessionid=" + sid + " back", "the server sent Cookie: sessionid=" + C + " back"},
		{"curl -H", "curl -H 'Cookie: session=" + sid + "' https://x.example", "curl -H 'Cookie: session=" + C + "' https://x.example"},
		{"curl -H, quoted value", `curl -H 'Cookie: a=1; session="` + sid + `"' https://x`,
			`curl -H 'Cookie: a=1; session="` + C + `"' https://x`},
		{"json", `{"Cookie": "connect.sid=` + signed + `"}`, `{"Cookie": "connect.sid=` + C + `"}`},
		{"curl -b", "curl -b 'session=" + sid + "' https://x.example", "curl -b 'session=" + C + "' https://x.example"},
		{"curl -b unquoted", "curl -sS -b session=" + sid + " https://x.example", "curl -sS -b session=" + C + " https://x.example"},
		{"curl --cookie", "curl --cookie \"sid=" + sid + "; lang=en\" https://x", "curl --cookie \"sid=" + C + "; lang=en\" https://x"},
		{"curl --cookie=", "curl --cookie=sid=" + sid + " https://x", "curl --cookie=sid=" + C + " https://x"},
		{"curl, two cookies", "curl -b 'a=" + sid + "; b=" + csrf + "' https://x", "curl -b 'a=" + C + "; b=" + C + "' https://x"},
	})
	keptAsIs(t,
		"Cookie: theme=dark; lang=en-US; tz=Europe/Berlin",
		"Set-Cookie: sid=deleted; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
		"curl -b cookies.txt -c cookies.txt https://x.example",
		"curl --cookie-jar jar.txt https://x.example",
		"the cookie: it is set by the login form",
		"cookies: session=abc, see the docs",
		"Cookie: session=$SESSION_COOKIE",
		"Cookie: session=<your-session-cookie>",
	)
}
