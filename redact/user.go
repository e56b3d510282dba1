package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Rule is a user's pattern: what matches Pattern (an RE2 regular
// expression; its group named secret, if it has one) is replaced by the
// placeholder of Kind.
type Rule struct {
	Kind    string
	Pattern string
}

// maxKind bounds a kind's name: it is shown in every placeholder.
const maxKind = 40

// A LineError is a line of a pattern file that cannot be used.
type LineError struct {
	Line int // from 1
	Msg  string
}

func (e LineError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Msg }

// A ParseError lists every bad line of a pattern file.
type ParseError struct{ Lines []LineError }

func (e *ParseError) Error() string {
	msgs := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		msgs[i] = l.Error()
	}
	return strings.Join(msgs, "; ")
}

// Parse reads a pattern file (see the package documentation for its
// format). Beside a *ParseError naming every bad line, it returns the
// rules of the good lines, so a caller may go on with them.
func Parse(data []byte) ([]Rule, error) {
	var rules []Rule
	var bad []LineError
	for n, line := range bytes.Split(data, []byte("\n")) {
		text := strings.TrimSpace(string(line))
		if text == "" || text[0] == '#' {
			continue
		}
		kind, pattern, ok := strings.Cut(text, ":")
		rule := Rule{Kind: strings.TrimSpace(kind), Pattern: strings.TrimSpace(pattern)}
		var err error
		if !ok {
			err = fmt.Errorf("%q has no colon: write the kind, a colon, then the pattern (Acme token: acme_[0-9a-f]{32})", shown(text))
		} else {
			_, err = compile(rule)
		}
		if err != nil {
			bad = append(bad, LineError{Line: n + 1, Msg: err.Error()})
			continue
		}
		rules = append(rules, rule)
	}
	if len(bad) > 0 {
		return rules, &ParseError{Lines: bad}
	}
	return rules, nil
}

// maxShown is how many characters of a line an error shows of what the
// user wrote there: with the line's number, enough to find it; too few to
// give away a credential pasted into the file by mistake (the error is
// shown by bottled status and the commands, and logged).
const maxShown = 6

// shown is the start of s, at most maxShown characters, for an error.
func shown(s string) string {
	n := 0
	for i := range s {
		if n == maxShown {
			return strings.ToValidUTF8(s[:i], "") + "…"
		}
		n++
	}
	return strings.ToValidUTF8(s, "")
}

// With returns r with the user's rules added after its own. The error
// names the first rule that cannot be used; r itself is unchanged.
func (r *Rules) With(user []Rule) (*Rules, error) {
	if r == nil {
		r = builtin
	}
	out := &Rules{user: append([]userRule(nil), r.user...)}
	for _, rule := range user {
		u, err := compile(rule)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", shown(rule.Kind), err)
		}
		out.user = append(out.user, u)
	}
	if err := out.placeholdersClean(); err != nil {
		return nil, err
	}
	out.id = builtin.id
	if len(out.user) > 0 {
		h := sha256.New()
		for _, u := range out.user {
			fmt.Fprintf(h, "%s\x00%s\x00", u.kind, u.re.String())
		}
		out.id += "+" + hex.EncodeToString(h.Sum(nil))[:12]
	}
	return out, nil
}

// placeholdersClean checks that no rule finds anything in a placeholder,
// so that redacting twice changes nothing.
func (r *Rules) placeholdersClean() error {
	kinds := []string{"secret", "password"}
	for _, t := range tokenRules {
		kinds = append(kinds, t.kind)
	}
	for _, u := range r.user {
		kinds = append(kinds, u.kind)
	}
	for _, k := range kinds {
		for _, u := range r.user {
			if p := Placeholder(k); u.re.MatchString(p) {
				return fmt.Errorf("pattern %q matches the placeholder %q, so redacted text would be redacted again: make it more specific", u.kind, p)
			}
		}
	}
	return nil
}

// A userRule is a compiled Rule.
type userRule struct {
	kind   string
	re     *regexp.Regexp
	groups []int // the indices of the groups named secret, or 0, the whole match
}

func compile(rule Rule) (userRule, error) {
	if err := checkKind(rule.Kind); err != nil {
		return userRule{}, err
	}
	if rule.Pattern == "" {
		return userRule{}, fmt.Errorf("no pattern after %q", shown(rule.Kind+":"))
	}
	re, err := regexp.Compile(rule.Pattern)
	var serr *syntax.Error
	if errors.As(err, &serr) {
		return userRule{}, fmt.Errorf("pattern for %q: %s: `%s`", rule.Kind, serr.Code, shown(serr.Expr))
	}
	if err != nil {
		return userRule{}, fmt.Errorf("pattern for %q: %v", rule.Kind, err)
	}
	if re.MatchString("") {
		return userRule{}, fmt.Errorf("pattern for %q matches the empty string, so it would match everywhere", rule.Kind)
	}
	u := userRule{kind: rule.Kind, re: re}
	for i, name := range re.SubexpNames() {
		if name == "secret" {
			u.groups = append(u.groups, i)
		}
	}
	if len(u.groups) == 0 {
		u.groups = []int{0}
	}
	return u, nil
}

func checkKind(kind string) error {
	if kind == "" {
		return fmt.Errorf("no kind before the colon")
	}
	if len(kind) > maxKind {
		return fmt.Errorf("kind %q is longer than %d bytes", shown(kind), maxKind)
	}
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; !alnum[c] && !strings.ContainsRune(" -_./()+&", rune(c)) {
			r, _ := utf8.DecodeRuneInString(kind[i:])
			return fmt.Errorf("kind %q: %q is not allowed: use letters, digits, spaces and - _ . / ( ) + & only", shown(kind), r)
		}
	}
	// Every placeholder shows the kind: a credential there (a key pair
	// pasted into the file, its colon taken for the separator) would be
	// shown wherever the pattern matches.
	if fs := builtin.Find(kind); fs != nil {
		return fmt.Errorf("kind %q looks like a credential (%s): name the kind of token the pattern finds", shown(kind), fs[0].Kind)
	}
	return nil
}

// find appends the matches of u in s to out. A string the pattern does
// not match costs one scan and no allocation.
func (u *userRule) find(s string, out []found) []found {
	if !u.re.MatchString(s) {
		return out
	}
	for _, m := range u.re.FindAllStringSubmatchIndex(s, -1) {
		for _, g := range u.groups {
			if a, b := m[2*g], m[2*g+1]; a >= 0 && b > a {
				out = append(out, found{Finding{a, b, u.kind}, format})
			}
		}
	}
	return out
}
