package redact

import (
	"math"
	"strings"
)

// A charset is a set of ASCII bytes. Every class that can be part of a
// span is ASCII only, and a span next to a typographic quote starts or
// ends at its whole bytes, so a span never starts or ends inside a
// multi-byte character and valid UTF-8 stays valid.
type charset [256]bool

func chars(sets ...string) *charset {
	var c charset
	for _, s := range sets {
		for i := 0; i < len(s); i++ {
			c[s[i]] = true
		}
	}
	return &c
}

const (
	upperChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerChars = "abcdefghijklmnopqrstuvwxyz"
	digitChars = "0123456789"
	alnumChars = upperChars + lowerChars + digitChars
)

var (
	alnum    = chars(alnumChars)
	alpha    = chars(upperChars, lowerChars)
	hexChars = chars(digitChars, "abcdefABCDEF")
	lowerHex = chars(digitChars, "abcdef")
	base32   = chars(upperChars, "234567")
	b64      = chars(alnumChars, "+/")
	b64pad   = chars(alnumChars, "+/=")
	b64url   = chars(alnumChars, "-_")
	word     = chars(alnumChars, "_")
	digits   = chars(digitChars)
	// wordish make up a name or a dotted expression: process.env.TOKEN.
	wordish = chars(upperChars, lowerChars, "_.-")
	// identChars make up a key's name: FOO_BAR, foo.bar, x-api-key.
	identChars = chars(alnumChars, "_.-")
	// token68 is RFC 7235's alphabet for an Authorization header's
	// credentials.
	token68 = chars(alnumChars, "-._~+/=")
	// urlAuthorityEnd ends the authority of a URL; a password in one
	// holds none of these (RFC 3986 wants them percent-encoded).
	urlAuthorityEnd = chars(" \t\r\n\x00/?#\"'`<>\\[]{}()|")
	pathChars       = chars(alnumChars, "_./~-")
)

// lowerByte folds ASCII letters; other bytes are left as they are.
var lowerByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// run returns the end of the run of bytes of set that starts at i.
func run(s string, i int, set *charset) int {
	for i < len(s) && set[s[i]] {
		i++
	}
	return i
}

func isAlnum(c byte) bool { return alnum[c] }

// boundaryBefore reports whether a token may start at i: it is not glued
// to a preceding letter or digit. The letter of an escaped line break or
// tab (\n, \r, \t in a JSON string or a log) is none: what follows it
// starts a line.
func boundaryBefore(s string, i int) bool {
	return i == 0 || !isAlnum(s[i-1]) || escapedBreak(s, i)
}

// escapedBreak reports whether s before i ends with \n, \r or \t, its
// backslash not escaped itself (\\n is a backslash and an n).
func escapedBreak(s string, i int) bool {
	return i >= 2 && s[i-2] == '\\' && strings.IndexByte("nrt", s[i-1]) >= 0 && (i == 2 || s[i-3] != '\\')
}

// entropy is the Shannon entropy of s in bits a byte, as gitleaks computes
// it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	e, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			e -= p * math.Log2(p)
		}
	}
	return e
}

func hasDigit(s string) bool { return strings.ContainsAny(s, digitChars) }

func hasUpper(s string) bool { return strings.ContainsAny(s, upperChars) }

// onlyWordish reports whether s holds nothing but letters and _ . -: a
// name, a word or a dotted expression (process.env.TOKEN), never a secret
// (gitleaks' generic-api-key allowlists the same).
func onlyWordish(s string) bool { return run(s, 0, wordish) == len(s) }

// expression reports whether a value is code rather than a literal: a
// name, referenced (&config, *ptr), called, indexed, qualified or
// asserted (roi_q.reindex(…), os.environ["PW"], &serde_json::Value,
// Vec<u8>, process.env.PW!).
func expression(v string) bool {
	ref := v != "" && (v[0] == '&' || v[0] == '*')
	if ref {
		v = v[1:]
	}
	e := run(v, 0, wordish)
	if e == 0 || !alpha[v[0]] && v[0] != '_' {
		return false
	}
	switch rest := v[e:]; {
	case rest == "":
		return ref
	case rest == "!" || rest == "?":
		return true // TypeScript's process.env.DB_PASSWORD!
	}
	return strings.IndexByte("([<", v[e]) >= 0 || strings.HasPrefix(v[e:], "::")
}

// stopwords in a value mark it as an example or a placeholder where they
// are a whole word of it (your-api-key, example_key_1, YourToken,
// changeme123: a word, then the end, a separator, a capital that starts
// the next word, or digits to the end of the word). As the start of a
// longer word (Mockingbird#7, Yourself2024!) or inside a run of random
// characters (a real key can hold "YoUR", or start "Sample9Qz") they are
// chance, and a secret scanner that skips those keeps secrets. They are
// looked for only in values found by their context, never in tokens of a
// known format.
var stopwords = []string{"example", "sample", "placeholder", "changeme", "change_me", "your",
	"dummy", "fake", "mock", "demo", "redacted", "lorem"}

// masks are placeholders wherever they are.
var masks = []string{"xxxx", "XXXX", "****", "...", "EXAMPLE"}

func hasStopword(v string) bool {
	for _, m := range masks {
		if strings.Contains(v, m) {
			return true
		}
	}
	for i := 0; i < len(v); i++ {
		if i > 0 && isAlnum(v[i-1]) {
			continue
		}
		for _, w := range stopwords {
			if hasFoldPrefix(v[i:], w) && wordEnds(v, i+len(w)) {
				return true
			}
		}
	}
	return false
}

// wordEnds reports whether a word of v ends at i: v ends there, or a
// separator or a capital after a lower-case letter follows, or digits do
// up to a separator or the end (changeme123).
func wordEnds(v string, i int) bool {
	if i == len(v) || !isAlnum(v[i]) || isUpperByte(v[i]) && isLowerByte(v[i-1]) {
		return true
	}
	j := run(v, i, digits)
	return j > i && (j == len(v) || !isAlnum(v[j]))
}

// placeholder reports whether a value found by its context is a stand-in
// for a secret rather than one: a variable or template reference, a mask,
// a word that says so, or the name of the thing itself.
func placeholder(v string) bool {
	if reference(v) {
		return true
	}
	if strings.Trim(v, v[:1]) == "" {
		return true // one character repeated: ********, xxxxxxxx, 00000000
	}
	if hasStopword(v) {
		return true
	}
	for _, w := range names {
		if strings.EqualFold(v, w) {
			return true
		}
	}
	return false
}

// reference reports whether v stands for a secret kept elsewhere: it is
// empty, or a variable or template reference.
func reference(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '$':
		if variable(v) {
			return true // $VAR ${VAR} $(cmd) $VAR/path
		}
	case '<', '{', '[', '(', '%', '@':
		return true // <your-token> {{ x }} [redacted: …] (…) %VAR% @VAR@
	}
	return strings.Contains(v, "${") || strings.Contains(v, "{{") || strings.Contains(v, "$(")
}

// variable reports whether v, starting with $, is a reference: ${…},
// $(…), or $name alone or before / : . - (a path, a user:password pair,
// PowerShell's $env:NAME). $uper5ecret! is a password that starts with $.
func variable(v string) bool {
	if strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") {
		return true
	}
	if len(v) < 2 || !alpha[v[1]] && v[1] != '_' {
		return false
	}
	e := run(v, 1, word)
	return e == len(v) || strings.IndexByte("/:.-", v[e]) >= 0
}

// names are values that name the thing instead of being it.
var names = []string{"password", "passwd", "pass", "pwd", "secret", "token", "null", "none", "nil", "true", "false", "undefined"}

// pathOrURL reports whether a value is a file path or a URL: the place a
// secret is kept, not the secret.
func pathOrURL(v string) bool {
	if strings.Contains(v, "://") {
		return true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") {
		return strings.Count(v, "/") >= 2 && run(v, 0, pathChars) == len(v)
	}
	return false
}
