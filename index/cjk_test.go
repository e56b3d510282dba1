package index

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/render"
)

// cjkTalks are sessions in Chinese, Japanese and Korean, written as people
// write them: no spaces between Chinese or Japanese words, Korean
// particles attached to the word, English names mixed in.
var cjkTalks = []talk{
	{ID: "s-zh", CWD: "/home/u/zh", Start: day, Turns: [][2]string{
		{"我们需要让这个服务更稳定一些，然后再部署到生产环境。", "好的，我先检查日志，再修改配置让服务更稳定。"},
		{"用redis缓存会话数据可以吗？", "可以，使用redis集群来缓存会话。"},
	}},
	{ID: "s-ja", CWD: "/home/u/ja", Start: day.Add(time.Hour), Turns: [][2]string{
		{"このプログラムはとても安定しています。テストを追加してください。", "テストを追加しました。"},
	}},
	{ID: "s-ko", CWD: "/home/u/ko", Start: day.Add(2 * time.Hour), Turns: [][2]string{
		{"이 서비스는 안정적입니다. 배포를 진행해 주세요.", "배포를 진행했습니다. 모니터링도 설정했습니다."},
	}},
	{ID: "s-fr", CWD: "/home/u/fr", Start: day.Add(3 * time.Hour), Turns: [][2]string{
		{"Le café est prêt, naïve question about Zürich", "Noted."},
	}},
}

// TestSearchCJK searches words inside Chinese, Japanese and Korean
// sentences: each is found in its session, and the hit's line and snippet
// hold it; characters that are there but not side by side are not a match.
func TestSearchCJK(t *testing.T) {
	checkSearches(t, cjkTalks, []searchCase{
		{"稳定", []string{"s-zh"}, nil},
		{"服务", []string{"s-zh"}, nil},
		{"生产环境", []string{"s-zh"}, nil},
		{`"更稳定"`, []string{"s-zh"}, []string{"更稳定"}},
		{"稳", []string{"s-zh"}, nil},                      // one character
		{"境", []string{"s-zh"}, nil},                      // one character, the last of its sentence
		{"缓存 redis", []string{"s-zh"}, []string{"redis"}}, // Chinese and English in one query
		{`"用redis缓存"`, []string{"s-zh"}, []string{"用redis缓存"}},
		{"稳部", nil, nil},  // both characters are there, not together
		{"稳定性", nil, nil}, // a longer word than the text has
		{"安定", []string{"s-ja"}, nil},
		{"プログラム", []string{"s-ja"}, nil},
		{"追加", []string{"s-ja"}, nil},
		{"안정적", []string{"s-ko"}, nil}, // in 안정적입니다
		{"서비스", []string{"s-ko"}, nil}, // in 서비스는
		{"배포", []string{"s-ko"}, nil},
		{"모니터링", []string{"s-ko"}, nil},
		{"안정성", nil, nil},
		// Folding as before: case and accents.
		{"cafe", []string{"s-fr"}, []string{"café"}},
		{"CAFÉ", []string{"s-fr"}, []string{"café"}},
		{"zurich naive", []string{"s-fr"}, []string{"Zürich"}},
		{"pret", []string{"s-fr"}, []string{"prêt"}},
	})
}

// TestSearchCJKRealBottles searches the real Chinese and Korean
// transcripts' bottles for words inside their sentences: two characters
// from the middle of a long run of Chinese characters, the first three
// syllables of a long Korean word. Each bottle is among the hits of its
// words, and every hit's line holds the word.
func TestSearchCJKRealBottles(t *testing.T) {
	data := t.TempDir()
	corpus := realBottles(t, true)
	ix := indexCorpus(t, data, corpus)
	checked := map[string]int{}
	for _, b := range corpus {
		p, err := render.Parse(b.bottle.Bytes, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		var words []string
		for _, bl := range p.Blocks {
			words = append(words, innerWords(string(b.bottle.Bytes[bl.Text:bl.End]))...)
		}
		for i := 0; i < len(words) && i < 40; i += max(len(words)/8, 1) {
			w := words[i]
			hits := search(t, ix, w, Scope{Limit: MaxLimit})
			if !slices.Contains(sessionsOf(hits), b.id) {
				t.Errorf("search %q: %v, not %s", w, sessionsOf(hits), b.id)
			}
			for _, h := range hits {
				if line := lineOf(t, h.Bottle, h.Line); !strings.Contains(line, w) {
					t.Errorf("search %q: hit at %s:%d, a line without it: %.100q", w, h.Bottle, h.Line, line)
				}
			}
			script := "han"
			if unicode.Is(unicode.Hangul, []rune(w)[0]) {
				script = "hangul"
			}
			checked[script]++
		}
	}
	if checked["han"] < 20 || checked["hangul"] < 5 {
		t.Fatalf("too few words checked: %v", checked)
	}
	// The word of the report: in many sentences of one real session.
	if got := sessionsOf(search(t, ix, "稳定", Scope{Limit: MaxLimit})); len(got) == 0 {
		t.Errorf(`search "稳定": no session`)
	}
}

// innerWords returns words from inside sentences of text: two Chinese
// characters from the middle of a run of eight or more, and the first
// three syllables of a Korean word of five or more.
func innerWords(text string) []string {
	var out []string
	run := []rune{}
	flush := func() {
		switch {
		case len(run) >= 8 && unicode.Is(unicode.Han, run[3]) && unicode.Is(unicode.Han, run[4]):
			out = append(out, string(run[3:5]))
		case len(run) >= 5 && unicode.Is(unicode.Hangul, run[0]) && unicode.Is(unicode.Hangul, run[2]):
			out = append(out, string(run[:3]))
		}
		run = run[:0]
	}
	for _, r := range text {
		if unicode.In(r, unicode.Han, unicode.Hangul) {
			run = append(run, r)
			continue
		}
		flush()
	}
	flush()
	return slices.DeleteFunc(out, func(w string) bool { return !utf8.ValidString(w) })
}
