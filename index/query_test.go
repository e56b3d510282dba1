package index

import (
	"reflect"
	"strings"
	"testing"
)

// phraseOf is the phrase of tokens ws.
func phraseOf(ws ...string) phrase { return phrase{tokens: ws} }

func TestParseQuery(t *testing.T) {
	cases := []struct {
		in   string
		want []phrase
		expr string
	}{
		{"Retry loop", []phrase{phraseOf("retry"), phraseOf("loop")}, `"retry" "loop"`},
		{`jitter "full jitter" cap`, []phrase{phraseOf("jitter"), phraseOf("full", "jitter"), phraseOf("cap")}, `"jitter" "full jitter" "cap"`},
		{`"unbalanced quote`, []phrase{phraseOf("unbalanced", "quote")}, `"unbalanced quote"`},
		{`NEAR(a b) OR c*`, []phrase{phraseOf("near"), phraseOf("a"), phraseOf("b"), phraseOf("or"), phraseOf("c")}, `"near" "a" "b" "or" "c"`},
		{`body:x {scope}: "p1"`, []phrase{phraseOf("body"), phraseOf("x"), phraseOf("scope"), phraseOf("p1")}, `"body" "x" "scope" "p1"`},
		{`'; DROP TABLE bottles; --`, []phrase{phraseOf("drop"), phraseOf("table"), phraseOf("bottles")}, `"drop" "table" "bottles"`},
		{`"" *** ( )`, nil, ``},
		// Folded as the index folds: case and diacritics.
		{"Ünïcode café ÉTÉ", []phrase{phraseOf("unicode"), phraseOf("cafe"), phraseOf("ete")}, `"unicode" "cafe" "ete"`},
		// A run of CJK characters is the phrase of its bigrams.
		{"日本語", []phrase{phraseOf("日本", "本語")}, `"日本 本語"`},
		{"稳定 性能", []phrase{phraseOf("稳定"), phraseOf("性能")}, `"稳定" "性能"`},
		{"稳", []phrase{phraseOf("稳")}, `"稳"`},
		{"用redis缓存", []phrase{phraseOf("用"), phraseOf("redis"), phraseOf("缓存")}, `"用" "redis" "缓存"`},
		{`"用redis缓存"`, []phrase{phraseOf("用", "redis", "缓存")}, `"用 redis 缓存"`},
		{`"redis 用"`, []phrase{phraseOf("redis", "用")}, `"redis 用"`},
		{"안정적입니다", []phrase{phraseOf("안정", "정적", "적입", "입니", "니다")}, `"안정 정적 적입 입니 니다"`},
		{"コーヒー", []phrase{phraseOf("コー", "ーヒ", "ヒー")}, `"コー ーヒ ヒー"`},
	}
	for _, c := range cases {
		got := parseQuery(c.in)
		if !reflect.DeepEqual(got, c.want) || matchExpr(got) != c.expr {
			t.Errorf("parseQuery(%q) = %v %s, want %v %s", c.in, got, matchExpr(got), c.want, c.expr)
		}
	}
	if n := len(parseQuery(strings.Repeat("w ", 40))); n != maxTerms {
		t.Errorf("%d terms kept, want %d", n, maxTerms)
	}
	if ps := parseQuery(strings.Repeat("稳定", 20)); len(ps) != 1 || len(ps[0].tokens) != maxTerms {
		t.Errorf("a long CJK run: %v, want one phrase of %d bigrams", ps, maxTerms)
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
