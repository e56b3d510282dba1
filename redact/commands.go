package redact

import "strings"

// A tool is a command that takes a password after a flag.
type tool struct {
	name     string   // the command
	sub      string   // a word that must follow it (docker login), or ""
	flags    []string // the flags the password follows
	attached bool     // the password follows the flag only without a blank (mysql -pX; -p alone asks)
	blank    bool     // the password follows the flag only after a blank (openssl enc -k X; -kfile is another flag)
	kind     string
}

// keyword is what the tool is looked for by: its name, with its
// subcommand when the name is shorter than a keyword.
func (t tool) keyword() string {
	if len(t.name) < 3 {
		return t.name + " " + t.sub
	}
	return t.name
}

// tools are the commands whose password flags are common in a session's
// commands and in the instructions it reads.
var tools = func() []tool {
	ts := []tool{
		{name: "sshpass", flags: []string{"-p"}},
		{name: "redis-cli", flags: []string{"-a"}},
		{name: "security", flags: []string{"-w"}}, // macOS add-generic-password, add-internet-password
		{name: "sqlcmd", flags: []string{"-P"}},
		{name: "gh", sub: "secret", flags: []string{"--body", "-b"}, kind: "secret"},
		{name: "az", sub: "login", flags: []string{"-p"}},
		// keytool -storepasswd and -keypasswd take the new one after -new.
		{name: "keytool", flags: []string{"-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "-new"}},
		{name: "jarsigner", flags: []string{"-storepass", "-keypass"}},
		// openssl's -passin and -passout take pass:X, an assignment.
		{name: "openssl", sub: "enc", flags: []string{"-k"}, blank: true},
	}
	for _, n := range []string{"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mariadb", "mariadb-dump"} {
		ts = append(ts, tool{name: n, flags: []string{"-p"}, attached: true})
	}
	for _, n := range []string{"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras"} {
		ts = append(ts, tool{name: n, sub: "login", flags: []string{"-p"}})
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
	if !ok {
		return found{}, 0, false
	}
	line := toolLine(s, e, t.name)
	if t.sub != "" && !hasWord(line[e:], t.sub) {
		return found{}, 0, false
	}
	return eachFlag(line, max(from, e), func(p int) (found, bool) { return toolFlag(s, line, p, t) })
}

// commandName returns the end of the word at hit if it can be a command's
// name: a word of its own, not the end of a flag (--mysql).
func commandName(s string, hit int) (int, bool) {
	if !boundaryBefore(s, hit) || hit > 0 && s[hit-1] == '-' {
		return 0, false
	}
	return run(s, hit, toolChars), true
}

// toolLine is s up to the end of the command of the tool name, whose name
// ends at e: through backslash-continued lines, up to where the tool runs
// again, && || | or ;.
func toolLine(s string, e int, name string) string {
	line := s[:commandEnd(s, e, min(len(s), e+maxCommand))]
	line = line[:nextCommand(line, e, name)] // which is its own hit's
	if i := strings.IndexAny(line[e:], "|;&"); i >= 0 {
		line = line[:e+i]
	}
	return line
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
		start, end, head, ok := value(line, p, q)
		if !ok || line[start] == '-' || !passwordValue(line[start:end]) && (head == end || !passwordValue(line[start:head])) {
			return found{}, false
		}
		return found{Finding{start, end, t.kind}, context}, true
	}
	return found{}, false
}

// flagStart reports whether a flag may start at p, after a blank.
func flagStart(line string, p int) bool {
	c := line[p-1]
	return c == ' ' || c == '\t' || c == '\n'
}

func init() { register("openssl", matchOpenSSLSecret) }

// matchOpenSSLSecret finds what openssl's flags give it of a secret
// beyond enc's -k (a tool's password flag): the raw key of -K (enc and
// the cipher commands) and -psk (s_client, s_server), in hex, and the
// password of -pass, -passin and -passout, given as pass:x. The IV and
// salt (-iv, -S) are no secret, and env:NAME, file:path, fd:n and stdin
// say where the password is.
func matchOpenSSLSecret(s string, hit, from int) (found, int, bool) {
	e, ok := commandName(s, hit)
	if !ok || s[hit:e] != "openssl" {
		return found{}, 0, false
	}
	line := toolLine(s, e, "openssl")
	return eachFlag(line, max(from, e), func(p int) (found, bool) { return opensslFlag(line, p) })
}

// minHexKey is the shortest -K taken for a key: a DES key's 16 digits.
const minHexKey = 16

// opensslFlag reads the secret of the openssl flag at p, if it is one
// that takes a secret and has one.
func opensslFlag(line string, p int) (found, bool) {
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
		if end-start < minHexKey || end < len(line) && word[line[end]] {
			return found{}, false
		}
		return found{Finding{start, end, "encryption key"}, context}, true
	case "-pass", "-passin", "-passout":
		return prefixedArg(line, q, "pass:", "password")
	case "-hmac":
		return prefixedArg(line, q, "", "HMAC key")
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
	n := quoteLen(line, q)
	start := q + n
	if !strings.HasPrefix(line[start:], prefix) {
		return found{}, false
	}
	start += len(prefix)
	if n == 0 {
		n = quoteLen(line, start)
		q, start = start, start+n
	}
	end := start
	if n > 0 {
		e := strings.Index(line[start:min(len(line), start+maxQuoted)], line[q:q+n])
		if e < 0 {
			return found{}, false
		}
		end += e
	} else {
		for end < len(line) && !isKeySpace(line, end) && quoteLen(line, end) == 0 {
			end++
		}
	}
	if v := line[start:end]; v == "" || reference(v) || hasStopword(v) {
		return found{}, false
	}
	return found{Finding{start, end, kind}, context}, true
}
