package inject

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestShellQuoteRoundTrip(t *testing.T) {
	for _, words := range [][]string{
		{"/usr/local/bin/bottled", "hook", "session-start"},
		{"/home/me/my tools/bottled", "--data-dir", "/home/me/it's here", "hook", "session-end"},
		{"/x/bottled", "--claude-dir", "", "a;b", "$HOME", "hook", "session-start"},
	} {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shellQuote(w)
		}
		if got := shellSplit(strings.Join(quoted, " ")); strings.Join(got, "|") != strings.Join(words, "|") {
			t.Errorf("round trip of %q gave %q", words, got)
		}
	}
}

func TestRegisterHooks(t *testing.T) {
	reg := Registration{Command: []string{"/new/bottled"}}
	tests := []struct {
		name, in string
		check    func(t *testing.T, out string)
	}{
		{"an old registration under another path is replaced", `{"hooks":{"SessionStart":[{"matcher":"compact|resume","hooks":[{"type":"command","command":"/old/bottled hook session-start","timeout":10}]}]}}`,
			func(t *testing.T, out string) {
				if strings.Contains(out, "/old/bottled") || strings.Count(out, "/new/bottled") != 2 {
					t.Errorf("old entry not replaced:\n%s", out)
				}
			}},
		{"a group shared with another tool keeps the other tool", `{"hooks":{"SessionStart":[{"matcher":"compact|resume","hooks":[{"type":"command","command":"/old/bottled hook session-start"},{"type":"command","command":"other-tool start"}]}]}}`,
			func(t *testing.T, out string) {
				if !strings.Contains(out, "other-tool start") || strings.Contains(out, "/old/bottled") {
					t.Errorf("shared group mishandled:\n%s", out)
				}
			}},
		{"a hook named like ours but not bottled is kept", `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"/usr/bin/notbottled hook session-start"}]}]}}`,
			func(t *testing.T, out string) {
				if !strings.Contains(out, "notbottled") {
					t.Errorf("foreign hook removed:\n%s", out)
				}
			}},
		{"numbers and unicode are kept as written", `{"x":1.50,"y":"é","z":[true,null,{"a":{}}]}`,
			func(t *testing.T, out string) {
				if !strings.Contains(out, `1.50`) || !strings.Contains(out, `"é"`) {
					t.Errorf("values rewritten:\n%s", out)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := RegisterHooks([]byte(tc.in), reg)
			if err != nil || !changed {
				t.Fatalf("changed %v, err %v", changed, err)
			}
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			tc.check(t, string(out))
			again, changed, err := RegisterHooks(out, reg)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("registering twice changed the file")
			}
			back, _, err := UnregisterHooks(out)
			if err != nil || strings.Contains(string(back), "/new/bottled") {
				t.Errorf("unregister left bottled's hooks: %v\n%s", err, back)
			}
		})
	}
	for _, bad := range []string{"[", "[]", `"str"`, "{} []", "{,}"} {
		if _, _, err := RegisterHooks([]byte(bad), reg); !errors.Is(err, ErrMalformedSettings) {
			t.Errorf("%q: err %v, want ErrMalformedSettings", bad, err)
		}
	}
}
