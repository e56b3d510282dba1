// Package redact owns credential redaction: the rules that find a
// credential in a string and replace it by a placeholder naming its kind,
// "[redacted: GitHub token]", so that a reader knows something was there.
// A bottle outlives its transcript, is indexed and is served to the model,
// so every string that reaches one goes through here (after the tag
// stripper, so that text joined by a removed element is seen whole, and
// before any clipping, so that a credential is never cut below the length
// that identifies it).
//
// A [Rules] value is an immutable, compiled rule set, safe for concurrent
// use: [Builtin] is bottled's own, [Rules.With] adds the user's patterns
// (read with [Parse]). It is passed in by whoever renders; this package
// reads no file and no clock. [Rules.ID] names the rule set, so that a
// bottle made by other rules can be found and made again.
//
// # What is redacted
//
// Token formats, found by their fixed prefix and alphabet, each with the
// length and, where gitleaks has one, the entropy floor of its
// gitleaks rule: Anthropic (sk-ant-…), OpenAI and OpenAI-style (sk-…,
// sk-proj-…), GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab
// (glpat- and the other gl…- tokens, GR1348941…), AWS access key IDs
// (AKIA, ASIA, ABIA, ACCA), Google API keys (AIza…) and OAuth secrets and
// tokens (GOCSPX-, ya29.), Slack tokens (xox?-, xapp-) and webhook paths,
// Discord webhooks' tokens (discord.com or discordapp.com/api/webhooks/,
// the id of 17 to 20 digits, which stays, and a token of base64url, 68
// bytes today, 60 to 256 taken),
// Telegram bots' tokens (an id of 8 to 10 digits, :AA and 33 bytes of
// base64url; in the Bot API's URLs, /bot<token>/, too), Stripe secret and
// restricted keys, live and test (sk_live_, sk_test_,
// rk_live_, rk_test_; test keys too, since they act as the account in
// test mode and secret scanning treats them as secrets; publishable pk_
// keys are public and kept) and webhook signing secrets (whsec_ and 32
// bytes of base64 or more), npm and PyPI tokens, and the tokens of
// Hugging Face, Groq, xAI, Perplexity, Replicate, SendGrid, DigitalOcean,
// Shopify, HashiCorp Vault, Linear, Postman, Sentry, Databricks, Doppler,
// Grafana, Heroku, Supabase and age secret keys. A token, a JWT and a
// command are looked for where a word starts: after no letter or digit,
// or after an escaped line break or tab (\n, \r, \t, as a JSON string or
// a log writes them), whose letter starts no word.
//
// Structures: private key blocks ("-----BEGIN … PRIVATE KEY-----" to its
// END line; when the END line is missing, the base64 body that follows,
// never the prose after it; when the BEGIN line is missing, a key pasted
// in two messages, the base64 lines before the END line), however long,
// and whatever their lines are dressed in: a markdown quote or list
// ("> ", "  - "), a comment ("# ", "// ", " * "), a string built in code
// ("…" +, '…\n' +), a backslash at each line's end (what precedes the
// first line stays: "> [redacted: private key]"); with line breaks
// written as escapes, as a JSON file holds a key (a Google service
// account's "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE…", \r\n
// too, and escaped again, \\n, in a JSON string inside another), and with
// base64's characters escaped as some JSON encoders write them (\/,
// \u002b, \u002f, \u003d). JWTs: three base64url
// parts whose first decodes to a JSON header with "alg" or "typ", of any
// length (a first part over 8 KiB is taken for a header unread).
//
// Contexts, where only the secret part is replaced and the rest is kept:
// the password of a URL or connection string (scheme://user:[redacted:
// password]@host; one that holds # / ? ( ) [ ], which end a URL's
// authority, runs to the last @ before whitespace that a host follows,
// unless it is a port, host:8080/path@x), of curl's -u user:password, the credentials of an
// Authorization header (Bearer, Basic, token or bare, in curl -H '…', in
// JSON and in plain text), a Bearer token anywhere, the session values
// of a Cookie or Set-Cookie header and of curl's -b and --cookie (a
// cookie's value that is a secret by the generic rule below: sid=x goes,
// theme=dark and Path=/ stay), the sig= of an Azure shared access
// signature's query (its value, percent-decoded, the base64 of an
// HMAC-SHA256: 43 characters and an =), the signature of a presigned URL
// (AWS's X-Amz-Signature, and the Signature= of a SigV4 Authorization
// header, AWS4-HMAC-SHA256 or GOOG4-HMAC-SHA256 Credential=…, in any
// case, its fields on one line or a line each after the algorithm and
// each comma (the algorithm stays),
// Google's X-Goog-Signature: hex of at least 64 digits; the
// Signature= of a query, after ? or & or an & escaped as &amp; or \u0026,
// S3's version 2, Google's and CloudFront's signed URLs: base64,
// percent-decoded, of at least 27 characters with a digit; in an
// Authorization header the credential scope goes with the header's
// credentials, the algorithm stays; X-Amz-Security-Token is a token by the rule
// below, X-Amz-Credential a credential), and the value of an
// assignment whose key names a secret: KEY=value, "token": "value",
// password: value, --api-key value, <password>value</password>, with
// the value in straight, escaped or typographic quotes (“…”, ‘…’, „…“,
// «…», 「…」, ＂…＂) and = or : also fullwidth (＝, ：). An unquoted
// value runs to the next whitespace, so that no part of a password with
// symbols in it is shown, unless before it come: what closes the quote or
// bracket the key stands in (f(password=x), 'PASSWORD=x', ["K=x"], the
// </ of <key>x</key>), the & or # of a URL's query, a separator (& ; ,)
// before the next key=value (Password=x;Encrypt=true) or another key that
// names a secret with its = or :; non-ASCII punctuation or an escape
// shown as text (\n, \"). Sentence punctuation (. , ; :) at its end is
// the sentence's, and brackets around it whole, password=(x), are kept.
// A value that is code is none: a name called, indexed, qualified or
// referenced (os.environ["PW"], roi_q.reindex(…), &serde_json::Value,
// Option<String>), or a package's coordinate (group:artifact:1.2.3).
//
// A key followed by no operator, only a blank, is an assignment where
// something says the next word is a value, since "password field" is
// English: the layout, a table's next cell (| DB password | x |), a tab
// (Password<TAB>x) or a .netrc line (machine h login u password x), where
// the value must fill its cell and is judged as after an operator; or its
// shape alone, after a blank or a dash, and for a password after "is"
// or "was" too ("the key is x" is as often prose) (aws configure set
// aws_secret_access_key x, npm config set …:_authToken x, API Key - x,
// "my password is x"):
// a secret by the rule above that holds a digit, or a password of at
// least 8 bytes with three of lower-case letters, capitals, digits and
// symbols (- _ . join names: server02-ipmi is none), never hex (a
// commit's hash, 0xdeadbeef), a version (1:4.8.1-2ubuntu2), a constant's
// name (TOKEN_NAME_V2), a name of lower-case words, or a word with the
// JSON around it (a double quote that closes a JSON string: key
// directories"},"id":…). Without an operator
// pass and auth are verbs and prefixes (first-pass, "or pass x"), and
// name nothing. Commands that take a password after a flag: sshpass -p,
// redis-cli -a, docker (podman, nerdctl, buildah, skopeo, helm, oras)
// login -p, mysql (mysqldump, mysqladmin, mariadb…) -pX (only attached:
// -p alone asks for it), security -w, ldapsearch (ldapadd, ldapmodify…)
// -w, sqlcmd -P, mongosh (mongo, mongodump…) -p, az login -p, keytool
// -storepass, -keypass, -srcstorepass, -deststorepass, -srckeypass,
// -destkeypass and -new, jarsigner -storepass and -keypass, openssl enc
// -k (after a blank only: -kfile is another flag), openssl's -pass,
// -passin and -passout pass:x (a password however short or plain,
// pass:x, pass:secret, quoted with blanks in it too, unless a reference
// or a stand-in; env:NAME, file:path, fd:n and stdin say where one is)
// and its raw keys, -K (an encryption key: hex of at least 16 digits) and
// -psk (hex of 4 digits or more, one of them a decimal digit: -psk
// 1a2b3c4d; "-psk a hex key" is prose; the -iv and the salt -S are no
// secret), the key of an HMAC,
// dgst's -hmac x and -macopt key:x or hexkey:x (however short, as pass:),
// gh secret set --body or -b (a secret), and the flags that take nothing
// but a password, which is one however short or plain unless empty or a
// stand-in, where the command starts (a line, escaped too, \n, \t in
// JSON, a quote, a prompt: a $, or # % > ❯ after what a shell prints
// before them on their line (mac%, alice@mac ~ %, [root@box ~]#,
// bash-5.1#, box:~ #, C:\Program Files\App>, PS C:\>, ~/src ❯, % or ❯
// alone), where a bare # or > is a heading or a quote, and C#, ->, 100%
// or Settings ❯ Security prose; after && ; | or a runner such as
// sudo, then or cmd /c that starts one itself; "the zip -P flag" and
// "then unzip it with -P" are prose) and its first word is no word of prose
// (an article, a pronoun, a conjunction, file, archive, folder…: "zip the
// folder with -P and a password", "zip files made with -P" are prose): ssh-keygen -N (the
// new passphrase) and -P (the old; -N "" is none), zip -P and --password,
// unzip -P, anywhere along the command (zip out.zip -P x) and as the last
// of a cluster of one-letter flags (zip -rP x, unzip -oP x, ssh-keygen
// -qN x), and 7z (7za, 7zz) -pX (only attached: -p alone asks for it);
// looked for along the command up to && || | or ; (outside an argument's
// quotes: -hmac 'k|x' is one argument). htpasswd -b takes the password
// as its last word, after the file and the user (the user alone with -n;
// a cost, -C 10 or -bnBC 10, is no word), in a command that ends there
// (prose goes on past it; a line break, raw, escaped or CRLF, a
// redirection or a # comment ends it), its lines joined by backslashes too; without -b,
// or with -i, none is on the line. Windows' net use takes one as a word
// of its own after the share (net use Z: \\srv\share x /user:DOM\alice,
// or after /user:), however short, in a command that holds no other word
// than the device, the share and /options, up to its end, a redirection
// (>nul 2>&1) or a # alone (PowerShell's comment; #pw is a word); * asks
// for it. smbclient's (rpcclient's,
// smbcacls') -U and --user take user%password: the password after the %
// goes however short, the user (DOM\user) stays. A flag of more than
// one letter followed by more of a flag's characters, or by a colon
// (keytool's -storepass:env NAME), is another flag. A key
// names a secret when one of its words (split at _ . - and camelCase, in
// any case; PassWord is one word) is key, token, secret, password, passwd,
// passwort, pwd, pw, pass, passphrase, auth, credential(s), creds or a
// compound ending in one of the long ones
// (apikey, accesstoken, clientsecret, pgpassword…), unless a word after it
// says it is not the secret itself (key_id, token_url, secret_name,
// password_hash, …_rev) or, for key, token and auth, which have other
// meanings, the word before it does (public_key, cache key,
// next_page_token, csrf_token). A password's value is redacted when it is
// at least 6 bytes and not only letters; any other secret's value when it
// is at least 10 bytes, holds a digit (or, from 20 bytes, one of + / =),
// has a Shannon entropy above 3.5 bits a byte (gitleaks' threshold for its
// generic-api-key rule) and is not a name built of three or more
// lower-case words (a cache key, an image tag). Values that are
// placeholders stay: variable references ($VAR, ${VAR}, %VAR%), templates
// ({{…}}, <your-token>), masks (********, xxxx, …EXAMPLE), values in
// which example, sample, placeholder, changeme, your, dummy, fake, mock
// or demo is a whole word (your-api-key, YourToken, changeme123; as the
// start of a longer word, Mockingbird#7, or inside a run of random
// characters, Sample9Qz!x, such a word is chance, and is redacted), file
// paths and URLs. A value that starts with $ is a variable only as $name
// (alone or before / : . -), ${…} or $(…): $uper5ecret! is a password. A value with a space in it is never taken for a secret: it is
// prose (passphrases with spaces are the price).
//
// Escaped tokens: a token format or a JWT written with markdown
// backslash escapes of its punctuation (ghp\_…, sk\-ant-…, as markdown
// renderers show live) or with HTML character references (ghp&#95;…,
// &#x5F;, &lowbar;; a numeric one of a letter or digit too) is found in
// the word that holds it with these decoded, and replaced escapes and
// all. (Only the token formats are looked for there: a context's key and
// value are found as they are written; a private key's lines are words
// of their own.)
//
// What stays: git SHAs, UUIDs and checksums in ordinary text (under a key
// that names a secret they are redacted: many services use them as
// tokens), base64 of ordinary text and base64 images, sk-learn and other
// words, URLs without a password, file paths and package names.
//
// # Placeholders and spans
//
// A credential is replaced by "[redacted: <kind>]". Where rules overlap
// (an OpenAI key assigned to OPENAI_API_KEY, a GitHub token as a URL's
// password) the union of their spans is replaced once, named by the most
// specific rule: a token format before a context. Text outside the
// replaced spans is left byte for byte. Each span is bounded: a token at
// most 1 KiB, and for a context the value alone (the key, operator and
// quotes stay), at most 8 KiB. A JWT, an Authorization header's
// credentials and a private key are replaced whole however long they are
// (claims can run to tens of kilobytes, a PGP key block to twenty),
// bounded by what they may hold instead: a JWT's span is its three
// parts, base64url and two dots; the credentials' their run of RFC
// 7235's token68; a key's is its lines, and
// reaches at most 16 KiB from its BEGIN line past anything in them that
// is not base64 (a key shown with an ellipsis in each line). Redact(Redact(s)) == Redact(s): no rule matches a
// placeholder. Spans start and end at ASCII delimiters or next to a whole
// quote (“…”, «…», 「…」), so valid UTF-8 stays valid.
//
// # User patterns
//
// An organisation's own token formats are added from a text file (the
// store reads it from <data-dir>/redact-patterns). Each line is
//
//	Kind name: RE2 pattern
//
// The kind is what the placeholder shows (letters, digits, spaces and
// - _ . / ( ) + &, at most 40 bytes); the pattern, after the first colon
// and without the spaces around it, is a Go (RE2) regular expression
// (https://golang.org/s/re2syntax). A pattern with groups named secret,
// (?P<secret>…), has only those replaced, each that took part in the
// match; otherwise the whole match is. Blank lines and lines whose first
// non-space character is # are ignored (a # later in a line is part of
// the pattern). For example:
//
//	# Acme's internal tokens
//	Acme token: acme_[A-Za-z0-9]{32}
//	Acme session: ACME_SESSION=(?P<secret>[0-9a-f]{40})
//
// A pattern that does not compile, matches the empty string or matches a
// placeholder, and a kind that the built-in rules take for a credential,
// are errors naming their line; an error shows at most the first six
// characters of what the line holds, so that a credential pasted into
// the file by mistake is not printed back. A pattern that starts with a
// literal (acme_ above) is the fastest: every other one is run over every
// string.
//
// # Sources
//
// The rules follow gitleaks' default configuration (config/gitleaks.toml
// in github.com/gitleaks/gitleaks, v8.25 format): anthropic-api-key,
// anthropic-admin-api-key, openai-api-key, github-pat, github-oauth,
// github-app-token, github-refresh-token, github-fine-grained-pat,
// gitlab-pat, gitlab-pat-routable, gitlab-cicd-job-token,
// gitlab-deploy-token, gitlab-feature-flag-client-token, gitlab-feed-token,
// gitlab-incoming-mail-token, gitlab-kubernetes-agent-token,
// gitlab-oauth-app-secret, gitlab-ptt, gitlab-rrt,
// gitlab-runner-authentication-token, gitlab-scim-token, aws-access-token
// (and its EXAMPLE allowlist), gcp-api-key, slack-bot-token,
// slack-user-token, slack-app-token, slack-config-access-token,
// slack-legacy-*, slack-webhook-url, stripe-access-token,
// telegram-bot-api-token (narrowed to BotFather's ids and AA),
// npm-access-token, pypi-upload-token, huggingface-access-token,
// sendgrid-api-token, digitalocean-*, shopify-*, vault-service-token,
// vault-batch-token, linear-api-key, postman-api-token, sentry-*-token,
// databricks-api-token, doppler-api-token, grafana-*, heroku-api-key-v2,
// age-secret-key, private-key, jwt, curl-auth-header, curl-auth-user and
// generic-api-key (its keywords, operators, entropy 3.5, its rule that a
// value of only letters is no secret, and the spirit of its allowlist and
// stop words). gitleaks is not a dependency: as a library it brings some
// seventy modules (viper, cobra, zerolog, archive readers, a WebAssembly
// RE2), scans files and commits rather than replacing spans in a string,
// and runs a regular expression per rule over the whole text. Here every
// rule is a small hand-written matcher started at a keyword found in one
// pass over the string, so a string without a keyword costs one scan and
// no allocation.
package redact
