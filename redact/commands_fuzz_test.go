package redact_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/redact"
)

// commandWords are what FuzzCommandLines builds command lines of: the
// commands whose arguments the rules read word by word, their flags, the
// words and quotes around a password, and what joins or ends a command.
var commandWords = []string{
	"htpasswd", "zip", "unzip", "7z a", "ssh-keygen", "sshpass", "mysql", "docker login", "openssl enc",
	"openssl dgst", "smbclient", "keytool", "ldapsearch", "curl", "net use", "sudo", "gh secret set",
	"-b", "-bc", "-nbB", "-n", "-i", "-C", "-P", "-rP", "-p", "-pX", "-U", "--user", "--user=", "-N", "-K",
	"-psk", "-pass", "pass:", "-hmac", "-macopt", "key:", "-storepass", "-w", "-a", "--password", "/user:",
	"alice", "DOM\\alice%", "file.htpasswd", `\\srv\share`, "Z:", "hunter2", "S3cr3t!Zq9", "12", "$PW",
	"<password>", "''", `""`, "'a b'", `"a|b"`, `\"`, "“", "”",
	" ", " ", "  ", "\t", "\\\n", "\\\r\n", "\n", " | ", "; ", " && ", ">", "<", "=", ":", "%", "'", `"`, "`",
	`\n`, `\r\n`, `\t`, ">nul", "2>&1", "-bnBC", "10", "❯ ", "# ", "AWS4-HMAC-SHA256", "Credential=", ",", "Signature=",
	"cmd /c", "cmd.exe /C", "/c", "cmd",
	"mac%", "alice@mac ~ %", "[root@box ~]#", "bash-5.1#", `PS C:\>`, `C:\Program Files\App>`, "100%", "C#", "->",
}

// hangLimit is how long FuzzCommandLines waits for one Redact of a line of
// a few hundred bytes, which takes microseconds: far past any busy
// machine, so that only a matcher that loops for ever fails it.
const hangLimit = 10 * time.Second

// FuzzCommandLines redacts command lines made of commandWords, in any
// order, a blank after a word where a pick's high bit says: every matcher
// that walks a command's words must end, what it finds must be a span of
// the input, and no rule may match a placeholder. It does not ask that a
// second pass find nothing, as FuzzRedact does: a replaced span takes its
// quotes and separators with it, and in a line as tangled as these
// (pw"a|b" -hmac x, --password “x | y“) the words after it can read anew,
// so that a second pass redacts more, never less.
func FuzzCommandLines(f *testing.F) {
	f.Add(picks(f, "htpasswd", "-b", "\\\n", "file.htpasswd", "alice", "hunter2"))
	f.Add(picks(f, "htpasswd", "-nbB", "alice", "\\\n", "hunter2"))
	f.Add(picks(f, "zip", "-rP", "hunter2", "\\\n", "-P", "'a b'"))
	f.Add(picks(f, "openssl dgst", "-hmac", `"a|b"`, " | ", "smbclient", "-U", "DOM\\alice%", "S3cr3t!Zq9"))
	rules := redact.Builtin()
	f.Fuzz(func(t *testing.T, picks []byte) {
		var b strings.Builder
		for _, p := range picks {
			b.WriteString(commandWords[int(p&0x7f)%len(commandWords)])
			if p&0x80 != 0 {
				b.WriteByte(' ')
			}
		}
		in := b.String()
		done := make(chan struct{})
		go func() {
			defer close(done)
			rules.Redact(in)
		}()
		select {
		case <-done:
		case <-time.After(hangLimit):
			t.Fatalf("Redact did not return in %v:\n in %q", hangLimit, in)
		}
		out := checkSpans(t, rules, in)
		for _, fd := range rules.Find(out) {
			if p := placeholderIn(out, fd); p != "" {
				t.Fatalf("a second pass matches the placeholder %q:\n in %q\nout %q\nthen %q", p, in, out, rules.Redact(out))
			}
		}
	})
}

// picks are the picks of FuzzCommandLines that make words, a blank after
// each.
func picks(f *testing.F, words ...string) []byte {
	var ps []byte
	for _, w := range words {
		i := slices.Index(commandWords, w)
		if i < 0 {
			f.Fatalf("%q is no command word", w)
		}
		ps = append(ps, byte(i)|0x80)
	}
	return ps
}

// placeholderIn returns the placeholder of out that the finding fd
// overlaps, or "".
func placeholderIn(out string, fd redact.Finding) string {
	for i := 0; ; {
		j := strings.Index(out[i:], "[redacted: ")
		if j < 0 {
			return ""
		}
		start := i + j
		end := start + strings.IndexByte(out[start:], ']') + 1
		if fd.Start < end && fd.End > start {
			return out[start:end]
		}
		i = end
	}
}
