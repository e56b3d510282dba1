package index

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/textcut"
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
	at, end := locate(text, ps)
	if at != strings.Index(string(text), "retry") || end != at+len("retry") {
		t.Fatalf("locate = %d, %d", at, end)
	}
	if s, m := snippet(text, at, end); s != "second line with the retry loop in it third" && s != "second line with the retry loop in it …" || s[m[0]:m[1]] != "retry" {
		t.Errorf("snippet = %q, match %v", s, m)
	}
	long := []byte(strings.Repeat("word ", 100) + "needle " + strings.Repeat("tail ", 100))
	at, end = locate(long, parseQuery("needle"))
	s, m := snippet(long, at, end)
	if !strings.HasPrefix(s, "…") || s[m[0]:m[1]] != "needle" || !strings.HasSuffix(s, "…") || textcut.Len(s, textcut.Graphemes) > snippetLength+2 {
		t.Errorf("snippet of a long block = %q, match %v", s, m)
	}
	for _, c := range []struct{ text, query, want string }{
		{"a retry\n\t loop here", `"retry loop"`, "retry loop"},
		{"我们建立索引的时候", "索引", "索引"},
		{"用redis缓存", "redis", "redis"},
		{"Café au lait", "cafe", "Café"},
	} {
		at, end := locate([]byte(c.text), parseQuery(c.query))
		if s, m := snippet([]byte(c.text), at, end); s[m[0]:m[1]] != c.want {
			t.Errorf("snippet of %q for %s = %q, match %q, want %q", c.text, c.query, s, s[m[0]:m[1]], c.want)
		}
	}
	if at, end := locate(text, parseQuery("absent")); at != -1 || end != -1 {
		t.Errorf("found an absent word")
	}
}

// TestSnippetKeepsCharacters: a snippet starts and ends between
// characters, however many code points each is made of.
func TestSnippetKeepsCharacters(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"
	for _, c := range []struct{ name, filler string }{
		{"ZWJ family", family},
		{"skin tone", "\U0001F44D\U0001F3FD"},
		{"flag", "\U0001F1EF\U0001F1F5"},
		{"NFD é", "e\u0301"},
		{"Hangul jamo", "\u1112\u1161\u11AB"},
		{"Thai tone mark", "\u0E01\u0E48"},
		{"Devanagari vowel sign", "\u0915\u093F"},
	} {
		text := []byte(strings.Repeat(c.filler, snippetBefore+3) + " needle " + strings.Repeat(c.filler, snippetLength))
		at, end := locate(text, parseQuery("needle"))
		s, m := snippet(text, at, end)
		if s[m[0]:m[1]] != "needle" {
			t.Errorf("%s: snippet %q marks %q as its match", c.name, s, s[m[0]:m[1]])
		}
		body := strings.TrimSuffix(strings.TrimPrefix(s, "…"), "…")
		if !strings.Contains(s, "needle") || strings.Trim(strings.ReplaceAll(body, c.filler, ""), " ") != "needle" {
			t.Errorf("%s: snippet %q splits a character", c.name, s)
		}
	}
}
