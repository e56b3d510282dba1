package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// maxToken bounds the span of a token format: no known token is longer.
const maxToken = 1024

// A tokenRule is a token format: a fixed prefix (one of a few that mean
// the same) and a body of one alphabet, of a length and, where gitleaks'
// rule has one, an entropy floor (its rule id is in the comment).
type tokenRule struct {
	kind     string
	prefixes []string // case-sensitive
	prefix   string   // the one of prefixes a registered copy matches
	body     *charset
	min, max int     // the body's length
	bounded  bool    // no letter or digit may touch the token at either end
	keep     bool    // the prefix is kept: only the body is replaced
	entropy  float64 // the body's entropy must exceed it
	digit    bool    // the body must hold a digit
	check    func(body string) bool
}

var (
	slackBody   = chars(alnumChars, "-")
	webhookBody = chars(alnumChars, "+/_-")
	postmanBody = chars(digitChars, "abcdef-")
	sentryBody  = chars(alnumChars, "+/=_")
	// dottedB64 is base64url with dots: GitLab's, Google's OAuth and
	// SendGrid's token bodies.
	dottedB64  = chars(alnumChars, "_.-")
	ageBody    = chars("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
	headerName = chars(upperChars, lowerChars, "-")
)

var tokenRules = []tokenRule{
	// anthropic-api-key, anthropic-admin-api-key, and the OAuth tokens
	// Claude Code itself uses (sk-ant-oat01-, sk-ant-ort01-).
	{kind: "Anthropic API key", prefixes: []string{"sk-ant-"}, body: b64url, min: 32, max: 300, bounded: true, entropy: 3.5},
	// openai-api-key, and the sk- keys of OpenAI-compatible providers.
	{kind: "OpenAI API key", prefixes: []string{"sk-"}, body: b64url, min: 20, max: 400, bounded: true, entropy: 2.5, digit: true, check: openAIBody},
	// github-pat, github-oauth, github-app-token, github-refresh-token,
	// github-fine-grained-pat. GitHub says tokens may grow to 255 bytes.
	{kind: "GitHub token", prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, body: alnum, min: 36, max: 251, entropy: 3},
	{kind: "GitHub token", prefixes: []string{"github_pat_"}, body: word, min: 60, max: 244, entropy: 3},
	// gitlab-pat, gitlab-pat-routable and the other gitlab-* rules.
	{kind: "GitLab token", prefixes: []string{"glpat-", "glcbt-", "gldt-", "glffct-", "glft-"},
		body: dottedB64, min: 20, max: 300, bounded: true, entropy: 3},
	{kind: "GitLab token", prefixes: []string{"glimt-"}, body: dottedB64, min: 25, max: 300, bounded: true, entropy: 3},
	{kind: "GitLab token", prefixes: []string{"glagent-"}, body: dottedB64, min: 50, max: 300, bounded: true, entropy: 3},
	{kind: "GitLab token", prefixes: []string{"gloas-"}, body: dottedB64, min: 64, max: 300, bounded: true, entropy: 3},
	{kind: "GitLab token", prefixes: []string{"glptt-"}, body: dottedB64, min: 40, max: 300, bounded: true, entropy: 3},
	{kind: "GitLab token", prefixes: []string{"glrt-", "glsoat-"}, body: dottedB64, min: 20, max: 300, bounded: true, entropy: 3},
	{kind: "GitLab token", prefixes: []string{"GR1348941"}, body: b64url, min: 20, max: 300, bounded: true, entropy: 3},
	// aws-access-token, with its allowlist of AWS's documented examples.
	{kind: "AWS access key ID", prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		body: base32, min: 16, max: 16, bounded: true, entropy: 2.5, check: notExample},
	// gcp-api-key, and Google's OAuth client secrets and access tokens.
	{kind: "Google API key", prefixes: []string{"AIza"}, body: b64url, min: 35, max: 35, bounded: true, entropy: 3.5},
	{kind: "Google OAuth secret", prefixes: []string{"GOCSPX-"}, body: b64url, min: 28, max: 28, bounded: true, entropy: 3.5},
	{kind: "Google OAuth token", prefixes: []string{"ya29."}, body: dottedB64, min: 30, max: maxToken, bounded: true, entropy: 3.5},
	// slack-bot-token, slack-user-token, slack-app-token,
	// slack-config-*, slack-legacy-*.
	{kind: "Slack token", prefixes: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xoxe.xoxp-", "xoxe.xoxb-", "xapp-"},
		body: slackBody, min: 10, max: 300, bounded: true, entropy: 2, digit: true},
	// slack-webhook-url: the host is kept, the path is the secret.
	{kind: "Slack webhook", prefixes: []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"},
		body: webhookBody, min: 30, max: 200, keep: true, entropy: 3},
	// stripe-access-token: secret and restricted keys, live and test.
	{kind: "Stripe key", prefixes: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"},
		body: alnum, min: 16, max: 255, bounded: true, entropy: 2},
	// Stripe's webhook signing secrets (gitleaks has no rule): base64 of
	// 24 bytes from the Dashboard, hex of 32 from the CLI's stripe listen.
	{kind: "Stripe webhook secret", prefixes: []string{"whsec_"}, body: b64pad, min: 32, max: 100, bounded: true, entropy: 3},
	// npm-access-token, pypi-upload-token (and TestPyPI's).
	{kind: "npm token", prefixes: []string{"npm_"}, body: alnum, min: 36, max: 36, bounded: true, entropy: 2},
	{kind: "PyPI token", prefixes: []string{"pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"},
		body: b64url, min: 50, max: maxToken, bounded: true, entropy: 3},
	// huggingface-access-token, huggingface-organization-api-token.
	{kind: "Hugging Face token", prefixes: []string{"hf_", "api_org_"}, body: alpha, min: 34, max: 34, bounded: true, entropy: 3.5},
	// AI providers' keys, by their documented prefixes.
	{kind: "Groq API key", prefixes: []string{"gsk_"}, body: alnum, min: 52, max: 52, bounded: true, entropy: 3.5},
	{kind: "xAI API key", prefixes: []string{"xai-"}, body: alnum, min: 70, max: 100, bounded: true, entropy: 3.5},
	{kind: "Perplexity API key", prefixes: []string{"pplx-"}, body: alnum, min: 40, max: 64, bounded: true, entropy: 3.5},
	{kind: "Replicate token", prefixes: []string{"r8_"}, body: alnum, min: 37, max: 40, bounded: true, entropy: 3.5, digit: true},
	// sendgrid-api-token, digitalocean-*, shopify-*, vault-service-token,
	// vault-batch-token, linear-api-key, postman-api-token, sentry-*,
	// databricks-api-token, doppler-api-token, grafana-*,
	// heroku-api-key-v2, age-secret-key; Supabase's access tokens.
	{kind: "SendGrid key", prefixes: []string{"SG."}, body: dottedB64, min: 66, max: 66, bounded: true, entropy: 3.5},
	{kind: "DigitalOcean token", prefixes: []string{"dop_v1_", "doo_v1_", "dor_v1_"}, body: lowerHex, min: 64, max: 64, bounded: true, entropy: 3},
	{kind: "Shopify token", prefixes: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, body: hexChars, min: 32, max: 32, bounded: true, entropy: 3},
	{kind: "Vault token", prefixes: []string{"hvs."}, body: b64url, min: 90, max: 300, bounded: true, entropy: 3.5},
	{kind: "Vault token", prefixes: []string{"hvb."}, body: b64url, min: 138, max: 300, bounded: true, entropy: 3.5},
	{kind: "Linear API key", prefixes: []string{"lin_api_"}, body: alnum, min: 40, max: 40, bounded: true, entropy: 2},
	{kind: "Postman API key", prefixes: []string{"PMAK-"}, body: postmanBody, min: 59, max: 59, bounded: true, entropy: 3},
	{kind: "Sentry token", prefixes: []string{"sntrys_"}, body: sentryBody, min: 50, max: maxToken, bounded: true, entropy: 3.5},
	{kind: "Sentry token", prefixes: []string{"sntryu_"}, body: lowerHex, min: 64, max: 64, bounded: true, entropy: 3.5},
	{kind: "Databricks token", prefixes: []string{"dapi"}, body: lowerHex, min: 32, max: 32, bounded: true, entropy: 3, digit: true},
	{kind: "Doppler token", prefixes: []string{"dp.pt."}, body: alnum, min: 43, max: 43, bounded: true, entropy: 2},
	{kind: "Grafana token", prefixes: []string{"glsa_"}, body: word, min: 41, max: 41, bounded: true, entropy: 3},
	{kind: "Grafana token", prefixes: []string{"glc_"}, body: b64pad, min: 32, max: 400, bounded: true, entropy: 3},
	{kind: "Heroku API key", prefixes: []string{"HRKU-AA"}, body: b64url, min: 58, max: 58, bounded: true, entropy: 3.5},
	{kind: "Supabase token", prefixes: []string{"sbp_"}, body: lowerHex, min: 40, max: 40, bounded: true, entropy: 3},
	{kind: "age secret key", prefixes: []string{"AGE-SECRET-KEY-1"}, body: ageBody, min: 58, max: 58, bounded: true},
}

func init() {
	for i := range tokenRules {
		for _, prefix := range tokenRules[i].prefixes {
			t := tokenRules[i]
			t.prefix = prefix
			register(prefix, one(t.match))
		}
	}
	register("/api/webhooks/", one(matchDiscordWebhook))
	// A Telegram bot's token is its id, a colon and AA: the keyword is
	// the id's last digit with what follows, as digits are no keyword.
	for d := '0'; d <= '9'; d++ {
		register(string(d)+":AA", one(matchTelegramToken))
	}
	register("eyJ", one(matchJWT))
	register("-----BEGIN", one(matchPrivateKey))
	register("-----END", one(matchKeyTail))
}

// match finds the token t at hit, where its prefix is (case-folded).
func (t *tokenRule) match(s string, hit int) (found, bool) {
	if !strings.HasPrefix(s[hit:], t.prefix) || t.bounded && !boundaryBefore(s, hit) {
		return found{}, false
	}
	start := hit + len(t.prefix)
	end := runMax(s, start, t.body, t.max+1)
	for end > start && s[end-1] == '.' {
		end-- // a sentence's full stop, not the token's
	}
	body := s[start:end]
	switch {
	case len(body) < t.min || len(body) > t.max,
		t.bounded && end < len(s) && isAlnum(s[end]),
		t.digit && !hasDigit(body),
		t.entropy > 0 && entropy(body) <= t.entropy,
		t.check != nil && !t.check(body):
		return found{}, false
	}
	if !t.keep {
		start = hit
	}
	return found{Finding{start, end, t.kind}, format}, true
}

// runMax is run, stopped at limit bytes: a body that long is no token,
// and a long run is not read to its end once per keyword in it.
func runMax(s string, i int, set *charset, limit int) int {
	end := min(len(s), i+limit)
	for i < end && set[s[i]] {
		i++
	}
	return i
}

// Discord's webhook URLs: /api/webhooks/, the webhook's id (a snowflake
// of 17 to 20 digits) and its token of base64url. Its tokens are 68 bytes
// today; one of 60 to 256 is taken, so that a longer token of a later
// format still goes.
const (
	discordWebhookPath               = "/api/webhooks/"
	minDiscordToken, maxDiscordToken = 60, 256
)

// matchDiscordWebhook finds the token of a Discord webhook URL at hit,
// where its path starts; the host and the id stay, as the Slack webhook
// rule keeps the host (the id names the webhook, the token is the secret).
func matchDiscordWebhook(s string, hit int) (found, bool) {
	host := s[:hit]
	if !strings.HasPrefix(s[hit:], discordWebhookPath) || !strings.HasSuffix(host, "discord.com") && !strings.HasSuffix(host, "discordapp.com") {
		return found{}, false
	}
	id := hit + len(discordWebhookPath)
	slash := runMax(s, id, digits, 21)
	if n := slash - id; n < 17 || n > 20 || slash == len(s) || s[slash] != '/' {
		return found{}, false
	}
	start := slash + 1
	end := runMax(s, start, b64url, maxDiscordToken+1)
	if n := end - start; n < minDiscordToken || n > maxDiscordToken || entropy(s[start:end]) <= 3 {
		return found{}, false
	}
	return found{Finding{start, end, "Discord webhook"}, format}, true
}

// A Telegram bot's token (gitleaks' telegram-bot-api-token, narrowed to
// the tokens BotFather issues): the bot's id of 8 to 10 digits, a colon,
// and 35 bytes of base64url that start with AA.
const (
	minTelegramID, maxTelegramID = 8, 10
	telegramSecretLen            = 35
)

// matchTelegramToken finds a Telegram bot's token whose id ends at hit,
// alone or in the Bot API's URLs (api.telegram.org/bot<token>/getMe).
func matchTelegramToken(s string, hit int) (found, bool) {
	colon := hit + 1
	if !strings.HasPrefix(s[colon:], ":AA") {
		return found{}, false
	}
	start := colon
	for start > 0 && digits[s[start-1]] && colon-start <= maxTelegramID {
		start--
	}
	if n := colon - start; n < minTelegramID || n > maxTelegramID || !boundaryBefore(s, start) && !strings.HasSuffix(s[:start], "/bot") {
		return found{}, false
	}
	end := runMax(s, colon+1, b64url, telegramSecretLen+1)
	if end-colon-1 != telegramSecretLen || entropy(s[colon+1:end]) <= 3 {
		return found{}, false
	}
	return found{Finding{start, end, "Telegram bot token"}, format}, true
}

// openAIBody rejects what follows sk- in words and names: sk-ant- (the
// Anthropic rule's), and slugs such as sk-2024-q3-roadmap, lower-case
// words joined by hyphens with no long part, which no key is.
func openAIBody(body string) bool {
	if strings.HasPrefix(body, "ant-") {
		return false
	}
	if hasUpper(body) || strings.Count(body, "-")+strings.Count(body, "_") < 2 {
		return true
	}
	for part := range strings.FieldsFuncSeq(body, func(r rune) bool { return r == '-' || r == '_' }) {
		if len(part) >= 20 {
			return true
		}
	}
	return false
}

// notExample allows AWS's documented example keys (…EXAMPLE).
func notExample(body string) bool { return !strings.HasSuffix(body, "EXAMPLE") }

// maxJWTHeader bounds how much of a JWT's header is decoded to see
// whether it names "alg" or "typ". The parts themselves are read to
// their end however long they are (claims can run to tens of kilobytes,
// a header with a certificate chain to several, a 16384-bit RSA
// signature is 2.7 KiB): a JWT is one run of base64url and dots, so no
// other JWT can start inside it and each byte is read once. A header
// longer than this is taken for one unread: kilobytes of base64url JSON
// followed by two more parts are no ordinary text.
const maxJWTHeader = 8 << 10

// matchJWT finds header.payload.signature whose header decodes to a JSON
// object naming "alg" or "typ" (gitleaks' jwt rule wants "ey" parts; the
// decoded header is what makes one a JWT rather than base64 of JSON).
func matchJWT(s string, hit int) (found, bool) {
	if !strings.HasPrefix(s[hit:], "eyJ") || hit > 0 && (b64url[s[hit-1]] || s[hit-1] == '.') && !escapedBreak(s, hit) {
		return found{}, false
	}
	h := run(s, hit, b64url)
	if h-hit < 10 || h == len(s) || s[h] != '.' {
		return found{}, false
	}
	p := run(s, h+1, b64url)
	if p-h-1 < 2 || p == len(s) || s[p] != '.' {
		return found{}, false
	}
	end := run(s, p+1, b64url)
	if !jwtHeader(s[hit:h]) {
		return found{}, false
	}
	return found{Finding{hit, end, "JWT"}, format}, true
}

// jwtHeader reports whether a JWT's first part is a header: JSON naming
// "alg" or "typ", or longer than maxJWTHeader.
func jwtHeader(part string) bool {
	if len(part) > maxJWTHeader {
		return true
	}
	header, err := base64.RawURLEncoding.DecodeString(part)
	return err == nil && (bytes.Contains(header, []byte(`"alg"`)) || bytes.Contains(header, []byte(`"typ"`)))
}

// A private key's body is read to its end however long it is (a PGP key
// block runs to 20 KiB and more), and the work stays linear: a body never
// runs into the next armor line, and the search for keywords goes on
// after the block, so each line is read once. What is bounded is the
// search for an END line past a body that stops short of one (a key
// shown with an ellipsis in each line): it looks at most maxPrivateKey
// from the BEGIN line (the largest PEM keys, 16384-bit RSA, are about
// 12.6 KiB), so that no BEGIN line takes prose far after it for a key's,
// and stops at the next BEGIN line, so that the searches of a string's
// BEGIN lines never read the same bytes.
const maxPrivateKey = 16 << 10

// matchPrivateKey finds a PEM (or PGP) private key block: from its BEGIN
// line to its END line, or, when there is no END line (a truncated paste),
// over the base64 lines that follow, never beyond them (gitleaks'
// private-key rule, without its need for the END line). What precedes
// the BEGIN line on its line (a quote's "> ", a comment's "// ") stays.
func matchPrivateKey(s string, hit int) (found, bool) {
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s[hit:], begin) {
		return found{}, false
	}
	label, ok := armorLabel(s, hit+len(begin))
	if !ok {
		return found{}, false
	}
	end, stop := keyBody(s, hit+len(begin)+len(label)+len("-----"))
	if end < 0 {
		return found{}, false // no base64 after the BEGIN line: no key here
	}
	// The END line: where the body stops, or, past what is not base64 (a
	// key shown with an ellipsis in it), the next armor line if it is one.
	if e := endLine(s, stop); e > 0 {
		end = e
	} else if e := nextEndLine(s, stop, hit+maxPrivateKey); e > 0 {
		end = e
	}
	return found{Finding{hit, end, "private key"}, format}, true
}

// matchKeyTail finds the body and END line of a private key whose BEGIN
// line is not in the string (a key pasted in two messages): the base64
// lines before the END line, of which one at least is as long as a key's
// lines are and, as base64 of random bytes is, of mixed case (a hex
// digest before an END line is none).
func matchKeyTail(s string, hit int) (found, bool) {
	end := endLine(s, hit)
	if end < 0 {
		return found{}, false
	}
	start, full := -1, false
	for i, last := hit, true; ; last = false {
		j := keyGapBack(s, i)
		k := keyChunkBack(s, j)
		n := j - k
		if n < minKeyLine && (!last || n == 0 || !strings.ContainsAny(s[k:j], digitChars+"+/=")) {
			break
		}
		start, full, i = k, full || n >= minDressedLine && mixedCase(s[k:j]), k
	}
	if !full {
		return found{}, false
	}
	return found{Finding{start, end, "private key"}, format}, true
}

func mixedCase(s string) bool { return hasUpper(s) && strings.ContainsAny(s, lowerChars) }

// endLine returns the end of the "-----END … PRIVATE KEY-----" line at
// i, or -1 if there is none.
func endLine(s string, i int) int {
	const end = "-----END "
	if !strings.HasPrefix(s[i:], end) {
		return -1
	}
	label, ok := armorLabel(s, i+len(end))
	if !ok {
		return -1
	}
	return i + len(end) + len(label) + len("-----")
}

// nextEndLine returns the end of the first armor line from i on, before
// limit, if it is a private key's END line, or -1.
func nextEndLine(s string, i, limit int) int {
	limit = min(limit, len(s))
	for i < limit {
		e := strings.Index(s[i:limit], "-----")
		if e < 0 || strings.HasPrefix(s[i+e:], "-----BEGIN ") {
			return -1
		}
		i += e
		if strings.HasPrefix(s[i:], "-----END ") {
			return endLine(s, i)
		}
		i++
	}
	return -1
}

// armorLabel reads "RSA PRIVATE KEY-----" at i: the label of a private
// key's armor line, ending in PRIVATE KEY or PRIVATE KEY BLOCK.
func armorLabel(s string, i int) (string, bool) {
	e := strings.Index(s[i:min(len(s), i+64)], "-----")
	if e < 0 {
		return "", false
	}
	label := s[i : i+e]
	if !strings.HasSuffix(label, "PRIVATE KEY") && !strings.HasSuffix(label, "PRIVATE KEY BLOCK") {
		return "", false
	}
	for j := 0; j < len(label); j++ {
		if c := label[j]; !alnum[c] && c != ' ' && c != '_' && c != '-' {
			return "", false
		}
	}
	return label, true
}

// A key's body is chunks of base64 separated by whitespace, escaped
// newlines and what a key's lines are dressed in: a markdown quote or
// list, a comment, the quotes and plus signs of a string built in code, a
// backslash at a line's end. A chunk is as long as minKeyLine, or, next
// to such dress, as minDressedLine (a key's lines are 64 or 70 wide, and
// a name in code, "+ encodedKeyBody +", is shorter); the last may be
// shorter and hold a digit, + / or = (a PGP checksum, a line of padding).
// A word of prose is never taken for one.
const (
	minKeyLine     = 16
	minDressedLine = 32
	// maxDress bounds the dress between two chunks, so that punctuation
	// in prose ("-- see ---") does not join a key to what follows.
	maxDress = 8
)

var keyDress = chars(">#/*-+\"'`\\|,;()")

// keyBody returns the end of the base64 body of a key that starts at i
// (armor headers such as Proc-Type first), or -1 if there is none, and
// where the reading stopped: past the gap after the body, where its END
// line would be.
func keyBody(s string, i int) (end, stop int) {
	end, headers := -1, true
	for {
		j, dressed := keyGap(s, i)
		if headers && armorHeader(s, j) {
			i = lineEnd(s, j, len(s))
			continue
		}
		k := keyChunk(s, j)
		if n := k - j; n >= minKeyLine && (end >= 0 || !dressed || n >= minDressedLine) {
			end, headers, i = k, false, k
			continue
		}
		if k > j && end >= 0 && (k == len(s) || isKeySpace(s, k) || keyDress[s[k]]) && strings.ContainsAny(s[j:k], digitChars+"+/=") {
			next, _ := keyGap(s, k)
			return k, next
		}
		return end, j
	}
}

// keyChunk returns the end of the chunk of a key's body at i: base64,
// and the base64 characters that a JSON string may hold escaped (\/,
// \u002b, \u002f, \u003d, escaped again or not), so that a key in a file
// written by an encoder that escapes them (PHP's escapes /, Gson's =) is
// read whole.
func keyChunk(s string, i int) int {
	for i < len(s) {
		if b64pad[s[i]] {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		n := escapedB64(s, j)
		if j == i || n == 0 {
			break
		}
		i = j + n
	}
	return i
}

// keyChunkBack returns the start of the chunk of a key's body that ends
// at j (exclusive), keyChunk backwards: without the letter of an escaped
// newline before it (the n of \n).
func keyChunkBack(s string, j int) int {
	k := j
	for k > 0 {
		if b64pad[s[k-1]] {
			k--
			continue
		}
		if s[k-1] != '\\' || escapedB64(s, k) == 0 {
			break
		}
		for k > 0 && s[k-1] == '\\' {
			k--
		}
	}
	if k > 0 && s[k-1] == '\\' && k < j && isKeySpace(s, k-1) {
		k++ // the n of an escaped newline
	}
	return k
}

// escapedB64 returns the length of the escape of a base64 character at
// s[i:], past the backslashes it follows: / or u002b, u002f, u003d in
// either case; 0 if there is none.
func escapedB64(s string, i int) int {
	if i < len(s) && s[i] == '/' {
		return 1
	}
	if len(s)-i < 5 || s[i] != 'u' || s[i+1] != '0' || s[i+2] != '0' {
		return 0
	}
	if h, l := s[i+3], lowerByte[s[i+4]]; h == '2' && (l == 'b' || l == 'f') || h == '3' && l == 'd' {
		return 5
	}
	return 0
}

// keyGap skips the whitespace and dress from i to a key's next chunk,
// stopping at an armor line's dashes; dressed is whether there was dress.
func keyGap(s string, i int) (next int, dressed bool) {
	n := 0
	for i < len(s) {
		switch {
		case isKeySpace(s, i):
			if s[i] == '\\' {
				i++
			}
			i++
		case keyDress[s[i]] && n < maxDress && !strings.HasPrefix(s[i:], "-----"):
			n++
			i++
		default:
			return i, n > 0
		}
	}
	return i, n > 0
}

// keyGapBack is keyGap backwards from i (exclusive).
func keyGapBack(s string, i int) int {
	for n := 0; i > 0; i-- {
		switch c := s[i-1]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case i >= 2 && s[i-2] == '\\' && (c == 'n' || c == 'r' || c == 't'):
			i--
		case keyDress[c] && n < maxDress && !strings.HasSuffix(s[:i], "-----"):
			n++
		default:
			return i
		}
	}
	return i
}

func isKeySpace(s string, i int) bool {
	switch s[i] {
	case ' ', '\t', '\r', '\n':
		return true
	case '\\':
		return i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r' || s[i+1] == 't')
	}
	return false
}

// armorHeader reports whether a "Name: value" armor header line (RFC
// 1421's Proc-Type and DEK-Info, PGP's Version and Comment) starts at i.
func armorHeader(s string, i int) bool {
	j := run(s, i, headerName)
	return j-i >= 4 && j+1 < len(s) && s[j] == ':' && s[j+1] == ' '
}

func lineEnd(s string, i, limit int) int {
	for i < limit && s[i] != '\n' && !(s[i] == '\\' && i+1 < len(s) && s[i+1] == 'n') {
		i++
	}
	return i
}
