package redact

import (
	"slices"
	"strings"
)

// A tool is a command that takes a password after a flag.
type tool struct {
	name     string   // the command
	subs     []string // words one of which must follow it (docker login, 7z a), or none
	flags    []string // the flags the password follows
	attached bool     // the password follows the flag only without a blank (mysql -pX; -p alone asks)
	blank    bool     // the password follows the flag only after a blank (openssl enc -k X; -kfile is another flag)
	plain    bool     // the flag takes nothing but a password, which is one however short or plain (zip -P x)
	cluster  bool     // a one-letter flag may end a cluster of them (zip -rP x), as getopt reads them
	kind     string
}

// minToolKeyword is the shortest name a tool is looked for by alone.
const minToolKeyword = 4

// keywords are what the tool is looked for by: its name, or, when the
// name is shorter than minToolKeyword, the name with each of its
// subcommands, or with the blank after it (zip -P, zip out.zip -P): a
// short name alone (zip, gh) starts common words, and the keyword scan
// would stop at each.
func (t tool) keywords() []string {
	switch {
	case len(t.name) >= minToolKeyword:
		return []string{t.name}
	case len(t.subs) == 0:
		return []string{t.name + " "}
	}
	ws := make([]string, len(t.subs))
	for i, sub := range t.subs {
		ws[i] = t.name + " " + sub
	}
	return ws
}

// tools are the commands whose password flags are common in a session's
// commands and in the instructions it reads.
var tools = func() []tool {
	login := []string{"login"}
	ts := []tool{
		{name: "sshpass", flags: []string{"-p"}},
		{name: "redis-cli", flags: []string{"-a"}},
		{name: "security", flags: []string{"-w"}}, // macOS add-generic-password, add-internet-password
		{name: "sqlcmd", flags: []string{"-P"}},
		{name: "gh", subs: []string{"secret"}, flags: []string{"--body", "-b"}, kind: "secret"},
		{name: "az", subs: login, flags: []string{"-p"}},
		// keytool -storepasswd and -keypasswd take the new one after -new.
		{name: "keytool", flags: []string{"-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "-new"}},
		{name: "jarsigner", flags: []string{"-storepass", "-keypass"}},
		// ssh-keygen's -N is the new passphrase, -P the old one.
		{name: "ssh-keygen", flags: []string{"-N", "-P"}, plain: true, cluster: true, kind: "passphrase"},
		{name: "zip", flags: []string{"-P", "--password"}, blank: true, plain: true, cluster: true},
		{name: "unzip", flags: []string{"-P"}, blank: true, plain: true, cluster: true},
	}
	// 7-Zip's commands that read an archive or write one; -p alone asks.
	for _, n := range []string{"7z", "7za", "7zz"} {
		ts = append(ts, tool{name: n, subs: []string{"a", "e", "x", "t", "u", "l"}, flags: []string{"-p"}, attached: true, plain: true})
	}
	for _, n := range []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mariadb", "mariadb-dump"} {
		ts = append(ts, tool{name: n, flags: []string{"-p"}, attached: true})
	}
	for _, n := range []string{"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras"} {
		ts = append(ts, tool{name: n, subs: login, flags: []string{"-p"}})
	}
	for _, n := range []string{"ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare"} {
		ts = append(ts, tool{name: n, flags: []string{"-w"}})
	}
	for _, n := range []string{"mongosh", "mongo", "mongodump", "mongorestore", "mongoexport", "mongoimport"} {
		ts = append(ts, tool{name: n, flags: []string{"-p"}})
	}
	for i := range ts {
		if ts[i].kind == "" {
			ts[i].kind = "password"
		}
	}
	return ts
}()

var toolChars = chars(alnumChars, "-_")

// maxCommand is how far along a tool's command its password flag is
// looked for: a command line with its host, user, database and options
// fits (curl's maxLine also reads request bodies).
const maxCommand = 1 << 10

// matchToolPassword finds the password after a tool's flag, looked for
// along its command (through backslash-continued lines, up to && || | ;).
func matchToolPassword(s string, hit, from int) (found, int, bool) {
	e, ok := commandName(s, hit)
	if !ok {
		return found{}, 0, false
	}
	t, ok := toolNamed(s[hit:e])
	if !ok || t.plain && (!commandStart(s, hit) || len(t.subs) == 0 && !argumentsStart(s, e)) {
		return found{}, 0, false // a password however short is looked for only in a command, not in prose (the zip -P flag)
	}
	line := toolLine(s, e, t.name)
	if len(t.subs) > 0 && !slices.ContainsFunc(t.subs, func(sub string) bool { return hasWord(line[e:], sub) }) {
		return found{}, 0, false
	}
	return eachFlag(line, max(from, e), func(p int) (found, bool) { return toolFlag(s, line, p, t) })
}

// argumentsStart reports whether the word after a command's name that
// ends at e can be its first argument (zip -r x.zip, zip out.zip -P x,
// zip "my archive.zip", zip backup -P x), not a word of prose: one of
// proseWords ("zip the folder with -P and a password").
func argumentsStart(s string, e int) bool {
	i := skipContinued(s, e)
	end := i
	for end < len(s) && end-i < maxProseWord && !isKeySpace(s, end) {
		end++
	}
	if end == i {
		return false
	}
	if quoteLen(s, i) > 0 {
		return true // a quoted name: prose does not quote the word after zip
	}
	w := strings.Trim(s[i:end], "*_()[],.;:!?")
	return w == "" || !slices.Contains(proseWords, w)
}

// maxProseWord bounds how much of a command's first word argumentsStart
// reads: past the longest of proseWords and the punctuation around it,
// and so that a string of names without a blank is not read again at
// each.
const maxProseWord = 16

// proseWords are the words that follow an archiver's name in prose about
// it rather than in its command: articles, pronouns, conjunctions, the
// things it makes.
var proseWords = []string{
	"a", "an", "the", "this", "that", "these", "those", "it", "its", "them", "all", "up", "and", "or",
	"is", "are", "was", "with", "to", "of", "in", "on", "can", "will", "does", "file", "files",
	"archive", "archives", "folder", "folders", "directory", "format", "command", "tool", "utility",
}

// commandName returns the end of the word at hit if it can be a command's
// name: a word of its own, not the end of a flag (--mysql).
func commandName(s string, hit int) (int, bool) {
	if !boundaryBefore(s, hit) || hit > 0 && s[hit-1] == '-' {
		return 0, false
	}
	return run(s, hit, toolChars), true
}

// runners are the commands that run the command after them.
var runners = []string{"sudo", "exec", "nohup", "time", "env", "then", "do", "xargs", "command"}

// commandStart reports whether the word at hit starts a command: at the
// start of the string or a line (an escaped one too, and after an escaped
// tab: a Makefile's recipe in JSON), after a shell operator, a prompt
// ($, #, %, >, ❯), a quote, a backtick or a path's slash, or after
// a word that runs the next (sudo, then, xargs) and starts a command
// itself ("then unzip it" in prose starts none).
func commandStart(s string, hit int) bool {
	i := blanksBefore(s, hit)
	if i == 0 || strings.IndexByte("\n;&|($`\"'/{", s[i-1]) >= 0 || strings.HasSuffix(s[:i], `\n`) || promptBefore(s, i) {
		return true
	}
	if c, ok := cmdBefore(s, i); ok {
		return commandStart(s, c)
	}
	w := i
	for w > 0 && isLowerByte(s[w-1]) {
		w--
	}
	return w < i && boundaryBefore(s, w) && slices.Contains(runners, s[w:i]) && commandStart(s, w)
}

// maxPrompt bounds how far back from a prompt's last character its line
// start is looked for: a user, a host and a path.
const maxPrompt = 128

// promptBefore reports whether s before i ends with a shell prompt's last
// character other than $ (which commandStart takes anywhere): # % > or ❯
// after what a prompt holds before it on its line (see promptPrefix).
func promptBefore(s string, i int) bool {
	n := 1
	switch {
	case strings.HasSuffix(s[:i], "❯"):
		n = len("❯")
	case strings.IndexByte("#%>", s[i-1]) < 0:
		return false
	}
	from := max(0, i-n-maxPrompt)
	line := s[from : i-n]
	start := strings.LastIndexByte(line, '\n') + 1
	if j := strings.LastIndex(line, `\n`); j >= 0 {
		start = max(start, j+len(`\n`))
	}
	if start == 0 && from > 0 {
		return false // no line start near: no prompt
	}
	return promptPrefix(line[start:], s[i-n:i])
}

// promptPrefix reports whether p, what stands on its line before a
// prompt's last character c, is a prompt's, after a virtualenv's (venv):
//   - nothing, before % or ❯ (a bare # or > is a heading, a comment or a
//     quote);
//   - a host, before % (mac%, host1%; 100% and a% are prose);
//   - a user@host, a host:path or a shell and its version, before #
//     (root@box:~#, bash-5.1#; C# is prose);
//   - a drive's path, PowerShell's PS and its path, before > (C:\Program
//     Files\App>, PS C:\>; -> and <li> are prose);
//   - a user@host or a path, and then paths (alice@mac ~ %, [root@box ~]#,
//     alice@box ~>, box:~ #, ~/src ❯).
func promptPrefix(p, c string) bool {
	p = strings.TrimLeft(p, " \t")
	if _, rest, ok := strings.Cut(p, ") "); ok && strings.HasPrefix(p, "(") {
		p = rest
	}
	attached := p != "" && p[len(p)-1] != ' ' && p[len(p)-1] != '\t'
	words := strings.Fields(p)
	switch {
	case len(words) == 0:
		return c == "%" || c == "❯"
	case len(words) > 4:
		return false
	case words[0] == "PS":
		return c == ">" && attached && (len(words) == 1 || drivePath(words[1]))
	case drivePath(words[0]):
		return c == ">" && attached
	case len(words) == 1 && attached && c == "%":
		return len(words[0]) >= 2 && strings.ContainsAny(words[0], lowerChars+upperChars)
	case len(words) == 1 && attached && c == "#" && (strings.ContainsAny(words[0], "@:") || shellVersion(words[0])):
		return true
	}
	first := words[0]
	switch {
	case strings.Contains(first, "@"):
		if len(words) == 1 && !attached && !strings.Contains(first, ":") {
			return false // an address, not user@host:path (alice@x.com > …)
		}
	case !strings.Contains(first, ":~") && !pathWord(first):
		return false
	}
	for _, w := range words[1:] {
		if !pathWord(w) {
			return false
		}
	}
	return true
}

// drivePath reports whether w starts with a Windows drive's path (C:\).
func drivePath(w string) bool {
	return len(w) >= 3 && alpha[w[0]] && w[1] == ':' && w[2] == '\\'
}

// pathWord reports whether w is the path a prompt shows: ~, ~/src, /etc,
// or a directory's name closing a bracketed prompt ([alice@box src]).
func pathWord(w string) bool {
	return strings.HasPrefix(w, "~") || strings.HasPrefix(w, "/") || strings.HasSuffix(w, "]")
}

// shellVersion reports whether w is a shell's name and its version, as
// bash shows itself without a PS1 (bash-5.1).
func shellVersion(w string) bool {
	shell, version, ok := strings.Cut(w, "-")
	return ok && slices.Contains([]string{"bash", "sh", "zsh", "ksh"}, shell) && version != "" && digits[version[0]]
}

// cmdBefore returns where Windows' cmd (cmd.exe) starts if s before i ends
// with it and its /c or /k, which run the command after them, other
// switches between them (cmd /q /c).
func cmdBefore(s string, i int) (int, bool) {
	if i < 2 || s[i-2] != '/' || s[i-1]|0x20 != 'c' && s[i-1]|0x20 != 'k' {
		return 0, false
	}
	j := blanksBefore(s, i-2)
	for j >= 3 && s[j-2] == '/' && isAlnum(s[j-1]) && (s[j-3] == ' ' || s[j-3] == '\t') {
		j = blanksBefore(s, j-2) // another switch: /q, /s, /d
	}
	for _, name := range []string{"cmd", "cmd.exe"} {
		if c := j - len(name); c >= 0 && strings.EqualFold(s[c:j], name) && boundaryBefore(s, c) {
			return c, true
		}
	}
	return 0, false
}

// blanksBefore is where the blanks before i in s start, tabs escaped as
// \t among them.
func blanksBefore(s string, i int) int {
	for {
		switch {
		case i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			i--
		case strings.HasSuffix(s[:i], `\t`):
			i -= len(`\t`)
		default:
			return i
		}
	}
}

// toolLine is s up to the end of the command of the tool name, whose name
// ends at e: through backslash-continued lines, up to where the tool runs
// again, && || | or ; outside an argument's quotes.
func toolLine(s string, e int, name string) string {
	line := s[:commandEnd(s, e, min(len(s), e+maxCommand))]
	line = line[:nextCommand(line, e, name)] // which is its own hit's
	return line[:separatorAt(line, e)]
}

// separatorAt is where the first | ; or & after e in line is that is not
// inside a quoted argument ('k3y|x', "a;b"), or len(line). A quote opens
// an argument only at its start, after a blank, = or :, so that an
// apostrophe in prose (mysql's) opens none; one that does not close on
// the line quotes nothing. (The shell opens one inside a word too, pw"a|b",
// but a quote that closes a string the command is quoted in would then
// pair with the next one and hide the ; or && between them.)
func separatorAt(line string, e int) int {
	for i := e; i < len(line); i++ {
		switch line[i] {
		case '|', ';', '&':
			return i
		case ' ', '\t', '=', ':':
			n, q := quoteAt(line, i+1)
			if n == 0 {
				continue
			}
			if c, size := closeQuote(line[i+1+n:], q); c >= 0 {
				i += n + c + size
			}
		}
	}
	return len(line)
}

// eachFlag calls flag at each dash of line from p on, outside a flag's
// name, and returns the first secret it finds, with where to look for
// the next.
func eachFlag(line string, p int, flag func(p int) (found, bool)) (found, int, bool) {
	for p < len(line) {
		i := strings.IndexByte(line[p:], '-')
		if i < 0 {
			break
		}
		p += i
		if f, ok := flag(p); ok {
			return f, f.End, true
		}
		p = run(line, p, toolChars)
	}
	return found{}, 0, false
}

// nextCommand is where the tool name runs again as a command after e in
// line (a word of its own, after a blank or a path), or len(line).
func nextCommand(line string, e int, name string) int {
	for i := e; ; {
		j := strings.Index(line[i:], name)
		if j < 0 {
			return len(line)
		}
		j += i
		k := j + len(name)
		if c := line[j-1]; (c == ' ' || c == '\t' || c == '/') && (k == len(line) || line[k] == ' ') {
			return j
		}
		i = k
	}
}

func toolNamed(name string) (tool, bool) {
	for _, t := range tools {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// toolFlag reads the password of t's flag that starts at p, if one does.
func toolFlag(s, line string, p int, t tool) (found, bool) {
	if !flagStart(line, p) {
		return found{}, false
	}
	if q, ok := clusterFlag(line, p, t); ok {
		return toolValue(line, p, skipBlanks(line, q, 4), t)
	}
	for _, flag := range t.flags {
		if !strings.HasPrefix(line[p:], flag) {
			continue
		}
		q := p + len(flag)
		if q == len(line) || line[q] == '=' || (toolChars[line[q]] || line[q] == ':') && len(flag) > 2 {
			continue // --body-file, a flag this is a prefix of, keytool's -storepass:env NAME
		}
		blank := line[q] == ' ' || line[q] == '\t'
		if blank && t.attached || !blank && t.blank {
			continue
		}
		if blank {
			q = skipBlanks(line, q, 4)
		}
		return toolValue(line, p, q, t)
	}
	return found{}, false
}

// toolValue reads the value at q of t's password flag at p.
func toolValue(line string, p, q int, t tool) (found, bool) {
	if t.plain {
		return plainArg(line, q, t.kind)
	}
	return flagPassword(line, p, q, t.kind)
}

// clusterFlag returns where the value's blank starts after a cluster of
// one-letter flags at p that ends with one of t's (zip -rP x, -9rP x,
// ssh-keygen -qN x), if t reads clusters: only the last flag of a cluster
// can take a value, and it takes the next word.
func clusterFlag(line string, p int, t tool) (int, bool) {
	if !t.cluster {
		return 0, false
	}
	e := run(line, p+1, alnum)
	if e-p < 3 || e == len(line) || line[e] != ' ' && line[e] != '\t' {
		return 0, false
	}
	for _, f := range t.flags {
		if len(f) == 2 && line[e-1] == f[1] {
			return e, true
		}
	}
	return 0, false
}

// flagPassword reads the value at q of the password flag at p, named
// kind, if it is a password: not a flag, and of a password's shape (see
// passwordValue), whole or up to where a quote it holds ends (head).
func flagPassword(line string, p, q int, kind string) (found, bool) {
	start, end, head, ok := value(line, p, q)
	if !ok || line[start] == '-' || !passwordValue(line[start:end]) && (head == end || !passwordValue(line[start:head])) {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}

// flagStart reports whether a flag may start at p, after a blank.
func flagStart(line string, p int) bool {
	c := line[p-1]
	return c == ' ' || c == '\t' || c == '\n'
}

func init() { register("openssl", matchOpenSSLSecret) }

// matchOpenSSLSecret finds what openssl's flags give it of a secret: enc's
// -k password (after a blank: -kfile is another flag), the raw key of -K
// (enc and the cipher commands) and -psk (s_client, s_server), in hex,
// the password of -pass, -passin and -passout, given as pass:x, and the
// key of an HMAC (dgst's -hmac, -macopt key: and hexkey:). The IV and
// salt (-iv, -S) are no secret, and env:NAME, file:path, fd:n and stdin
// say where the password is.
func matchOpenSSLSecret(s string, hit, from int) (found, int, bool) {
	e, ok := commandName(s, hit)
	if !ok || s[hit:e] != "openssl" {
		return found{}, 0, false
	}
	line := toolLine(s, e, "openssl")
	c := opensslCommand{line: line, atCommand: commandStart(s, hit), enc: hasWord(line[e:], "enc")}
	return eachFlag(line, max(from, e), c.flag)
}

// opensslCommand is the line of an openssl command, whether openssl starts
// a command there (rather than standing in prose), and whether it is enc.
type opensslCommand struct {
	line           string
	atCommand, enc bool
}

// minHexKey is the shortest -K taken for a key: a DES key's 16 digits.
const minHexKey = 16

// minPSK is the shortest -psk taken for a key: TLS sets it no floor, and
// its examples are short (-psk 1a2b3c4d), but a word of hex letters
// alone is prose ("pass -psk a hex key", "-psk be careful"), so it holds
// a digit too.
const minPSK = 4

// hexKey reports whether v, given to flag (-K or -psk), is a key.
func hexKey(v, flag string) bool {
	if flag == "-K" {
		return len(v) >= minHexKey
	}
	return len(v) >= minPSK && strings.ContainsAny(v, digitChars)
}

// flag reads the secret of the openssl flag at p, if it is one that takes
// a secret and has one. An -hmac key with no quotes is taken however short
// only from a command (atCommand); elsewhere only one of a password's
// shape, since prose about the flag goes on with a word ("-hmac with your
// key").
func (c opensslCommand) flag(p int) (found, bool) {
	line := c.line
	if !flagStart(line, p) {
		return found{}, false
	}
	e := run(line, p, toolChars)
	q := skipBlanks(line, e, 4)
	if q == e || q == len(line) {
		return found{}, false
	}
	switch line[p:e] {
	case "-K", "-psk":
		start := q + quoteLen(line, q)
		end := run(line, start, hexChars)
		if !hexKey(line[start:end], line[p:e]) || end < len(line) && word[line[end]] {
			return found{}, false
		}
		return found{Finding{start, end, "encryption key"}, context}, true
	case "-k":
		if c.enc {
			return flagPassword(line, p, q, "password")
		}
	case "-pass", "-passin", "-passout":
		return prefixedArg(line, q, "pass:", "password")
	case "-hmac":
		f, ok := plainArg(line, q, "HMAC key")
		if ok && !c.atCommand && quoteLen(line, q) == 0 && !passwordValue(line[f.Start:f.End]) {
			return found{}, false
		}
		return f, ok
	case "-macopt":
		if f, ok := prefixedArg(line, q, "key:", "HMAC key"); ok {
			return f, true
		}
		return prefixedArg(line, q, "hexkey:", "HMAC key")
	}
	return found{}, false
}

// prefixedArg reads the secret of an openssl argument at q that starts
// with prefix, as pass:x of a pass phrase argument or key:x of -macopt,
// quoted whole or after the prefix or not, and names it kind. Given so, a
// secret is one however short or plain (pass:x, pass:secret, -hmac key),
// unless it is a reference or a stand-in ($PW, pass:changeme, <key>).
func prefixedArg(line string, q int, prefix, kind string) (found, bool) {
	start, end, ok := argSpan(line, q, prefix)
	if !ok || !givenSecret(line[start:end]) {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}

// plainArg reads the argument at q of a flag that takes nothing but a
// secret (zip -P x, ssh-keygen -N x, openssl -hmac x), quoted or not, and
// names it kind, as prefixedArg does; a flag there is none (the secret is
// asked for).
func plainArg(line string, q int, kind string) (found, bool) {
	if q < len(line) && line[q] == '-' {
		return found{}, false
	}
	return prefixedArg(line, q, "", kind)
}

// givenSecret reports whether v, given where only a secret goes (pass:x,
// zip -P x, htpasswd -b's last word), is one: however short or plain
// (x, secret, hunter2), unless it is empty, a reference or a stand-in
// ($PW, <key>, changeme, xxxx).
func givenSecret(v string) bool { return v != "" && !reference(v) && !hasStopword(v) }

// argSpan returns the span of the argument at q after prefix: inside its
// quotes if it is quoted whole or after the prefix, else up to a blank or
// a quote; ok is false if it does not start with prefix or its quote
// does not close.
func argSpan(line string, q int, prefix string) (start, end int, ok bool) {
	n := quoteLen(line, q)
	start = q + n
	if !strings.HasPrefix(line[start:], prefix) {
		return 0, 0, false
	}
	start += len(prefix)
	if n == 0 {
		n = quoteLen(line, start)
		q, start = start, start+n
	}
	end = start
	if n > 0 {
		_, quote := quoteAt(line, q)
		e, _ := closeQuote(line[start:min(len(line), start+maxQuoted)], quote)
		if e < 0 {
			return 0, 0, false
		}
		return start, start + e, true
	}
	for end < len(line) && !isKeySpace(line, end) && quoteLen(line, end) == 0 {
		if l := placeholderLen(line[end:]); l > 0 {
			end += l // in the word, the blank in it too
			continue
		}
		end++
	}
	return start, end, true
}

// placeholderLen is the length of the placeholder s starts with, or 0.
func placeholderLen(s string) int {
	const open = "[redacted: "
	if s == "" || s[0] != '[' || !strings.HasPrefix(s, open) {
		return 0
	}
	i := strings.IndexByte(s[len(open):min(len(s), len(open)+maxKind+1)], ']')
	if i < 0 {
		return 0
	}
	return len(open) + i + 1
}

func init() {
	register("htpasswd", matchHtpasswd)
	for _, n := range sambaTools {
		register(n, matchSambaPassword)
	}
}

// matchHtpasswd finds the password htpasswd -b takes as its last word,
// after the file and the user (after the user alone with -n). Only a
// command that ends there is read: prose about the flag goes on past it.
// Words before a flag are no arguments of htpasswd's, whose flags come
// first (docker run --entrypoint htpasswd httpd:2 -Bbn user x).
func matchHtpasswd(s string, hit, _ int) (found, int, bool) {
	e, ok := commandName(s, hit)
	if !ok || s[hit:e] != "htpasswd" {
		return found{}, 0, false
	}
	line := toolLine(s, e, "htpasswd")
	var words [3][2]int
	n, batch, noFile, stdin := 0, false, false, false
	for i := skipContinued(line, e); !argumentsEnd(line, i) && line[i] != '#'; i = skipContinued(line, i) {
		start, end, ok := argSpan(line, i, "")
		if !ok || end == i {
			return found{}, 0, false // no word here: nothing the command ends with is read
		}
		next := end + quoteLen(line, end)
		if f := line[i:end]; start == i && len(f) > 1 && f[0] == '-' {
			n = 0
			if f[1] != '-' { // htpasswd has no long flags
				batch = batch || strings.IndexByte(f, 'b') > 0
				noFile = noFile || strings.IndexByte(f, 'n') > 0
				stdin = stdin || strings.IndexByte(f, 'i') > 0
			}
			if c := f[len(f)-1]; c == 'C' || c == 'r' { // a cost, a number of rounds: -C 10, -bnBC 10
				next = skipContinued(line, next)
				next = run(line, next, digits)
			}
		} else if n++; n <= len(words) {
			words[n-1] = [2]int{start, end}
		}
		if next < len(line) && !isKeySpace(line, next) {
			break // the end of the string the command is quoted in
		}
		i = next
	}
	want := 3
	if noFile {
		want = 2
	}
	if !batch || stdin || n != want {
		return found{}, 0, false
	}
	pw := words[want-1]
	if !givenSecret(line[pw[0]:pw[1]]) {
		return found{}, 0, false
	}
	return found{Finding{pw[0], pw[1], "password"}, context}, 0, true
}

// skipContinued skips the blanks at i in line and the escaped line breaks
// among them, which join a command's lines.
func skipContinued(line string, i int) int {
	for {
		i = skipBlanks(line, i, len(line))
		if !strings.HasPrefix(line[i:], "\\\n") {
			return i
		}
		i += len("\\\n")
	}
}

// argumentsEnd reports whether a command's arguments have ended at i in
// line: at its end, a line break (a CR of CRLF, an escaped \n or \r of a
// script in a JSON string) or a redirection (> f, <f, 2>&1). (A shell's
// comment, # at a word's start, ends htpasswd's; net use's a # alone.)
func argumentsEnd(line string, i int) bool {
	if i >= len(line) || lineBreakAt(line, i) {
		return true
	}
	switch c := line[i]; {
	case c == '>' || c == '<':
		return true
	case c >= '0' && c <= '9':
		return i+1 < len(line) && line[i+1] == '>'
	}
	return false
}

func init() { register("net use", matchNetUse) }

// matchNetUse finds the password Windows' net use takes as a word of its
// own after the share (net use Z: \\srv\share password /user:DOM\alice,
// or after /user:), however short, in a command that starts at hit and
// holds no other word besides the device (Z:, *) and /options: prose
// about it goes on with more. A * asks for the password.
func matchNetUse(s string, hit, _ int) (found, int, bool) {
	e := hit + len("net use")
	if !boundaryBefore(s, hit) || e < len(s) && s[e] != ' ' && s[e] != '\t' || !commandStart(s, hit) {
		return found{}, 0, false
	}
	line := toolLine(s, e, s[hit:e])
	var pw [2]int
	share, words := false, 0
	for i := skipContinued(line, e); !argumentsEnd(line, i) && !commentAt(line, i); i = skipContinued(line, i) {
		start, end, ok := argSpan(line, i, "")
		if !ok || end == i {
			return found{}, 0, false
		}
		switch w := line[start:end]; {
		case start == i && w[0] == '/': // an option: /user:DOM\alice, /persistent:no
		case strings.HasPrefix(w, `\\`):
			share = true
		case !share && (w == "*" || len(w) >= 2 && w[len(w)-1] == ':'): // the device
		case !share:
			return found{}, 0, false // a word before the share: prose
		default:
			pw, words = [2]int{start, end}, words+1
		}
		i = end + quoteLen(line, end)
		if i < len(line) && !isKeySpace(line, i) {
			break // the end of the string the command is quoted in
		}
	}
	if !share || words != 1 || line[pw[0]:pw[1]] == "*" || !givenSecret(line[pw[0]:pw[1]]) {
		return found{}, 0, false
	}
	return found{Finding{pw[0], pw[1], "password"}, context}, 0, true
}

// commentAt reports whether a comment starts at i in line: a # alone
// (PowerShell's and the shell's; #pw is a word, cmd having no comments).
func commentAt(line string, i int) bool {
	return line[i] == '#' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t')
}

// sambaTools are Samba's clients, whose -U and --user take user%password.
var sambaTools = []string{"smbclient", "rpcclient", "smbcacls"}

// matchSambaPassword finds the password of a Samba client's -U or --user
// user%password (DOM\user%password): what follows the %, however short.
func matchSambaPassword(s string, hit, from int) (found, int, bool) {
	e, ok := commandName(s, hit)
	if !ok || !slices.Contains(sambaTools, s[hit:e]) {
		return found{}, 0, false
	}
	line := toolLine(s, e, s[hit:e])
	return eachFlag(line, max(from, e), func(p int) (found, bool) { return sambaUser(line, p) })
}

// sambaUser reads the password of the -U or --user flag at p, if it is
// one and is given one.
func sambaUser(line string, p int) (found, bool) {
	if !flagStart(line, p) {
		return found{}, false
	}
	var q int
	switch {
	case strings.HasPrefix(line[p:], "-U"):
		q = skipBlanks(line, p+len("-U"), 4)
	case strings.HasPrefix(line[p:], "--user=") || strings.HasPrefix(line[p:], "--user "):
		q = skipBlanks(line, p+len("--user="), 4)
	default:
		return found{}, false
	}
	start, end, ok := argSpan(line, q, "")
	pct := strings.IndexByte(line[start:end], '%')
	if !ok || pct < 0 {
		return found{}, false
	}
	start += pct + 1
	if !givenSecret(line[start:end]) {
		return found{}, false
	}
	return found{Finding{start, end, "password"}, context}, true
}
