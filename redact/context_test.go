package redact_test

import (
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/redact"
)

// contextCase is an input and what it must redact to.
type contextCase struct{ name, in, want string }

func runContextCases(t *testing.T, tests []contextCase) {
	t.Helper()
	rules := redact.Builtin()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rules.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// R is the placeholder of kind.
func R(kind string) string { return redact.Placeholder(kind) }

// TestKeyNames: a key names a password whatever its case, in German and
// abbreviated.
func TestKeyNames(t *testing.T) {
	pw := fakecred.New(20).Str(fakecred.Alnum, 7) + "!q7Z"
	runContextCases(t, []contextCase{
		{"camel case", "PassWord=" + pw, "PassWord=" + R("password")},
		{"lower camel", "dbPassWord: " + pw, "dbPassWord: " + R("password")},
		{"German", "passwort=" + pw, "passwort=" + R("password")},
		{"German upper", "DB_PASSWORT=" + pw, "DB_PASSWORT=" + R("password")},
		{"pw", "pw=" + pw, "pw=" + R("password")},
		{"pw in a name", "DB_PW=" + pw, "DB_PW=" + R("password")},
		{"pw in YAML", "  pw: " + pw + "\n", "  pw: " + R("password") + "\n"},
		{"pw in JSON", `{"pw": "` + pw + `"}`, `{"pw": "` + R("password") + `"}`},
		{"pwd", "pwd=" + pw, "pwd=" + R("password")},
		{"passwd", "passwd=" + pw, "passwd=" + R("password")},
	})
}

// TestPlaceholderWords: a stopword makes a value a placeholder only as a
// whole word (your-api-key, changeme123), never as the start of a longer
// one; a variable reference is $name or ${…}, not any value starting with $.
func TestPlaceholderWords(t *testing.T) {
	runContextCases(t, []contextCase{
		{"mock as a prefix", "password=Mocking" + "bird#7", "password=" + R("password")},
		{"demo as a prefix", "password=Demolition" + "99!", "password=" + R("password")},
		{"your as a prefix", "DB_PASSWORD=Yourself" + "2024!", "DB_PASSWORD=" + R("password")},
		{"sample before random characters", "password=Sample" + "9Qz!x", "password=" + R("password")},
		{"dollar is not a variable", "password=$uper5" + "ecret!", "password=" + R("password")},
		{"dollar in the middle", "password=" + "Xk9$p2Lw", "password=" + R("password")},
	})
	for _, in := range []string{
		"password=changeme123",
		"SECRET_KEY=changeme123456",
		"password: your-password-here",
		"password: YourPassword123",
		"password: example_pass_1",
		"password=mock-password-1",
		"password=demo1234",
		"password: $DB_PASSWORD",
		"password: ${DB_PASSWORD}",
		"password=$PW/extra",
		"token: ${{ secrets.TOKEN }}",
		"password=%DB_PASS%",
	} {
		if got := redact.Builtin().Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it kept", in, got)
		}
	}
}

// TestTypographicQuotes: a value in curly, guillemet or fullwidth quotes,
// or after a fullwidth = or :, is redacted as in straight quotes.
func TestTypographicQuotes(t *testing.T) {
	f := fakecred.New(21)
	pw := f.Str(fakecred.Alnum, 7) + "!q7Z"
	key := f.Str(fakecred.B64, 40)
	runContextCases(t, []contextCase{
		{"double curly", "password = “" + pw + "”", "password = “" + R("password") + "”"},
		{"single curly", "api_key: ‘" + key + "’", "api_key: ‘" + R("secret") + "’"},
		{"guillemets", "api_key: «" + key + "»", "api_key: «" + R("secret") + "»"},
		{"German quotes", "Passwort: „" + pw + "“", "Passwort: „" + R("password") + "“"},
		{"corner brackets", "password=「" + pw + "」", "password=「" + R("password") + "」"},
		{"fullwidth quote", "password=＂" + pw + "＂", "password=＂" + R("password") + "＂"},
		{"curly key and value", "“password”: “" + pw + "”", "“password”: “" + R("password") + "”"},
		{"fullwidth equals", "api_key＝" + key, "api_key＝" + R("secret")},
		{"fullwidth colon", "api_key：" + key, "api_key：" + R("secret")},
		{"fullwidth colon, curly value", "password： “" + pw + "”", "password： “" + R("password") + "”"},
		{"unclosed curly", "password = “" + pw + " and more", "password = “" + R("password") + " and more"},
	})
	for _, in := range []string{
		"password = “hunter words”",
		"the password “field” is required",
		"api_key：“your-api-key”",
	} {
		if got := redact.Builtin().Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it kept", in, got)
		}
	}
}
