package redact_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/redact"
)

func TestParse(t *testing.T) {
	file := "# Acme's own tokens\n" +
		"\n" +
		"Acme token: acme_[A-Za-z0-9]{32}\r\n" +
		"   # an indented comment\n" +
		"Acme session:  ACME_SESSION=(?P<secret>[0-9a-f]{40})  \n" +
		"Internal (v2): tok#[0-9]{6}\n"
	rules, err := redact.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	want := []redact.Rule{
		{Kind: "Acme token", Pattern: "acme_[A-Za-z0-9]{32}"},
		{Kind: "Acme session", Pattern: "ACME_SESSION=(?P<secret>[0-9a-f]{40})"},
		{Kind: "Internal (v2)", Pattern: "tok#[0-9]{6}"},
	}
	if len(rules) != len(want) {
		t.Fatalf("Parse = %+v", rules)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, rules[i], want[i])
		}
	}
}

// TestParseErrors: every bad line is named by its number, with what is
// wrong, and the good lines are still returned.
func TestParseErrors(t *testing.T) {
	file := "Good: good_[0-9]{8}\n" + // 1
		"no colon here\n" + // 2
		": acme_[0-9]+\n" + // 3
		"Acme token:\n" + // 4
		"Acme token: acme_([0-9]+\n" + // 5
		"Everything: .*\n" + // 6
		"Bad [kind]: x[0-9]{4}\n" + // 7
		strings.Repeat("K", 41) + ": k[0-9]{4}\n" + // 8
		"Also good: also_[0-9]{8}\n" // 9
	rules, err := redact.Parse([]byte(file))
	var pe *redact.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Parse error %v is no *ParseError", err)
	}
	wantLines := map[int]string{2: "no colon", 3: "no kind", 4: "no pattern", 5: "missing closing )",
		6: "matches the empty string", 7: "use letters", 8: "longer than 40"}
	if len(pe.Lines) != len(wantLines) {
		t.Errorf("%d bad lines, want %d: %v", len(pe.Lines), len(wantLines), err)
	}
	for _, l := range pe.Lines {
		if w, ok := wantLines[l.Line]; !ok || !strings.Contains(l.Msg, w) {
			t.Errorf("line %d: %q, want it to say %q", l.Line, l.Msg, w)
		}
	}
	if !strings.Contains(err.Error(), "line 5: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line naming the lines: %q", err)
	}
	if len(rules) != 2 || rules[0].Kind != "Good" || rules[1].Kind != "Also good" {
		t.Errorf("good rules = %+v", rules)
	}
}

func TestUserRules(t *testing.T) {
	f := fakecred.New(7)
	acme := "acme_" + f.Str(fakecred.Alnum, 32)
	session := f.Str(fakecred.Hex, 40)
	gh := f.GitHub('p').Text
	user, err := redact.Parse([]byte("Acme token: acme_[A-Za-z0-9]{32}\nAcme session: ACME_SESSION=(?P<secret>[0-9a-f]{40})\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := redact.Builtin().With(user)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"use " + acme + " for the API", "use [redacted: Acme token] for the API"},
		{"ACME_SESSION=" + session + "; path=/", "ACME_SESSION=[redacted: Acme session]; path=/"},
		{acme + " " + gh, "[redacted: Acme token] [redacted: GitHub token]"},
		{"ACME_TOKEN=" + acme, "ACME_TOKEN=[redacted: Acme token]"}, // the user's kind names it, not "secret"
		{"acme_short", "acme_short"},
	}
	for _, tt := range tests {
		if got := rules.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if got := rules.Redact(rules.Redact(tt.in)); got != tt.want {
			t.Errorf("Redact twice = %q", got)
		}
	}
	if got := redact.Builtin().Redact("use " + acme); got != "use "+acme {
		t.Errorf("the built-in rules know the user's token: %q", got)
	}
}

func TestWithErrors(t *testing.T) {
	for _, tt := range []struct {
		rule redact.Rule
		want string
	}{
		{redact.Rule{Kind: "Loop", Pattern: `\[redacted: [^]]+\]`}, "matches the placeholder"},
		{redact.Rule{Kind: "Empty", Pattern: `x*`}, "empty string"},
		{redact.Rule{Kind: "Broken", Pattern: `(`}, "missing closing )"},
		{redact.Rule{Kind: "", Pattern: `x+`}, "no kind"},
	} {
		if _, err := redact.Builtin().With([]redact.Rule{tt.rule}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("With(%+v) = %v, want %q", tt.rule, err, tt.want)
		}
	}
}

// TestID: the ID names the rules, the same rules give the same ID, and
// any change to the user's patterns gives another.
func TestID(t *testing.T) {
	with := func(file string) string {
		rules, err := redact.Parse([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		r, err := redact.Builtin().With(rules)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID()
	}
	builtin := redact.Builtin().ID()
	if builtin != strconv.Itoa(redact.Version) {
		t.Errorf("built-in ID %q, want the rules' version", builtin)
	}
	if got := with(""); got != builtin {
		t.Errorf("no user rules: ID %q, want %q", got, builtin)
	}
	a := with("A: a_[0-9]{8}\nB: b_[0-9]{8}\n")
	if !strings.HasPrefix(a, builtin+"+") || len(a) != len(builtin)+1+12 {
		t.Errorf("ID with user rules %q", a)
	}
	if again := with("# a comment\nA:  a_[0-9]{8}\n\nB: b_[0-9]{8}"); again != a {
		t.Errorf("comments and spacing changed the ID: %q, %q", again, a)
	}
	for _, other := range []string{"A: a_[0-9]{9}\nB: b_[0-9]{8}", "A2: a_[0-9]{8}\nB: b_[0-9]{8}",
		"B: b_[0-9]{8}\nA: a_[0-9]{8}", "A: a_[0-9]{8}"} {
		if id := with(other); id == a || id == builtin {
			t.Errorf("rules %q: ID %q did not change", other, id)
		}
	}
}

// TestUserRuleSecretGroups: every group named secret that took part in a
// match is replaced, the others' text stays.
func TestUserRuleSecretGroups(t *testing.T) {
	f := fakecred.New(8)
	a, b := f.Str(fakecred.Hex, 40), f.Str(fakecred.Hex, 40)
	for _, tt := range []struct{ pattern, in, want string }{
		{`(?:ACME_SESSION=(?P<secret>[0-9a-f]{40})|acme-session: (?P<secret>[0-9a-f]{40}))`,
			"cookie acme-session: " + a + " and ACME_SESSION=" + b,
			"cookie acme-session: [redacted: Acme session] and ACME_SESSION=[redacted: Acme session]"},
		{`acme (?P<secret>[0-9a-f]{40}):(?P<secret>[0-9a-f]{40})`,
			"pair acme " + a + ":" + b + " ok", "pair acme [redacted: Acme session]:[redacted: Acme session] ok"},
		{`acme (?P<secret>[0-9a-f]{40})(?::(?P<secret>[0-9a-f]{40}))?`,
			"acme " + a + " alone", "acme [redacted: Acme session] alone"},
		{`acme (?P<secret>(?P<secret>[0-9a-f]{8})[0-9a-f]{32})`, "acme " + a, "acme [redacted: Acme session]"},
	} {
		user, err := redact.Parse([]byte("Acme session: " + tt.pattern))
		if err != nil {
			t.Fatal(err)
		}
		rules, err := redact.Builtin().With(user)
		if err != nil {
			t.Fatal(err)
		}
		if got := rules.Redact(tt.in); got != tt.want {
			t.Errorf("%s: Redact(%q)\n got %q\nwant %q", tt.pattern, tt.in, got, tt.want)
		}
	}
}

// TestParseErrorsShowLittle: a line that cannot be used is named by its
// number and shows at most its first few characters, so that a token
// pasted into the file by mistake is not printed back (in bottled status,
// the daemon's log, a command's error).
func TestParseErrorsShowLittle(t *testing.T) {
	tok := "acme_" + fakecred.New(9).Str(fakecred.Alnum, 32)
	for _, tt := range []struct{ line, want string }{
		{tok, "has no colon"},
		{"  " + tok + "  ", "has no colon"},
		{tok + ":", "no pattern"},
		{tok + tok + ": x[0-9]{4}", "longer than 40"},
		{tok + "!: x[0-9]{4}", "'!'"},
		{"Acme: " + tok + "(", "missing closing )"},
		{"Acme: " + tok + "[z-a]", "invalid character class range"},
		{"AKIA" + fakecred.New(9).Str(fakecred.Base32U, 16) + ": x[0-9]{4}", "credential"},
	} {
		_, err := redact.Parse([]byte("Good: good_[0-9]{8}\n" + tt.line + "\n"))
		if err == nil {
			t.Errorf("%q: no error", tt.line)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "line 2: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%q: error %q, want line 2 and %q", tt.line, msg, tt.want)
		}
		if strings.Contains(msg, tok[:8]) || strings.Contains(msg, tok[8:16]) || strings.Contains(msg, strings.TrimSpace(tt.line)[:12]) {
			t.Errorf("%q: the error shows the line: %q", tt.line, msg)
		}
	}
	if _, err := redact.Builtin().With([]redact.Rule{{Kind: tok + "!", Pattern: "x[0-9]{4}"}}); err == nil || strings.Contains(err.Error(), tok[:8]) {
		t.Errorf("With a bad kind: %v", err)
	}
}
