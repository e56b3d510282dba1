package redact_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/redact"
)

// TestEveryKindInEveryContext puts each kind of credential in the places a
// bottle gets text from: a prompt, a Bash command, a written .env file and
// JSON. The credential must be gone, named by its kind, and the text
// around it kept byte for byte.
func TestEveryKindInEveryContext(t *testing.T) {
	rules := redact.Builtin()
	for _, c := range fakecred.New(1).Every() {
		contexts := []struct{ name, before, after string }{
			{"alone", "", ""},
			{"prompt", "Use this one: ", ", and do not print it again.\n"},
			{"prompt in parens", "my key (", ") is in the env"},
			{"bash export", "export SOME_VALUE=", " && ./deploy.sh"},
			{"bash quoted", "curl -s -d 'x=", "' https://example.com/api"},
			{"env file", "DEBUG=1\nCONFIG=", "\nPORT=8080\n"},
			{"json", `{"name": "ci", "value": "`, `", "n": 3}`},
			{"markdown code", "Set it with `", "` then restart."},
			{"private tag", "<private>", "</private>"},
			{"line end", "first line\n", "\nlast line"},
			{"escaped line end in JSON", `{"log": "first line\n`, `\nlast line"}`},
			{"escaped tab in JSON", `{"log": "key:\t`, `"}`},
		}
		for _, ctx := range contexts {
			t.Run(c.Kind+"/"+ctx.name, func(t *testing.T) {
				in := ctx.before + c.Text + ctx.after
				got := rules.Redact(in)
				if want := ctx.before + c.Want + ctx.after; got != want {
					t.Errorf("Redact(%q)\n got %q\nwant %q", in, got, want)
				}
				if strings.Contains(got, c.Secret) {
					t.Errorf("secret survived in %q", got)
				}
			})
		}
	}
}

// TestContexts checks the rules that keep the context around a secret:
// commands, headers, URLs, assignments in their usual syntaxes.
func TestContexts(t *testing.T) {
	f := fakecred.New(2)
	tok := f.Str(fakecred.B64URL, 40)
	pw := f.Str(fakecred.Alnum, 14)
	gh := f.GitHub('p').Text
	jwt := f.JWT().Text
	b64cred := f.Str(fakecred.B64, 28) + "=="
	hexSecret := f.Str(fakecred.Hex, 40)
	uuid := f.Str(fakecred.Hex, 8) + "-" + f.Str(fakecred.Hex, 4) + "-4" + f.Str(fakecred.Hex, 3) + "-a" + f.Str(fakecred.Hex, 3) + "-" + f.Str(fakecred.Hex, 12)
	awsSecret := f.Str(fakecred.B64, 40)
	key := f.PrivateKey("EC ", 3).Text
	keyNoEnd := key[:strings.Index(key, "-----END")]
	R := func(kind string) string { return "[redacted: " + kind + "]" }
	tests := []struct{ name, in, want string }{
		{"curl bearer", "curl -H 'Authorization: Bearer " + tok + "' https://api.example.com/v1",
			"curl -H 'Authorization: Bearer " + R("bearer token") + "' https://api.example.com/v1"},
		{"curl bearer double quotes", `curl -H "Authorization: Bearer ` + tok + `" -X POST`,
			`curl -H "Authorization: Bearer ` + R("bearer token") + `" -X POST`},
		{"curl header without scheme", `curl --header "authorization: ` + tok + `"`,
			`curl --header "authorization: ` + R("authorization") + `"`},
		{"basic header", "Authorization: Basic " + b64cred + "\r\nHost: x",
			"Authorization: Basic " + R("basic auth credentials") + "\r\nHost: x"},
		{"token scheme with GitHub token", "Authorization: token " + gh,
			"Authorization: token " + R("GitHub token")},
		{"json header", `{"headers": {"Authorization": "Bearer ` + tok + `"}}`,
			`{"headers": {"Authorization": "Bearer ` + R("bearer token") + `"}}`},
		{"bearer in prose", "the API answered 401 for Bearer " + tok + " today",
			"the API answered 401 for Bearer " + R("bearer token") + " today"},
		{"bearer JWT", "Authorization: Bearer " + jwt, "Authorization: Bearer " + R("JWT")},
		{"curl -u", "curl -u deploy:" + pw + " https://ci.example.com/job",
			"curl -u deploy:" + R("password") + " https://ci.example.com/job"},
		{"curl -u twice", "curl -u a:" + pw + " -u b:" + pw + "x https://ci.example.com",
			"curl -u a:" + R("password") + " -u b:" + R("password") + " https://ci.example.com"},
		{"curl --user quoted", "curl --user 'deploy:" + pw + "' https://ci.example.com",
			"curl --user 'deploy:" + R("password") + "' https://ci.example.com"},
		{"git clone", "git clone https://deploy:" + pw + "@git.example.com/team/app.git",
			"git clone https://deploy:" + R("password") + "@git.example.com/team/app.git"},
		{"git clone token as password", "git clone https://x-access-token:" + gh + "@github.com/o/r",
			"git clone https://x-access-token:" + R("GitHub token") + "@github.com/o/r"},
		{"redis empty user", "REDIS_URL=redis://:" + pw + "@cache:6379/0",
			"REDIS_URL=redis://:" + R("password") + "@cache:6379/0"},
		{"password with @", "mysql://root:p@" + pw + "@db/x", "mysql://root:" + R("password") + "@db/x"},
		{"mongodb+srv", "mongodb+srv://app:" + pw + "@cluster0.example.net/?retryWrites=true",
			"mongodb+srv://app:" + R("password") + "@cluster0.example.net/?retryWrites=true"},
		{"export openai", "export OPENAI_API_KEY=" + f.OpenAIProject().Text, "export OPENAI_API_KEY=" + R("OpenAI API key")},
		{"env generic", "DJANGO_SECRET_KEY=" + pw + "x9$#q\nDEBUG=0", "DJANGO_SECRET_KEY=" + R("secret") + "\nDEBUG=0"},
		{"json token", `{"token": "` + hexSecret + `", "user": "ci"}`, `{"token": "` + R("secret") + `", "user": "ci"}`},
		{"json camel", `{"apiKey":"` + tok + `"}`, `{"apiKey":"` + R("secret") + `"}`},
		{"escaped json", `{\"client_secret\": \"` + tok + `\"}`, `{\"client_secret\": \"` + R("secret") + `\"}`},
		{"uuid under a secret key", `token: "` + uuid + `"`, `token: "` + R("secret") + `"`},
		{"yaml password", "db:\n  password: " + pw + "\n  host: db", "db:\n  password: " + R("password") + "\n  host: db"},
		{"password with symbols", `password = "` + pw[:6] + `!&;@x"`, `password = "` + R("password") + `"`},
		{"pgpassword", "PGPASSWORD=" + pw + " psql -h db", "PGPASSWORD=" + R("password") + " psql -h db"},
		{"flag", "wrangler secret put --api-key " + tok, "wrangler secret put --api-key " + R("secret")},
		{"flag with =", "--password=" + pw + " --user=x", "--password=" + R("password") + " --user=x"},
		{"query string", "https://api.example.com/v1?api_key=" + tok + "&page=2",
			"https://api.example.com/v1?api_key=" + R("secret") + "&page=2"},
		{"xml", "<password>" + pw + "</password>", "<password>" + R("password") + "</password>"},
		{"header x-api-key", "-H 'x-api-key: " + tok + "'", "-H 'x-api-key: " + R("secret") + "'"},
		{"markdown bold label", "**Password:** " + pw + "\n", "**Password:** " + R("password") + "\n"},
		{"python kwarg", `client = Client(api_key="` + tok + `")`, `client = Client(api_key="` + R("secret") + `")`},
		{"go walrus", `token := "` + tok + `"`, `token := "` + R("secret") + `"`},
		{"aws secret json", `"SecretAccessKey": "` + awsSecret + `",`, `"SecretAccessKey": "` + R("AWS secret access key") + `",`},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + awsSecret, "AWS_SECRET_ACCESS_KEY=" + R("AWS secret access key")},
		{"private key without END", "here:\n" + keyNoEnd + "\nand then I ran the tests.",
			"here:\n" + R("private key") + "\n\nand then I ran the tests."},
		{"private key cut mid-line", "x " + keyNoEnd[:len(keyNoEnd)-30], "x " + R("private key")},
		{"private key escaped newlines", `"private_key": "` + strings.ReplaceAll(key, "\n", `\n`) + `\n",`,
			`"private_key": "` + R("private key") + `\n",`},
		{"private key on one line", "key: " + strings.ReplaceAll(key, "\n", " ") + " ok",
			"key: " + R("private key") + " ok"},
		{"labelled in prose", "Your API key: " + tok + "\nKeep it safe.", "Your API key: " + R("secret") + "\nKeep it safe."},
		{"password in prose", "the password: " + pw + " works", "the password: " + R("password") + " works"},
		{"password after a word that qualifies tokens", "user input password: " + pw, "user input password: " + R("password")},
		{"secret with a word prefix", "SECRET_KEY='django-insecure-" + pw + "x(=8w!" + pw + "'",
			"SECRET_KEY='" + R("secret") + "'"},
		{"passphrase of words", "password: correct-horse-battery-staple-9", "password: " + R("password")},
		{"two tokens", gh + " " + gh, R("GitHub token") + " " + R("GitHub token")},
		{"slack webhook in curl", "curl -X POST " + f.SlackWebhook().Text + " -d '{}'",
			"curl -X POST https://hooks.slack.com/services/" + R("Slack webhook") + " -d '{}'"},
	}
	rules := redact.Builtin()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rules.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestLookAlikes are strings that resemble credentials and are none: they
// must come out unchanged.
func TestLookAlikes(t *testing.T) {
	f := fakecred.New(3)
	sha := f.Str(fakecred.Hex, 40)
	sha256 := f.Str(fakecred.Hex, 64)
	uuid := f.Str(fakecred.Hex, 8) + "-" + f.Str(fakecred.Hex, 4) + "-4" + f.Str(fakecred.Hex, 3) + "-a" + f.Str(fakecred.Hex, 3) + "-" + f.Str(fakecred.Hex, 12)
	tests := []string{
		"commit " + sha + "\nAuthor: A <a@example.com>",
		"git checkout " + sha[:12] + " && git log " + sha,
		"session " + uuid + " resumed",
		`{"sessionId": "` + uuid + `", "uuid": "` + uuid + `"}`,
		sha256 + "  bottled-linux-amd64.tar.gz",
		"sha512-" + f.Str(fakecred.B64, 86) + "==",
		`"integrity": "sha512-` + f.Str(fakecred.B64, 86) + `=="`,
		"echo SGVsbG8sIHdvcmxkISBUaGlzIGlzIG9yZGluYXJ5IHRleHQu | base64 -d",
		"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"pip install scikit-learn  # the sk-learn package",
		"sk-learn, sk-moxa-config-layer and sk-ant-api03-your-key-here",
		"OPENAI_API_KEY=sk-...",
		"OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"AKIAIOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"https://github.com/bottled-dev/bottled.git",
		"https://user@example.com/path?q=1:2@3",
		"postgres://user:password@localhost:5432/db",
		"postgres://${DB_USER}:${DB_PASSWORD}@db/app",
		"mysql://root:$MYSQL_ROOT_PASSWORD@db/app",
		"https://user:<password>@host/x",
		"git@github.com:bottled-dev/bottled.git",
		"password: ********",
		"password: xxxxxxxx",
		"token: <your-token>",
		`"token": "${GITHUB_TOKEN}"`,
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"Authorization: Bearer $OPENAI_API_KEY",
		"Authorization: Bearer ${TOKEN}",
		"Authorization: Bearer <token>",
		"Authorization: Bearer YOUR_API_KEY",
		"Authorization: Bearer {token}",
		"`Authorization: Bearer ${token}`",
		`headers = {"Authorization": f"Bearer {api_key}"}`,
		"export API_KEY=",
		"export API_KEY=\nexport OTHER=1",
		"export API_KEY=your-api-key-here",
		"export OPENAI_API_KEY=$OPENAI_API_KEY",
		"API_KEY=%API_KEY%",
		"SECRET_KEY=changeme123456",
		"api_key: example-key-1234567890",
		`api_key = os.environ["OPENAI_API_KEY"]`,
		`token := os.Getenv("GITHUB_TOKEN")`,
		"const token = localStorage.getItem('token')",
		"password: str = Field(..., min_length=8)",
		"password_min_length = 12",
		"PASSWORD_HASH=" + f.Str(fakecred.B64, 40),
		"key_id = " + f.Str(fakecred.Alnum, 20),
		"public_key = " + f.Str(fakecred.B64, 44),
		"cache_key: " + sha,
		"next_page_token: " + f.Str(fakecred.B64URL, 40),
		"max_tokens: 8192, prompt_tokens: 1234",
		"the key point is: 42 requests a second",
		"keyboard: " + f.Str(fakecred.Hex, 20),
		"SSH_KEY=/home/user/.ssh/id_ed25519",
		"PWD=/home/user/src/bottled",
		"cat ~/.aws/credentials",
		"npm install @anthropic-ai/claude-code npm_config_cache",
		"-----BEGIN PUBLIC KEY-----\n" + f.Str(fakecred.B64, 64) + "\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\n" + f.Str(fakecred.B64, 64) + "\n-----END CERTIFICATE-----",
		"-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----",
		`pem := "-----BEGIN RSA PRIVATE KEY-----\n" + encodedPrivateKeyBody + "\n-----END RSA PRIVATE KEY-----\n"`,
		`"-----BEGIN EC PRIVATE KEY-----\n" + base64.StdEncoding.EncodeToString(der) + "\n-----END EC PRIVATE KEY-----"`,
		"> -----BEGIN OPENSSH PRIVATE KEY-----\n> (your key here)\n> -----END OPENSSH PRIVATE KEY-----",
		"# -----BEGIN OPENSSH PRIVATE KEY-----\n# ...\n# -----END OPENSSH PRIVATE KEY-----",
		`if strings.HasPrefix(line, "-----BEGIN RSA PRIVATE KEY-----") {` + "\n\treturn parsePKCS1PrivateKeyFromPEMBlock(block)",
		`headers := []string{"-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----"}`,
		"A key file ends with -----END OPENSSH PRIVATE KEY----- and a newline.",
		"openssl genrsa -out key.pem 4096\n-----END RSA PRIVATE KEY-----",
		"commit " + sha + "\n-----END RSA PRIVATE KEY-----",
		"pk_live_" + f.Str(fakecred.Alnum, 24),
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 is the base64 of a JWT header",
		"model: claude-sonnet-4-5-20250929",
		"tokenizer = AutoTokenizer.from_pretrained(name)",
		"author: Jane Doe <jane@example.com>",
		"password: required",
		"the password is shown once; the token expires",
		"[redacted: GitHub token] and [redacted: password]",
		"risk-assessment-2024-q3 and desk-" + f.Str(fakecred.Alnum, 30),
		"bearer tokens are sent as Bearer followed by the token",
		// Seen in the real transcripts: GitHub Actions' cache keys, and a
		// Go struct printed with one.
		"Restored uv cache from GitHub Actions cache with key: setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-" + sha256,
		"msg=\"deleted cache: &{ID:6 Key:setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-" + sha256 + " Version:" + sha[:20] + "}\"",
		"the cache key: " + sha256 + ", and the primary key: " + sha,
		`BR2_PACKAGE_PLUGIN_ACCOUNT_PASSWORD_POLICY_REV="` + sha + `"`,
		"image_tag=ghcr.io/acme/api-server-linux-amd64-" + sha[:12],
	}
	rules := redact.Builtin()
	for _, in := range tests {
		if got := rules.Redact(in); got != in {
			t.Errorf("Redact changed a look-alike\n  in %q\n got %q", in, got)
		}
	}
}

// TestNoCandidateAllocatesNothing checks the fast path: a string with no
// keyword, and one whose keywords lead nowhere, come back as themselves
// without an allocation.
func TestNoCandidateAllocatesNothing(t *testing.T) {
	rules := redact.Builtin()
	for _, s := range []string{
		"",
		strings.Repeat("Refactor the payment retry loop so that it backs off with jitter. ", 50),
		strings.Repeat("The key point: a token is passed to the author's secret santa. ", 50),
	} {
		if n := testing.AllocsPerRun(20, func() {
			if rules.Redact(s) != s {
				t.Fatalf("changed %.40q", s)
			}
		}); n != 0 {
			t.Errorf("%.40q: %v allocations", s, n)
		}
	}
}

// TestPlaceholdersMatchNothing: no rule finds a credential in a
// placeholder, alone or as a value, which makes Redact idempotent.
func TestPlaceholdersMatchNothing(t *testing.T) {
	rules := redact.Builtin()
	for _, c := range fakecred.New(4).Every() {
		p := redact.Placeholder(c.Kind)
		for _, s := range []string{p, "token=" + p, `"password": "` + p + `"`, "Authorization: Bearer " + p,
			"https://u:" + p + "@h/", "-----BEGIN RSA PRIVATE KEY-----\n" + p} {
			if f := rules.Find(s); len(f) != 0 {
				t.Errorf("Find(%q) = %v", s, f)
			}
		}
		once := rules.Redact(c.Text)
		if twice := rules.Redact(once); twice != once {
			t.Errorf("not idempotent: %q then %q", once, twice)
		}
	}
}

// TestFind reports where each credential was, by byte offsets into the
// input, in order.
func TestFind(t *testing.T) {
	f := fakecred.New(5)
	gh, npm := f.GitHub('s').Text, f.NPM().Text
	in := "a " + gh + " b " + npm
	got := redact.Builtin().Find(in)
	want := []redact.Finding{{Start: 2, End: 2 + len(gh), Kind: "GitHub token"},
		{Start: 5 + len(gh), End: len(in), Kind: "npm token"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Find = %+v, want %+v", got, want)
	}
}

// TestNilRulesAreBuiltin: a nil *Rules redacts with the built-in rules, so
// forgetting to pass rules can never turn redaction off.
func TestNilRulesAreBuiltin(t *testing.T) {
	var rules *redact.Rules
	c := fakecred.New(6).GitHub('p')
	if got := rules.Redact(c.Text); got != c.Want {
		t.Errorf("nil Rules: %q", got)
	}
	if rules.ID() != redact.Builtin().ID() {
		t.Errorf("nil Rules ID %q", rules.ID())
	}
}

// TestManySeeds makes every kind from many seeds: a rule that keeps a
// secret only for some random bodies (one that spells a stopword, one of
// low entropy by chance) shows here.
func TestManySeeds(t *testing.T) {
	rules := redact.Builtin()
	for seed := uint64(100); seed < 1100; seed++ {
		for _, c := range fakecred.New(seed).Every() {
			if got := rules.Redact("x " + c.Text + " y"); got != "x "+c.Want+" y" {
				t.Fatalf("seed %d: Redact(%q) = %q", seed, c.Text, got)
			}
		}
	}
}

// keyLines is the body of a private key: n lines of base64, 64 wide, and
// a short last one.
func keyLines(f *fakecred.Gen, n int) []string {
	lines := make([]string, n, n+1)
	for i := range lines {
		lines[i] = f.Str(fakecred.B64, 64)
	}
	return append(lines, f.Str(fakecred.B64, 22)+"==")
}

// prefixed is a key block (BEGIN line, body, END line) with pre before
// and post after each of its lines, joined by sep.
func prefixed(label string, body []string, pre, post, sep string) string {
	lines := append(append([]string{"-----BEGIN " + label + "PRIVATE KEY-----"}, body...), "-----END "+label+"PRIVATE KEY-----")
	for i, l := range lines {
		lines[i] = pre + l + post
	}
	return strings.Join(lines, sep)
}

// TestPrivateKeyBlocks: a private key block is redacted however its lines
// are dressed (quoted in markdown, commented out, built as a string in
// code), when it has no BEGIN line in the same string, and however long
// it is. What surrounds the block, and the prefix of its first line,
// stays.
func TestPrivateKeyBlocks(t *testing.T) {
	f := fakecred.New(21)
	body := keyLines(f, 5)
	R := "[redacted: private key]"
	bare := prefixed("RSA ", body, "", "", "\n")
	endOnly := bare[strings.Index(bare, "\n")+1:]
	long := append(keyLines(f, 330), "=AbCd")
	pgp := "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + strings.Join(long, "\n") + "\n-----END PGP PRIVATE KEY BLOCK-----"
	tests := []struct{ name, in, want string }{
		{"markdown quote", "Here is the deploy key from the wiki:\n\n" + prefixed("OPENSSH ", body, "> ", "", "\n") + "\n\nadd it to the server",
			"Here is the deploy key from the wiki:\n\n> " + R + "\n\nadd it to the server"},
		{"shell comment", prefixed("", body, "# ", "", "\n") + "\necho done", "# " + R + "\necho done"},
		{"line comment", prefixed("EC ", body, "// ", "", "\n"), "// " + R},
		{"block comment", "/*\n" + prefixed("", body, " * ", "", "\n") + "\n */", "/*\n * " + R + "\n */"},
		{"markdown list", prefixed("", body, "  - ", "", "\n"), "  - " + R},
		{"nested quote", prefixed("", body, "> > ", "", "\n"), "> > " + R},
		{"crlf quote", prefixed("", body, "> ", "", "\r\n"), "> " + R},
		{"java concatenation", prefixed("", body, `"`, `" +`, "\n") + ";", `"` + R + `" +;`},
		{"js concatenation", "key = " + prefixed("", body, "'", `\n' +`, "\n  ") + ";", "key = '" + R + `\n' +;`},
		{"escaped quote in json", `"k": "` + prefixed("", body, "> ", "", `\n`) + `"`, `"k": "> ` + R + `"`},
		{"backslash line ends", prefixed("", body, "", `\`, "\n"), R + `\`},
		{"bold BEGIN line", "**" + bare, "**" + R},
		{"bold BEGIN line closed", strings.Replace(bare, "KEY-----\n", "KEY-----**\n", 1), R},
		{"code BEGIN line", strings.Replace("`"+bare, "KEY-----\n", "KEY-----`\n", 1), "`" + R},
		{"quoted, no END", prefixed("", body, "> ", "", "\n")[:strings.Index(prefixed("", body, "> ", "", "\n"), "\n> -----END")] + "\n\nthat is all I have",
			"> " + R + "\n\nthat is all I have"},
		{"END without BEGIN", endOnly, R},
		{"END without BEGIN after prose", "key part 2:\n" + endOnly + "\nthanks", "key part 2:\n" + R + "\nthanks"},
		{"END without BEGIN, quoted", "> rest:\n" + prefixed("", body, "> ", "", "\n")[strings.Index(prefixed("", body, "> ", "", "\n"), "\n")+1:],
			"> rest:\n> " + R},
		{"END without BEGIN, escaped", `{"rest": "` + strings.ReplaceAll(endOnly, "\n", `\n`) + `\n"}`, `{"rest": "` + R + `\n"}`},
		{"END without BEGIN, one line", "rest: " + strings.ReplaceAll(endOnly, "\n", " ") + " ok", "rest: " + R + " ok"},
		{"longer than 16 KiB", "my gpg key:\n" + pgp + "\nthanks", "my gpg key:\n" + R + "\nthanks"},
		{"longer than 16 KiB, quoted", strings.ReplaceAll("\n"+pgp, "\n", "\n> ") + "\n\nthanks", strings.ReplaceAll("\n"+pgp, "\n", "\n> ")[:3] + R + "\n\nthanks"},
		{"longer than 16 KiB, no END", pgp[:strings.Index(pgp, "\n=AbCd")] + "\n\nand so on", R + "\n\nand so on"},
		{"longer than 16 KiB, END only", pgp[strings.Index(pgp, "\n\n")+2:], R},
	}
	rules := redact.Builtin()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rules.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%.200q…)\n got %.200q…\nwant %q", tt.in, got, tt.want)
			}
			for _, l := range append(body, long...) {
				if strings.Contains(got, l) {
					t.Fatalf("a body line survived: %.60q…", l)
				}
			}
		})
	}
}

// jwt is a JWT whose header has extra bytes of a certificate chain, whose
// payload is at least payload bytes and whose signature is sig bytes.
func jwt(f *fakecred.Gen, extra, payload, sig int) string {
	enc := base64.RawURLEncoding.EncodeToString
	header := `{"alg":"RS256","typ":"JWT"`
	if extra > 0 {
		header += `,"x5c":["` + f.Str(fakecred.B64, extra) + `"]`
	}
	var claims strings.Builder
	claims.WriteString(`{"sub":"` + f.Str(fakecred.Digits, 10) + `","groups":[`)
	for i := 0; claims.Len()*4/3 < payload; i++ {
		fmt.Fprintf(&claims, `"g%05d",`, i)
	}
	claims.WriteString(`"last"]}`)
	return enc([]byte(header+"}")) + "." + enc([]byte(claims.String())) + "." + f.Str(fakecred.B64URL, sig)
}

// TestLongJWTs: a JWT is redacted however long its parts are: claims of
// many kilobytes (group lists), a header carrying a certificate chain, a
// 16384-bit RSA signature, bare and as a Bearer token.
func TestLongJWTs(t *testing.T) {
	f := fakecred.New(22)
	R := "[redacted: JWT]"
	for _, tt := range []struct {
		name                 string
		extra, payload, sign int
	}{
		{"short", 0, 100, 342},
		{"8 KiB of claims", 0, 8 << 10, 342},
		{"9000 bytes of claims", 0, 9000, 342},
		{"64 KiB of claims", 0, 64 << 10, 342},
		{"1 MiB of claims", 0, 1 << 20, 342},
		{"certificate chain in the header", 3000, 500, 342},
		{"16384-bit RSA signature", 0, 500, 2731},
	} {
		tok := jwt(f, tt.extra, tt.payload, tt.sign)
		for _, c := range []struct{ in, want string }{
			{tok, R},
			{"id " + tok + " expired", "id " + R + " expired"},
			{"curl -H 'Authorization: Bearer " + tok + "' https://api.internal/x", "curl -H 'Authorization: Bearer " + R + "' https://api.internal/x"},
			{`{"id_token": "` + tok + `"}`, `{"id_token": "` + R + `"}`},
		} {
			if got := redact.Builtin().Redact(c.in); got != c.want {
				t.Errorf("%s (%d bytes): got %.200q…, want %.200q…", tt.name, len(tok), got, c.want)
			}
		}
	}
}

// TestDressedKeysManySeeds dresses keys of many random bodies in every
// prefix, suffix and line break of TestPrivateKeyBlocks, with and without
// their BEGIN or END line: no line of a body may survive.
func TestDressedKeysManySeeds(t *testing.T) {
	rules := redact.Builtin()
	pres := []string{"", "> ", "> > ", "# ", "// ", " * ", "  - ", `"`, "'", "\t"}
	posts := []string{"", `" +`, `\n' +`, `\`, ",", `\n"`}
	seps := []string{"\n", "\r\n", `\n`, `\r\n`, `\\n`, `\\r\\n`, "\n  ", " "}
	for seed := uint64(0); seed < 40; seed++ {
		f := fakecred.New(300 + seed)
		body := keyLines(f, 1+int(seed%7))
		for _, pre := range pres {
			for _, post := range posts {
				for _, sep := range seps {
					block := prefixed("OPENSSH ", body, pre, post, sep)
					first, last := strings.Index(block, sep), strings.LastIndex(block, sep)
					for _, in := range []string{block, block[:last], block[first+len(sep):]} {
						got := rules.Redact("see:" + sep + in + sep + "and so on")
						for _, l := range body {
							if strings.Contains(got, l) {
								t.Fatalf("seed %d: a body line survived in %q", seed, got)
							}
						}
					}
				}
			}
		}
	}
}

// TestEscapedKeyLines: a private key whose line breaks are escapes, as a
// JSON file holds it (a Google service account's "private_key"), is
// redacted whole, with its BEGIN and END lines, in a JSON file, in prose,
// in a code block, escaped twice (\\n, a JSON string inside another) and
// with \r\n escapes; the JSON around it stays.
func TestEscapedKeyLines(t *testing.T) {
	f := fakecred.New(23)
	body := append([]string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + f.Str(fakecred.B64, 14)}, keyLines(f, 24)...)
	id := f.Str(fakecred.Hex, 40)
	key := func(nl string) string {
		return "-----BEGIN PRIVATE KEY-----" + nl + strings.Join(body, nl) + nl + "-----END PRIVATE KEY-----" + nl
	}
	account := func(nl, q string) string {
		return "{" + nl + `  ` + q + `"type` + q + `": ` + q + `"service_account` + q + `",` + nl +
			`  ` + q + `"private_key_id` + q + `": ` + q + `"` + id + q + `",` + nl +
			`  ` + q + `"private_key` + q + `": ` + q + `"%s` + q + `",` + nl +
			`  ` + q + `"client_email` + q + `": ` + q + `"ci@proj.iam.gserviceaccount.com` + q + `"` + nl + "}"
	}
	slashes := strings.NewReplacer("/", `\/`)
	unicode := strings.NewReplacer("=", `\u003d`, "+", `\u002B`, "/", `\u002f`)
	P := R("private key")
	file := account("\n", "")
	tests := []contextCase{
		{"service account file", fmt.Sprintf(file, key(`\n`)),
			fmt.Sprintf(file, P+`\n`)},
		{"service account on one line", fmt.Sprintf(account("", ""), key(`\n`)),
			fmt.Sprintf(account("", ""), P+`\n`)},
		{"in prose", "the key is -----BEGIN PRIVATE KEY-----\\n" + strings.Join(body, `\n`) + `\n-----END PRIVATE KEY-----\n and it works`,
			"the key is " + P + `\n and it works`},
		{"in prose, no trailing escape", "use -----BEGIN PRIVATE KEY-----\\n" + strings.Join(body, `\n`) + `\n-----END PRIVATE KEY----- now`,
			"use " + P + " now"},
		{"in a code block", "```json\n" + fmt.Sprintf(file, key(`\n`)) + "\n```\nthen run it",
			"```json\n" + fmt.Sprintf(file, P+`\n`) + "\n```\nthen run it"},
		{"escaped twice", fmt.Sprintf(account(`\n`, `\`), key(`\\n`)),
			fmt.Sprintf(account(`\n`, `\`), P+`\\n`)},
		{"escaped twice, in echo", `echo '{"private_key": "` + key(`\\n`) + `"}' > sa.json`,
			`echo '{"private_key": "` + P + `\\n"}' > sa.json`},
		{"crlf escapes", `"private_key": "` + key(`\r\n`) + `"`, `"private_key": "` + P + `\r\n"`},
		{"crlf escaped twice", `\"private_key\": \"` + key(`\\r\\n`) + `\"`, `\"private_key\": \"` + P + `\\r\\n\"`},
		{"no BEGIN line", `"rest": "` + strings.Join(body, `\n`) + `\n-----END PRIVATE KEY-----\n"`, `"rest": "` + P + `\n"`},
		{"no BEGIN line, escaped twice", `\"rest\": \"` + strings.Join(body, `\\n`) + `\\n-----END PRIVATE KEY-----\\n\"`, `\"rest\": \"` + P + `\\n\"`},
		{"no BEGIN line, crlf escapes", `"rest": "` + strings.Join(body, `\r\n`) + `\r\n-----END PRIVATE KEY-----"`, `"rest": "` + P + `"`},
		// Encoders that escape base64's characters: PHP's json_encode
		// writes / as \/, Gson = as \u003d.
		{"escaped slashes", `{"private_key":"` + slashes.Replace(key(`\n`)) + `"}`, `{"private_key":"` + P + `\n"}`},
		{"escaped slashes, no END", `{"private_key":"` + slashes.Replace(key(`\n`)[:len(key(`\n`))/2]) + `"}`, `{"private_key":"` + P + `"}`},
		{"escaped slashes, no BEGIN", `{"rest":"` + slashes.Replace(strings.Join(body, `\n`)) + `\n-----END PRIVATE KEY-----\n"}`, `{"rest":"` + P + `\n"}`},
		{"escaped slashes escaped twice", `\"private_key\":\"` + strings.ReplaceAll(key(`\\n`), "/", `\\\/`) + `\"`, `\"private_key\":\"` + P + `\\n\"`},
		{"unicode escapes", `"private_key": "` + unicode.Replace(key(`\n`)) + `"`, `"private_key": "` + P + `\n"`},
		{"unicode escapes, no END", `"private_key": "` + unicode.Replace(key(`\n`)[:len(key(`\n`))/2]) + `"`, `"private_key": "` + P + `"`},
		{"unicode escapes, no BEGIN", `"rest": "` + unicode.Replace(strings.Join(body, `\n`)) + `\n-----END PRIVATE KEY-----"`, `"rest": "` + P + `"`},
	}
	runContextCases(t, tests)
	rules := redact.Builtin()
	for _, tt := range tests {
		got := rules.Redact(tt.in)
		for _, l := range body {
			for _, part := range []string{l[:16], l[len(l)-16:]} {
				if strings.Contains(got, part) || strings.Contains(got, slashes.Replace(part)) || strings.Contains(got, unicode.Replace(part)) {
					t.Errorf("%s: part of a body line survived: %q in %.300q", tt.name, part, got)
				}
			}
		}
	}
}

// TestWebhookAndBotTokens: a Stripe webhook signing secret, a Discord
// webhook's token (its id stays, as the host does) and a Telegram bot's
// token, alone, in their URLs and assigned; look-alikes too short, too
// plain or elsewhere stay.
func TestWebhookAndBotTokens(t *testing.T) {
	f := fakecred.New(39)
	whsec := "wh" + "sec_" + f.Str(fakecred.B64, 32)
	whsecHex := "wh" + "sec_" + f.Str(fakecred.Hex, 64)
	id, dtok := f.Str("123456789", 1)+f.Str(fakecred.Digits, 17), f.Str(fakecred.B64URL, 68)
	tg := f.Str("123456789", 1) + f.Str(fakecred.Digits, 8) + ":A" + "A" + f.Str(fakecred.B64URL, 33)
	S, D, T := R("Stripe webhook secret"), R("Discord webhook"), R("Telegram bot token")
	runContextCases(t, []contextCase{
		{"whsec base64", "secret: " + whsec, "secret: " + S},
		{"whsec of the Stripe CLI", "Ready! Your webhook signing secret is " + whsecHex + " (^C to quit)",
			"Ready! Your webhook signing secret is " + S + " (^C to quit)"},
		{"whsec assigned", "STRIPE_WEBHOOK_SECRET=" + whsec + "\n", "STRIPE_WEBHOOK_SECRET=" + S + "\n"},
		{"discord", "https://discord.com/api/webhooks/" + id + "/" + dtok, "https://discord.com/api/webhooks/" + id + "/" + D},
		{"discord, a longer token", "https://discord.com/api/webhooks/" + id + "/" + dtok + dtok[:16] + " ok",
			"https://discord.com/api/webhooks/" + id + "/" + D + " ok"},
		{"discordapp, query", `curl -X POST "https://discordapp.com/api/webhooks/` + id + "/" + dtok + `?wait=true" -d @m.json`,
			`curl -X POST "https://discordapp.com/api/webhooks/` + id + "/" + D + `?wait=true" -d @m.json`},
		{"discord in JSON", `{"webhook_url": "https://ptb.discord.com/api/webhooks/` + id + "/" + dtok + `"}`,
			`{"webhook_url": "https://ptb.discord.com/api/webhooks/` + id + "/" + D + `"}`},
		{"telegram", "bot token " + tg + " from BotFather", "bot token " + T + " from BotFather"},
		{"telegram URL", "curl https://api.telegram.org/bot" + tg + "/sendMessage -d chat_id=42",
			"curl https://api.telegram.org/bot" + T + "/sendMessage -d chat_id=42"},
		{"telegram assigned", `TELEGRAM_BOT_TOKEN="` + tg + `"`, `TELEGRAM_BOT_TOKEN="` + T + `"`},
	})
	keptAsIs(t,
		"STRIPE_WEBHOOK_SECRET=wh"+"sec_...",
		"wh"+"sec_"+f.Str(fakecred.Alnum, 20),
		"wh"+"sec_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"https://discord.com/api/webhooks/{id}/{token}",
		"https://discord.com/api/webhooks/"+id+"/"+dtok[:40],
		"https://example.com/api/webhooks/"+id+"/"+dtok,
		"app.post('/api/webhooks/stripe', handler)",
		"https://discord.com/api/webhooks/123/"+dtok,
		f.Str(fakecred.Digits, 7)+":A"+"A"+f.Str(fakecred.B64URL, 33),
		f.Str("123456789", 1)+f.Str(fakecred.Digits, 10)+":A"+"A"+f.Str(fakecred.B64URL, 33),
		tg[:len(tg)-3],
		"1234567890:A"+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"10:AA:BB:CC:DD:EE and 12:30:AA",
	)
}
