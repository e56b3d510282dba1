package redact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
)

// separators end every credential: none is a character any rule takes
// into a token, a key's name or a value.
var separators = []string{" ", "\n", "\t", "\r\n", `"`, "'", "`", "<", ">", "(", ")", ",", ";", "|",
	"\x00", "\xff", "\xe2\x80\x94", "<private>", "</private>", "\n\n---\n"}

// nearBound is how far from an inserted credential a span may start or
// end when the text around it redacts to itself on its own: the span of
// a context reaches back over the key, and a private key's BEGIN line
// before the credential can take it for its body.
const nearBound = 128

// spanBound bounds a replaced span: a private key block's reach past an
// interruption in its body, unioned with a context's value. A JWT and a
// private key's lines are replaced however long they run: their spans are
// bounded by what they may hold instead (see boundedSpan).
const spanBound = 16<<10 + 8<<10 + 256

func fuzzSeeds(f *testing.F) {
	for i, s := range [][2]string{
		{"", ""},
		{"Here it is ", ", thanks"},
		{"<private>", "</private> and more"},
		{"token=", ""},
		{`{"password": "`, `"}`},
		{"-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END RSA PRIVATE KEY-----"},
		{"-----BEGIN RSA PRIVATE KEY-----", "\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\nprose after"},
		{"https://user:", "@host/path"},
		{"curl -u me:", " https://x"},
		{"Authorization: Bearer", "\nHost: x"},
		{"\xff\xfe invalid \x00", "\xc3"},
		{"eyJhbGciOiJIUzI1NiJ9.", ".sig"},
		{"**Password:** ", "**"},
		{"export OPENAI_API_KEY=$", "${X}"},
		{"[redacted: ", "]"},
	} {
		f.Add(uint64(i), uint8(i), s[0], s[1], uint8(i), uint8(2*i))
	}
}

// FuzzRedact inserts a generated credential of every kind, between
// separators, into arbitrary text. The credential's secret must not
// survive; every replaced span is bounded, and near the credential when
// the text around it redacts to itself; the text outside the spans is
// byte for byte the input's; valid UTF-8 stays valid; redacting again
// changes nothing.
func FuzzRedact(f *testing.F) {
	fuzzSeeds(f)
	rules := redact.Builtin()
	f.Fuzz(func(t *testing.T, seed uint64, which uint8, before, after string, sepA, sepB uint8) {
		creds := fakecred.New(seed).Every()
		c := creds[int(which)%len(creds)]
		before, after = without(before, c.Secret), without(after, c.Secret)
		head := before + separators[int(sepA)%len(separators)]
		in := head + c.Text + separators[int(sepB)%len(separators)] + after
		out := checkRedact(t, rules, in)
		if strings.Contains(out, c.Secret) {
			t.Fatalf("%s survived:\n in %q\nout %q", c.Kind, in, out)
		}
		checkRedact(t, rules, before)
		if rules.Find(before) != nil || rules.Find(after) != nil {
			return
		}
		cs, ce := len(head), len(head)+len(c.Text)
		for _, fd := range rules.Find(in) {
			if fd.End <= cs-nearBound || fd.Start >= ce+nearBound && fd.Kind != "private key" {
				t.Fatalf("span %+v is far from the credential at [%d,%d):\n in %q\nout %q", fd, cs, ce, in, out)
			}
		}
	})
}

// FuzzStripThenRedact runs the two passes every bottle string goes
// through, the tag stripper then redaction, over a credential split by a
// <private> element at a fuzzed point: the stripper joins it again, and
// redaction must still find it; the private text must not survive either.
func FuzzStripThenRedact(f *testing.F) {
	fuzzSeeds(f)
	rules := redact.Builtin()
	const private = "PRIVATE-Z9Q"
	f.Fuzz(func(t *testing.T, seed uint64, which uint8, before, after string, cut, sep uint8) {
		creds := fakecred.New(seed).Every()
		c := creds[int(which)%len(creds)]
		before, after = without(without(before, c.Secret), private), without(without(after, c.Secret), private)
		before, after = without(before, "<private"), without(after, "</private")
		k := strings.Index(c.Text, c.Secret) + int(cut)%len(c.Secret)
		s := separators[int(sep)%len(separators)]
		in := before + s + c.Text[:k] + "<private>" + private + "</private>" + c.Text[k:] + s + after
		out := checkRedact(t, rules, render.StripTags(in))
		if strings.Contains(out, c.Secret) || strings.Contains(out, private) {
			t.Fatalf("%s or the private text survived:\n in %q\nout %q", c.Kind, in, out)
		}
	})
}

// checkRedact redacts in and checks what holds for any input: what
// checkSpans checks, and a second pass changes nothing.
func checkRedact(t *testing.T, rules *redact.Rules, in string) string {
	t.Helper()
	out := checkSpans(t, rules, in)
	if again := rules.Redact(out); again != out {
		t.Fatalf("not idempotent:\n in %q\nout %q\nthen %q", in, out, again)
	}
	return out
}

// checkSpans redacts in and checks that the output is the input with the
// found spans, sorted, disjoint and bounded, replaced by placeholders, and
// that valid UTF-8 stays valid.
func checkSpans(t *testing.T, rules *redact.Rules, in string) string {
	t.Helper()
	out := rules.Redact(in)
	var b strings.Builder
	last := 0
	for _, fd := range rules.Find(in) {
		if fd.Start < last || fd.End <= fd.Start || fd.End > len(in) || !boundedSpan(in[fd.Start:fd.End], fd.Kind) {
			t.Fatalf("bad span %+v after %d in %q", fd, last, in)
		}
		b.WriteString(in[last:fd.Start] + redact.Placeholder(fd.Kind))
		last = fd.End
	}
	b.WriteString(in[last:])
	if b.String() != out {
		t.Fatalf("output is not the input with its spans replaced:\n in %q\nout %q\nwant %q", in, out, b.String())
	}
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 out of valid:\n in %q\nout %q", in, out)
	}
	return out
}

// boundedSpan reports whether a replaced span is no longer than
// spanBound or, past that, holds nothing but what its kind is made of: a
// JWT base64url and dots, an Authorization header's credentials token68,
// a private key its lines (base64, whitespace and
// the dress of quoted lines) and its END line.
func boundedSpan(span, kind string) bool {
	if len(span) <= spanBound {
		return true
	}
	switch kind {
	case "JWT":
		return strings.Trim(span, fakecred.B64URL+".") == ""
	case "bearer token", "basic auth credentials", "authorization":
		return strings.Trim(span, fakecred.B64URL+".~+/=") == "" // token68
	case "private key":
		if e := strings.LastIndex(span, "-----END "); e >= spanBound {
			span = span[:e]
		}
		return strings.Trim(span[spanBound:], fakecred.B64+"= \t\r\n\\>#*-\"'`|,;()") == ""
	}
	return false
}

// without removes every occurrence of sub from s, also those that
// removing makes.
func without(s, sub string) string {
	for strings.Contains(s, sub) {
		s = strings.ReplaceAll(s, sub, "")
	}
	return s
}
