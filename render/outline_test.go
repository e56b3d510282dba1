package render

import (
	"fmt"
	"strings"
	"testing"
)

func TestShortenOutline(t *testing.T) {
	tests := []struct {
		turns       int
		compactAt   []int // compactions before these turns
		wantLen     int
		wantElision bool
	}{
		{turns: 5, wantLen: 5},
		{turns: outlineMax, wantLen: outlineMax},
		{turns: 400, compactAt: []int{100, 390}, wantLen: outlineMax, wantElision: true},
		{turns: 1000, compactAt: []int{1, 2, 3}, wantLen: outlineMax, wantElision: true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.turns, tc.compactAt), func(t *testing.T) {
			var items []outlineItem
			for i := range tc.turns {
				for _, c := range tc.compactAt {
					if c == i {
						items = append(items, outlineItem{line: len(items) + 1, label: fmt.Sprintf("compaction %d", c), compact: true})
					}
				}
				items = append(items, outlineItem{line: len(items) + 1, label: fmt.Sprintf("turn %d", i)})
			}
			out := shortenOutline(items)
			if len(out) != tc.wantLen && len(items) <= outlineMax {
				t.Fatalf("len = %d, want %d", len(out), tc.wantLen)
			}
			if len(out) > outlineMax {
				t.Fatalf("outline has %d lines, more than %d", len(out), outlineMax)
			}
			var labels []string
			for _, it := range out {
				labels = append(labels, it.text())
			}
			all := strings.Join(labels, "|")
			for _, c := range tc.compactAt {
				if !strings.Contains(all, fmt.Sprintf("compaction %d", c)) {
					t.Errorf("compaction %d dropped", c)
				}
			}
			if !strings.Contains(all, "turn 0|") || !strings.HasSuffix(all, fmt.Sprintf("turn %d", tc.turns-1)) {
				t.Errorf("first or last turn dropped")
			}
			if strings.Contains(all, "not listed") != tc.wantElision {
				t.Errorf("elision line present = %v, want %v", !tc.wantElision, tc.wantElision)
			}
		})
	}
}

// TestFirstWordsKeepsCharacters: the outline's titles, the first prompt
// and the state's task are cut at a character's end, never inside one.
func TestFirstWordsKeepsCharacters(t *testing.T) {
	cases := []struct{ name, s, want string }{
		{"ZWJ family", "abcd\U0001F468\u200D\U0001F469\u200D\U0001F467 rest", "abcd…"},
		{"NFD é", "abcde\u0301 rest", "abcd…"},
		{"Thai tone mark", "abcd\u0E01\u0E48 rest", "abcd…"},
		{"flag", "abcd\U0001F1EF\U0001F1F5 rest", "abcd…"},
		{"fits", "abcde\u0301", "abcde\u0301"},
	}
	for _, c := range cases {
		if got := firstWords(c.s, 6); got != c.want {
			t.Errorf("%s: firstWords(%q, 6) = %q, want %q", c.name, c.s, got, c.want)
		}
	}
}
