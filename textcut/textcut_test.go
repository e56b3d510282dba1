package textcut

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Clusters a cut by code point or byte splits, each named for the case.
const (
	family   = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466" // 👨‍👩‍👧‍👦: 7 code points joined by ZWJ
	thumbsUp = "\U0001F44D\U0001F3FD"                                       // 👍🏽: a skin tone on its emoji
	flag     = "\U0001F1EF\U0001F1F5"                                       // 🇯🇵: two regional indicators
	keycap   = "1\uFE0F\u20E3"                                              // 1️⃣
	eNFD     = "e\u0301"                                                    // é, decomposed
	hanNFD   = "\u1112\u1161\u11AB"                                         // 한 as its three jamo
	thaiKo   = "\u0E01\u0E48"                                               // ก่: ko kai and its tone mark
	devaKi   = "\u0915\u093F"                                               // कि: ka and its vowel sign
)

// cut is a case of a cut: s cut to n in unit is want.
type cut struct {
	name string
	s    string
	n    int
	unit Unit
	want string
}

// checkCuts checks that f cuts as each case says, within its bound.
func checkCuts(t *testing.T, fname string, f func(string, int, Unit) string, cases []cut) {
	t.Helper()
	for _, c := range cases {
		if got := f(c.s, c.n, c.unit); got != c.want {
			t.Errorf("%s: %s(%q, %d, %v) = %q, want %q", c.name, fname, c.s, c.n, c.unit, got, c.want)
		} else if Len(got, c.unit) > c.n {
			t.Errorf("%s: %s(%q, %d, %v) = %q, longer than %d", c.name, fname, c.s, c.n, c.unit, got, c.n)
		}
	}
}

func TestClip(t *testing.T) {
	checkCuts(t, "Clip", Clip, []cut{
		{"ascii fits", "retry loop", 10, Runes, "retry loop"},
		{"ascii cut", "retry loop here", 10, Runes, "retry loo…"},
		{"ascii bytes", "retry loop here", 10, Bytes, "retry l…"},
		{"empty", "", 0, Graphemes, ""},
		{"ZWJ family, runes", "ab" + family + "cd", 4, Runes, "ab…"},
		{"ZWJ family, graphemes", "ab" + family + "cd", 4, Graphemes, "ab" + family + "…"},
		{"ZWJ family, columns", "ab" + family + "cd", 5, Columns, "ab" + family + "…"},
		{"ZWJ family, bytes", "ab" + family + "cd", 20, Bytes, "ab…"},
		{"skin tone", "ok " + thumbsUp + " done", 5, Runes, "ok…"},
		{"skin tone, graphemes", "ok " + thumbsUp + " done", 5, Graphemes, "ok " + thumbsUp + "…"},
		{"flag", "to " + flag + flag + " go", 6, Runes, "to " + flag + "…"},
		{"flag, columns", "to " + flag + flag + " go", 6, Columns, "to " + flag + "…"},
		{"keycap", "press " + keycap + " now", 8, Runes, "press…"},
		{"keycap, graphemes", "press " + keycap + " now", 8, Graphemes, "press " + keycap + "…"},
		{"NFD é", "caf" + eNFD + " au lait", 5, Runes, "caf…"},
		{"NFD é, graphemes", "caf" + eNFD + " au lait", 5, Graphemes, "caf" + eNFD + "…"},
		{"Hangul jamo", hanNFD + hanNFD + hanNFD, 5, Runes, hanNFD + "…"},
		{"Hangul jamo, columns", hanNFD + hanNFD + hanNFD, 5, Columns, hanNFD + hanNFD + "…"},
		{"Thai tone mark", thaiKo + thaiKo + thaiKo, 4, Runes, thaiKo + "…"},
		{"Thai tone mark, graphemes", thaiKo + thaiKo + thaiKo, 2, Graphemes, thaiKo + "…"},
		{"Devanagari vowel sign", devaKi + devaKi + devaKi, 4, Runes, devaKi + "…"},
		{"Devanagari, bytes", devaKi + devaKi, 11, Bytes, devaKi + "…"},
		{"CJK, columns", "建立索引的时候", 7, Columns, "建立索…"},
		{"CJK, runes", "建立索引的时候", 4, Runes, "建立索…"},
		{"CJK fits", "索引", 4, Columns, "索引"},
		{"space before the cut", "one two three", 5, Runes, "one…"},
		{"CR LF", "ab\r\ncd", 3, Runes, "ab…"},
	})
}

func TestClipStart(t *testing.T) {
	checkCuts(t, "ClipStart", ClipStart, []cut{
		{"ascii fits", "src/a.go", 8, Runes, "src/a.go"},
		{"ascii", "internal/src/a.go", 9, Runes, "…src/a.go"},
		{"ZWJ family", "ab" + family + "cd", 4, Runes, "…cd"},
		{"ZWJ family, columns", "ab" + family + "cd", 5, Columns, "…" + family + "cd"},
		{"flag", flag + flag + flag, 4, Columns, "…" + flag},
		{"NFD é", "caf" + eNFD + eNFD, 2, Runes, "…"},
		{"NFD é, graphemes", "caf" + eNFD + eNFD, 3, Graphemes, "…" + eNFD + eNFD},
		{"Thai", thaiKo + thaiKo, 2, Runes, "…"},
		{"CJK", "建立索引", 5, Columns, "…索引"},
		{"space after the cut", "one two", 4, Runes, "…two"},
	})
}

func TestWindow(t *testing.T) {
	// An 87-character Chinese prompt with 索引 at its 67th character.
	prompt := strings.Repeat("我们", 33) + "索引" + strings.Repeat("的", 19)
	at := strings.Index(prompt, "索引")
	cases := []struct {
		name       string
		s          string
		start, end int
		n          int
		unit       Unit
		want       string
	}{
		{"fits", "the retry loop", 4, 9, 14, Columns, "the retry loop"},
		{"centred", "aaaaaaaaaa match bbbbbbbbbb", 11, 16, 13, Columns, "…aa match bb…"},
		{"near the start", "a match bbbbbbbbbbbbbbbbbbbb", 2, 7, 12, Columns, "a match bbb…"},
		{"near the end", "aaaaaaaaaaaaaaaaaaaa match b", 21, 26, 12, Columns, "…aaa match b"},
		{"match too long", "aa match bb", 3, 11, 6, Columns, "…matc…"},
		{"CJK, the match kept", prompt, at, at + len("索引"), 20, Columns, "…们我们索引的的的的…"},
		{"ZWJ family around", family + family + "x" + family + family, 2 * len(family), 2*len(family) + 1, 5, Columns, "…x" + family + "…"},
		{"match inside a cluster", "aaaa" + eNFD + "bbbb", 4, 5, 3, Graphemes, "…" + eNFD + "…"},
		{"Thai", thaiKo + thaiKo + "x" + thaiKo + thaiKo, 2 * len(thaiKo), 2*len(thaiKo) + 1, 4, Runes, "…x…"},
	}
	for _, c := range cases {
		got := Window(c.s, c.start, c.end, c.n, c.unit)
		if got != c.want {
			t.Errorf("%s: Window(%q, %d, %d, %d, %v) = %q, want %q", c.name, c.s, c.start, c.end, c.n, c.unit, got, c.want)
		}
		if Len(got, c.unit) > c.n {
			t.Errorf("%s: Window = %q, longer than %d", c.name, got, c.n)
		}
	}
	if got := Window(prompt, at, at+len("索引"), 90-4, Columns); !strings.Contains(got, "索引") {
		t.Errorf("the TEXT column's cut of the Chinese prompt lost its match: %q", got)
	}
}

// samples mixes every kind of cluster a cut used to split.
var samples = []string{
	"plain ascii text, with\r\nCR LF and\ttabs",
	"ab" + family + "cd" + family,
	"ok " + thumbsUp + thumbsUp + " done",
	flag + flag + "x" + flag + "\U0001F1EF",
	"press " + keycap + keycap + " now",
	"caf" + eNFD + " na" + "i\u0308" + "ve",
	hanNFD + hanNFD + " " + hanNFD,
	thaiKo + thaiKo + "\u0E32" + thaiKo,
	devaKi + "\u0928\u092E\u0938\u094D\u0924\u0947",
	"建立索引的时候，" + family + "ｆｕｌｌ",
	"\u0600" + "1 Arabic prepend, " + "\x7f\x01" + "control",
}

// TestEveryCutBetweenClusters: whatever the bound and the unit, a cut is
// at one of uniseg's boundaries and within its bound, and lengths add up
// as uniseg counts them.
func TestEveryCutBetweenClusters(t *testing.T) {
	for _, s := range samples {
		bounds := map[int]bool{0: true}
		g := uniseg.NewGraphemes(s)
		for g.Next() {
			_, to := g.Positions()
			bounds[to] = true
		}
		if got, want := Len(s, Graphemes), uniseg.GraphemeClusterCount(s); got != want {
			t.Errorf("Len(%q, Graphemes) = %d, uniseg counts %d", s, got, want)
		}
		if got, want := Width(s), uniseg.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, uniseg says %d", s, got, want)
		}
		if got := Len(s, Runes); got != utf8.RuneCountInString(s) {
			t.Errorf("Len(%q, Runes) = %d", s, got)
		}
		if got, want := Len(s, UTF16), len(utf16.Encode([]rune(s))); got != want {
			t.Errorf("Len(%q, UTF16) = %d, UTF-16 has %d units", s, got, want)
		}
		for _, u := range []Unit{Bytes, Runes, Columns, Graphemes, UTF16} {
			for n := 0; n <= len(s)+1; n++ {
				h, tl := Head(s, n, u), Tail(s, n, u)
				if !bounds[len(h)] || Len(h, u) > n {
					t.Errorf("Head(%q, %d, %v) = %q: not at a boundary or too long", s, n, u, h)
				}
				if !bounds[len(s)-len(tl)] || Len(tl, u) > n {
					t.Errorf("Tail(%q, %d, %v) = %q: not at a boundary or too long", s, n, u, tl)
				}
				if c := Clip(s, n, u); Len(c, u) > n {
					t.Errorf("Clip(%q, %d, %v) = %q: too long", s, n, u, c)
				}
				if c := ClipStart(s, n, u); Len(c, u) > n {
					t.Errorf("ClipStart(%q, %d, %v) = %q: too long", s, n, u, c)
				}
				if i := len(s) / 2; bounds[i] {
					if w := Window(s, i, i, n, u); Len(w, u) > n {
						t.Errorf("Window(%q, %d, %d, %d, %v) = %q: too long", s, i, i, n, u, w)
					}
				}
			}
		}
	}
}

// TestSmallRoom: with room for little more than the ellipsis, a cut
// still shows text, and of a window the match.
func TestSmallRoom(t *testing.T) {
	s := "the quick brown fox jumps over the lazy dog"
	for _, c := range []struct{ name, got, want string }{
		{"Clip 0", Clip(s, 0, Bytes), ""},
		{"Clip 2 bytes", Clip(s, 2, Bytes), "th"},
		{"ClipStart 2 bytes", ClipStart(s, 2, Bytes), "og"},
		{"Window 3", Window(s, 20, 25, 3, Runes), "…j…"},
		{"Window 4", Window(s, 20, 25, 4, Runes), "…ju…"},
		{"Window 7", Window(s, 20, 25, 7, Runes), "…jumps…"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestASCIIAlone: the lengths the ASCII fast path gives are uniseg's.
func TestASCIIAlone(t *testing.T) {
	for c := range byte(utf8.RuneSelf) {
		s := string(rune(c))
		if got, want := Width(s), uniseg.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, uniseg says %d", s, got, want)
		}
	}
}

// TestWholeWords: the word a cut split goes, with the blanks before it.
func TestWholeWords(t *testing.T) {
	for _, c := range []struct {
		s     string
		split bool
		want  string
	}{
		{"deploy with ghp_Bf7s", true, "deploy with…"},
		{"deploy with ", false, "deploy with…"},
		{"deploy with", false, "deploy with…"},
		{"ghp_Bf7s", true, "…"},
		{"line one\nghp_", true, "line one…"},
	} {
		if got := WholeWords(c.s, c.split); got != c.want {
			t.Errorf("WholeWords(%q, %v) = %q, want %q", c.s, c.split, got, c.want)
		}
	}
}

// FuzzASCIIRun: Len and Head, which measure a run of ASCII without the
// cluster iterator, agree with measuring every cluster by it.
func FuzzASCIIRun(f *testing.F) {
	for _, s := range append(samples, "", "a", "ab\u0301c", "a\r\nb", "tab\there", "x\x7fy", "e\u0301", "ok 👍🏽 ok", "abc\x00") {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n%(len(s)+2) - 1 // from -1 to past the end
		for _, u := range []Unit{Bytes, Runes, Columns, Graphemes, UTF16} {
			want, used, end := 0, 0, 0
			for size, length := range clusters(s, u) {
				want += length
				if used+length <= n {
					end += size
				}
				used = min(used+length, n+1) // once past n, stays past
			}
			if got := Len(s, u); got != want {
				t.Fatalf("Len(%q, %v) = %d, counted by cluster %d", s, u, got, want)
			}
			if got := Head(s, n, u); got != s[:max(end, 0)] {
				t.Fatalf("Head(%q, %d, %v) = %q, by cluster %q", s, n, u, got, s[:end])
			}
		}
	})
}
