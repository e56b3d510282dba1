package sources

import (
	"slices"
	"testing"
)

func TestChainBack(t *testing.T) {
	tests := []struct {
		name  string
		links map[string]string
		from  string
		want  []string
	}{
		{"none", map[string]string{"x": "y"}, "a", nil},
		{"two back", map[string]string{"a": "b", "b": "c"}, "c", []string{"a", "b"}},
		{"a loop ends", map[string]string{"a": "b", "b": "a"}, "b", []string{"a"}},
		{"a loop through itself ends", map[string]string{"a": "b", "b": "c", "c": "a"}, "c", []string{"a", "b"}},
		{"two claim one successor: the same pick every time", map[string]string{"z": "c", "m": "c"}, "c", []string{"m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order must not matter
				if got := ChainBack(tc.links, tc.from); !slices.Equal(got, tc.want) {
					t.Fatalf("ChainBack = %v, want %v", got, tc.want)
				}
			}
		})
	}
	long := map[string]string{}
	for i := range maxChain + 10 {
		long[string(rune('A'+i))] = string(rune('A' + i + 1))
	}
	if got := ChainBack(long, string(rune('A'+maxChain+10))); len(got) != maxChain {
		t.Errorf("a chain of %d predecessors gave %d, want the cap %d", maxChain+10, len(got), maxChain)
	}
}
