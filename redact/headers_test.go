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

// TestToolPasswordFlagsJava: keytool's and jarsigner's password flags and
// openssl's -passin, -passout and enc -k take a password.
func TestToolPasswordFlagsJava(t *testing.T) {
	pw := fakecred.New(31).Str(fakecred.Alnum, 7) + "!q7Z"
	P := R("password")
	runContextCases(t, []contextCase{
		{"keytool", "keytool -genkeypair -keystore k.jks -storepass " + pw + " -keypass " + pw + " -alias x",
			"keytool -genkeypair -keystore k.jks -storepass " + P + " -keypass " + P + " -alias x"},
		{"keytool import", "keytool -importkeystore -srcstorepass " + pw + " -deststorepass " + pw + " -noprompt",
			"keytool -importkeystore -srcstorepass " + P + " -deststorepass " + P + " -noprompt"},
		{"keytool keypasswd", "keytool -keypasswd -alias x -keypass " + pw + " -new " + pw,
			"keytool -keypasswd -alias x -keypass " + P + " -new " + P},
		{"keytool quoted", "keytool -list -keystore k.p12 -storepass '" + pw + "'", "keytool -list -keystore k.p12 -storepass '" + P + "'"},
		{"jarsigner", "jarsigner -keystore k.jks -storepass " + pw + " app.jar alias",
			"jarsigner -keystore k.jks -storepass " + P + " app.jar alias"},
		{"openssl passin", "openssl pkcs12 -export -in c.pem -passin pass:" + pw + " -passout pass:" + pw,
			"openssl pkcs12 -export -in c.pem -passin pass:" + P + " -passout pass:" + P},
		{"openssl enc -k", "openssl enc -aes-256-cbc -salt -k " + pw + " -in a -out b",
			"openssl enc -aes-256-cbc -salt -k " + P + " -in a -out b"},
	})
	keptAsIs(t,
		"keytool -list -keystore k.jks -storepass changeit",
		"keytool -list -storepass:env STOREPASS -keystore k.jks",
		"keytool -list -storepass:file pass.txt -keystore k.jks",
		`keytool -list -storepass "$STOREPASS"`,
		"keytool -keypasswd -alias mykey",
		"openssl pkcs12 -in k.p12 -passin env:P12_PASSWORD",
		"openssl req -new -key k.pem -keyout out.pem -out req.csr",
		"openssl enc -d -aes-256-cbc -kfile pass.txt -in a",
	)
}
