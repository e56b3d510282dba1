package redact_test

import (
	"strings"
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
	keptAsIs(t,
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
	)
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
	keptAsIs(t,
		"password = “hunter words”",
		"the password “field” is required",
		"api_key：“your-api-key”",
	)
}

// TestValueToItsEnd: an unquoted value runs to the next whitespace, or
// to what closes the quote or bracket opened before its key, or to the
// next key=value of a query or connection string, so that no part of a
// password with symbols in it is shown.
func TestValueToItsEnd(t *testing.T) {
	f := fakecred.New(22)
	a, b := f.Str(fakecred.Alnum, 5), f.Str(fakecred.Alnum, 5)+"!q7Z"
	tok := f.Str(fakecred.B64URL, 40)
	P := R("password")
	runContextCases(t, []contextCase{
		{"ampersand at the end", "DB_PASSWORD=" + a + b + "&q7Zr", "DB_PASSWORD=" + P},
		{"ampersand inside", "password=" + a + "&" + b, "password=" + P},
		{"ampersand first", "password=&" + a + b, "password=" + P},
		{"comma", "password=" + a + "," + b, "password=" + P},
		{"semicolon", "password=" + a + ";" + b, "password=" + P},
		{"parentheses", "password=(" + a + b + ")", "password=(" + P + ")"},
		{"apostrophe", "password=" + a + "'" + b, "password=" + P},
		{"double quote", "password=" + a + `"` + b, "password=" + P},
		{"colon", "password=" + a + ":" + b, "password=" + P},
		{"braces", "password=" + a + "{w}" + b, "password=" + P},
		{"brackets", "password=" + a + "[w]" + b, "password=" + P},
		{"backslash", `password=` + a + `\` + b, `password=` + P},
		{"pipe", "password=" + a + "|" + b, "password=" + P},
		{"then prose", "password=" + a + "&" + b + " and more", "password=" + P + " and more"},
		{"sentence end", "the password=" + a + b + ". Then", "the password=" + P + ". Then"},
		{"comma in prose", "password: " + a + b + ", and then", "password: " + P + ", and then"},
		{"call", "connect(password=" + a + b + ").close()", "connect(password=" + P + ").close()"},
		{"call, last argument", "login(user, password=" + a + b + ")", "login(user, password=" + P + ")"},
		{"in a list", "[password=" + a + b + "]", "[password=" + P + "]"},
		{"in quotes", "echo 'PASSWORD=" + a + b + "' > .env", "echo 'PASSWORD=" + P + "' > .env"},
		{"in double quotes", `env: ["PASSWORD=` + a + b + `"]`, `env: ["PASSWORD=` + P + `"]`},
		{"in escaped quotes", `{\"cmd\": \"PASSWORD=` + a + b + `\"}`, `{\"cmd\": \"PASSWORD=` + P + `\"}`},
		{"in backticks", "run `PASSWORD=" + a + b + "` first", "run `PASSWORD=" + P + "` first"},
		{"in curly quotes", "“PASSWORD=" + a + b + "” it said", "“PASSWORD=" + P + "” it said"},
		{"before another key", "pass:0`api_key = " + tok, "pass:0`api_key = " + R("secret")},
		{"in two quotes", `pass:"` + "`PASSWORD = " + a + b + "'" + `"`, `pass:"` + "`PASSWORD = " + P + `"`},
		{"escaped newline", `PASSWORD=` + a + b + `\nNEXT=1`, `PASSWORD=` + P + `\nNEXT=1`},
		{"query string", "https://x.example/v1?api_key=" + tok + "&page=2", "https://x.example/v1?api_key=" + R("secret") + "&page=2"},
		{"query fragment", "https://x.example/v1?api_key=" + tok + "#top", "https://x.example/v1?api_key=" + R("secret") + "#top"},
		{"connection string", "Server=db;User Id=app;Password=" + a + b + ";Encrypt=true;",
			"Server=db;User Id=app;Password=" + P + ";Encrypt=true;"},
		{"next assignment", "password=" + a + b + "&user=bob", "password=" + P + "&user=bob"},
		{"markdown bold", "**password=" + a + b + "**", "**password=" + P + "**"},
		{"fullwidth comma", "password=" + a + b + "，然后", "password=" + P + "，然后"},
		{"non-ASCII letters", "password=" + a + "é" + b, "password=" + P},
		{"xml", "<password>" + a + "&amp;" + b + "</password>", "<password>" + P + "</password>"},
		// A secret glued to text that makes the whole look like none is
		// judged by its head, and goes whole; one glued to more text than
		// a value can be goes up to the text.
		{"glued to low-entropy text", "SERVICE_SECRET=" + tok + ";" + strings.Repeat("0", 25), "SERVICE_SECRET=" + R("secret")},
		{"glued to too much text", "SERVICE_SECRET=" + tok + ";" + strings.Repeat("0", 9000),
			"SERVICE_SECRET=" + R("secret") + ";" + strings.Repeat("0", 9000)},
	})
	// Code is no value, and what follows a value stays.
	keptAsIs(t,
		`password = os.environ["DB_PASSWORD"]`,
		"q_pass = roi_q.reindex(ids.astype(int)).fillna(0.0).to_numpy() >= 0.5",
		"fn check(password: &serde_json::Value, token: &str)",
		"password: Option<String>,",
		"let key = &args[1];",
		"auto key = std::make_pair(a, b);",
		"password: process.env.DB_PASSWORD!,",
		"implementation 'io.jsonwebtoken:jjwt-api:0.11.5'",
		`print(f"token={token}")`,
		"sorted(items, key=lambda x: x[0])",
		`"keyColor": SERVICE_NAME=green`,
	)
}

// TestURLPasswordWithSymbols: the password of scheme://user:password@host
// is found when it holds # / ? ( ) [ ], which end a URL's authority.
func TestURLPasswordWithSymbols(t *testing.T) {
	f := fakecred.New(23)
	a, b := f.Str(fakecred.Alnum, 4), f.Str(fakecred.Alnum, 5)
	P := R("password")
	runContextCases(t, []contextCase{
		{"hash", "the DB is postgres://app:" + a + "#" + b + "@db.internal/prod and more",
			"the DB is postgres://app:" + P + "@db.internal/prod and more"},
		{"slash", "postgres://app:" + a + "/" + b + "@db", "postgres://app:" + P + "@db"},
		{"question mark", "postgres://app:" + a + "?" + b + "@db:5432/x", "postgres://app:" + P + "@db:5432/x"},
		{"parentheses", "postgres://app:" + a + "(" + b + ")x@db", "postgres://app:" + P + "@db"},
		{"bracket", "postgres://app:" + a + "]" + b + "@db", "postgres://app:" + P + "@db"},
		{"at and hash", "mysql://root:" + a + "@#" + b + "@db/x", "mysql://root:" + P + "@db/x"},
		{"empty user", "redis://:" + a + "/" + b + "@cache:6379", "redis://:" + P + "@cache:6379"},
		{"in quotes", `DATABASE_URL="postgres://app:` + a + "#" + b + `@db/x"`, `DATABASE_URL="postgres://app:` + P + `@db/x"`},
	})
	keptAsIs(t,
		"http://localhost:8080/users/@me",
		"https://example.com:443/a?email=bob@example.com",
		"https://example.com/wiki/Special:Search@x",
		"https://registry.npmjs.org/@scope%2fpkg",
		"git+ssh://git@github.com:org/repo.git",
		"https://cdn.example.com/npm/pkg@1.2.3/dist",
		"see https://a.example/x:y and mail bob@example.com",
		"http://host:3000?next=/a@b",
	)
}

// TestKeySpaceValue: a key followed by a blank and then its value is an
// assignment where something shows that the next word is a value: its
// shape (a password of mixed classes, a high-entropy secret), a table
// cell or a tab, a .netrc line, or a command that takes a password after
// a flag. A key followed by an ordinary word is English.
func TestKeySpaceValue(t *testing.T) {
	f := fakecred.New(24)
	pw := f.Str(fakecred.Alnum, 7) + "!q7Z"
	aws := f.Str(fakecred.B64, 40)
	tok := f.Str(fakecred.Alnum, 36)
	P, S := R("password"), R("secret")
	runContextCases(t, []contextCase{
		{"aws configure", "ran `aws configure set aws_secret_access_key " + aws + "`",
			"ran `aws configure set aws_secret_access_key " + R("AWS secret access key") + "`"},
		{"npm config", "ran `npm config set //registry.npmjs.org/:_authToken " + tok + "`",
			"ran `npm config set //registry.npmjs.org/:_authToken " + S + "`"},
		{"table cell", "| DB password | " + pw + " |", "| DB password | " + P + " |"},
		{"table cell, AWS", "| SecretAccessKey | " + aws + " |", "| SecretAccessKey | " + R("AWS secret access key") + " |"},
		{"table, later column", "| prod | password | " + pw + " | ok |", "| prod | password | " + P + " | ok |"},
		{"table, weak password", "| password | hunter22 |", "| password | " + P + " |"},
		{"gh secret", "gh secret set API_TOKEN --body " + tok, "gh secret set API_TOKEN --body " + S},
		{"gh secret -b", `gh secret set X -b"` + tok + `"`, `gh secret set X -b"` + S + `"`},
		{"netrc", "machine github.com login bob password " + pw, "machine github.com login bob password " + P},
		{"netrc, weak", "machine h login bob password hunter22", "machine h login bob password " + P},
		{"tab", "Password\t" + pw, "Password\t" + P},
		{"redis-cli", "redis-cli -a " + pw + " ping", "redis-cli -a " + P + " ping"},
		{"redis-cli with host", "redis-cli -h cache -p 6379 -a '" + pw + "' ping", "redis-cli -h cache -p 6379 -a '" + P + "' ping"},
		{"sshpass", "sshpass -p '" + pw + "' ssh host", "sshpass -p '" + P + "' ssh host"},
		{"sshpass attached", "sshpass -p" + pw + " ssh host", "sshpass -p" + P + " ssh host"},
		{"docker login", "docker login -u bob -p " + pw, "docker login -u bob -p " + P},
		{"docker login registry", "docker login registry.example.com -u bob -p " + pw + " && docker push x",
			"docker login registry.example.com -u bob -p " + P + " && docker push x"},
		{"docker login, named registry", "docker login docker.io -u bob -p " + pw, "docker login docker.io -u bob -p " + P},
		{"two commands", "mysql -p" + pw + " a; mysql -u x -p" + pw + " b", "mysql -p" + P + " a; mysql -u x -p" + P + " b"},
		{"mysql", "mysql -u root -p" + pw + " db", "mysql -u root -p" + P + " db"},
		{"mysqldump", "mysqldump -uroot -p" + pw + " app > dump.sql", "mysqldump -uroot -p" + P + " app > dump.sql"},
		{"security", "security add-generic-password -a bob -s svc -w " + pw, "security add-generic-password -a bob -s svc -w " + P},
		{"ldapsearch", "ldapsearch -x -D cn=admin -w " + pw + " -b dc=x", "ldapsearch -x -D cn=admin -w " + P + " -b dc=x"},
		{"dash label", "API Key - " + tok, "API Key - " + S},
		{"space, mixed password", "my password " + pw + " works", "my password " + P + " works"},
		{"space, secret", "the secret " + tok + " is new", "the secret " + S + " is new"},
		{"set -x", "set -x PASSWORD " + pw, "set -x PASSWORD " + P},
		{"password is", "My password is " + pw + " ok", "My password is " + P + " ok"},
		{"password was", "the password was " + pw + ".", "the password was " + P + "."},
		// A quote or a backslash inside a value is no JSON around a word.
		{"shell escape", `password Tr0ub4dor\&3xyzQ`, "password " + P},
		{"password is, escape", `the db password is Tr0ub4dor\&3xyzQ`, "the db password is " + P},
		{"quote inside", `secret Xk9mQ2"vL8pZr4TnW7yB1`, "secret " + S},
		{"backslash inside", `api_key Xk9mQ2\vL8pZr4TnW7yB1`, "api_key " + S},
	})
	keptAsIs(t,
		"the password field is required",
		"password reset link sent",
		"Password must be 8+ characters",
		"the password is Hunter",
		"enter your password twice",
		"| password | string | required |",
		"| Password | min 8 chars |",
		"| token | 4096 |",
		"password\trequired",
		"the key "+f.Str(fakecred.Hex, 40)+" of the commit",
		"the token 3 of 4",
		"token 2024-01-15T10:00:00Z",
		"mysql -u root -p db",
		"mysql -u root -p -h db",
		"docker run -p 8080:80 nginx",
		"redis-cli -a $REDIS_PASSWORD ping",
		"sshpass -p \"$PASS\" ssh host",
		"security find-generic-password -s svc -w",
		"gh secret set NAME --body \"$TOKEN\"",
		"API Key - see the dashboard",
		"ssh -p 2222 host",
		"gh pr view -b main",
		"--password-stdin < pw.txt",
		"set the secret MY_SECRET_2 in GitHub",
		"the token TOKEN_NAME_V2_PROD",
		"token 0xDEADBEEF12345678",
		"password v1.2.3-Beta",
		"Retrieving passwd 1:4.8.1-2ubuntu2",
		"# 192.168.1.100 admin password server02-ipmi",
		"[Key technologies/libraries]",
		"| F1 | first-pass-done | `data/sessions/25_G1_review_gui/` |",
		"or pass `TOOL_HOME=/opt/x` on the command line",
		"rotate key k8s-prod-01",
		"password manager 1Password7",
		"The key point: a token is passed to the author's secret santa.",
		"the password is required",
		"the password is not-a-secret",
		"the key is "+f.Str(fakecred.Hex, 40),
		"the token is TOKEN_NAME_V2",
		"REDACT-P1 the key is REDACTME-4f7c1e9a0b keep it safe",
		"the token was "+tok+".",
		`files in key directories"},"tool_use_id":"call_02_F3dP9MCTW04QdWYy3S4c7836"}`,
	)
}

// keptAsIs checks that the built-in rules leave each of ins as it is.
func keptAsIs(t *testing.T, ins ...string) {
	t.Helper()
	for _, in := range ins {
		if got := redact.Builtin().Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it kept", in, got)
		}
	}
}

// TestEscapedQuoteInValue: a backslash-escaped quote inside a
// double-quoted value is part of it, not its end, so no tail is kept.
func TestEscapedQuoteInValue(t *testing.T) {
	P := R("password")
	runContextCases(t, []contextCase{
		{"shell", `export DB_PASSWORD="Xk9#mQ2\"vL8pZ"`, `export DB_PASSWORD="` + P + `"`},
		{"json", `{"password": "Xk9#mQ2\"vL8pZ", "user": "bob"}`, `{"password": "` + P + `", "user": "bob"}`},
		{"escaped backslash", `DB_PASSWORD="Xk9#mQ2vL8pZ\\" rest`, `DB_PASSWORD="` + P + `" rest`},
		{"escaped json", `{\"password\": \"Xk9#mQ2vL8pZ\"}`, `{\"password\": \"` + P + `\"}`},
	})
}
