package index

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseQuery(t *testing.T) {
	cases := []struct {
		in   string
		want []phrase
		expr string
	}{
		{"Retry loop", []phrase{{"retry"}, {"loop"}}, `"retry" "loop"`},
		{`jitter "full jitter" cap`, []phrase{{"jitter"}, {"full", "jitter"}, {"cap"}}, `"jitter" "full jitter" "cap"`},
		{`"unbalanced quote`, []phrase{{"unbalanced", "quote"}}, `"unbalanced quote"`},
		{`NEAR(a b) OR c*`, []phrase{{"near"}, {"a"}, {"b"}, {"or"}, {"c"}}, `"near" "a" "b" "or" "c"`},
		{`body:x {scope}: "p1"`, []phrase{{"body"}, {"x"}, {"scope"}, {"p1"}}, `"body" "x" "scope" "p1"`},
		{`'; DROP TABLE bottles; --`, []phrase{{"drop"}, {"table"}, {"bottles"}}, `"drop" "table" "bottles"`},
		{`"" *** ( )`, nil, ``},
		{"Ünïcode 日本語 café", []phrase{{"ünïcode"}, {"日本語"}, {"café"}}, `"ünïcode" "日本語" "café"`},
		{strings.Repeat("w ", 40), nil, ""}, // checked for length below
	}
	for _, c := range cases[:len(cases)-1] {
		got := parseQuery(c.in)
		if !reflect.DeepEqual(got, c.want) || matchExpr(got) != c.expr {
			t.Errorf("parseQuery(%q) = %q %s, want %q %s", c.in, got, matchExpr(got), c.want, c.expr)
		}
	}
	if n := len(parseQuery(strings.Repeat("w ", 40))); n != maxTerms {
		t.Errorf("%d terms kept, want %d", n, maxTerms)
	}
}

func TestCountWords(t *testing.T) {
	for _, s := range []string{"", "one", "two words", "  lead, trail.  ", "ünï-code 日本語 x2", "a\nb\tc", "\xff\xfe broken", "snake_case x-1 3.14 a/b `code` ~@#$%^&*()[]{}<>?!;:'\"", "\x00\x7f end"} {
		if got, want := countWords([]byte(s)), len(tokens(s)); got != want {
			t.Errorf("countWords(%q) = %d, tokens %d", s, got, want)
		}
	}
}

func TestSnippet(t *testing.T) {
	text := []byte("first line\nsecond line with the retry loop in it\nthird")
	ps := parseQuery("RETRY")
	at := locate(text, ps)
	if at != strings.Index(string(text), "retry") {
		t.Fatalf("locate = %d", at)
	}
	if s := snippet(text, at); s != "second line with the retry loop in it third" && s != "second line with the retry loop in it …" {
		t.Errorf("snippet = %q", s)
	}
	long := []byte(strings.Repeat("word ", 100) + "needle " + strings.Repeat("tail ", 100))
	s := snippet(long, locate(long, parseQuery("needle")))
	if !strings.HasPrefix(s, "…") || !strings.Contains(s, "needle") || !strings.HasSuffix(s, "…") || len([]rune(s)) > snippetRunes+2 {
		t.Errorf("snippet of a long block = %q", s)
	}
	if locate(text, parseQuery("absent")) != -1 {
		t.Errorf("found an absent word")
	}
}
