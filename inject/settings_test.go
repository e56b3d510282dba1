package inject

import (
	"encoding/json"
	"errors"
	"reflect"
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
			quoted[i] = ShellQuote(w)
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

// TestTypeErrors: a value of the wrong type on a path bottled reads or
// edits is refused, naming the path, its type and the type wanted; values
// elsewhere are none of bottled's business.
func TestTypeErrors(t *testing.T) {
	for _, tc := range []struct{ in, key, is, want string }{
		{`{"hooks":[]}`, "hooks", "an array", "an object"},
		{`{"hooks":{"SessionStart":"x"}}`, "hooks.SessionStart", "a string", "an array of matcher groups"},
		{`{"hooks":{"SessionStart":[{"hooks":[{"command":1.5}]}]}}`, "hooks.SessionStart[0].hooks[0].command", "a number", "a string"},
		{`{"hooks":{"SessionEnd":[{"hooks":[true]}]}}`, "hooks.SessionEnd[0].hooks[0]", "a boolean", "an object"},
		{`{"permissions":"all"}`, "permissions", "a string", "an object"},
		{`{"permissions":{"additionalDirectories":[null]}}`, "permissions.additionalDirectories[0]", "null", "a string"},
		{`{"permissions":{"blockReadsOutsideWorkingDirectories":1}}`, "permissions.blockReadsOutsideWorkingDirectories", "a number", "a boolean"},
	} {
		for name, f := range map[string]func([]byte) error{
			"RegisterHooks": func(b []byte) error {
				_, _, err := RegisterHooks(b, Registration{Command: []string{"/bin/bottled"}})
				return err
			},
			"UnregisterHooks": func(b []byte) error { _, _, err := UnregisterHooks(b); return err },
			"GrantRead":       func(b []byte) error { _, _, _, err := GrantRead(b, ReadAccess{Dir: "/b"}, nil); return err },
			"RevokeMCPTools":  func(b []byte) error { _, _, err := RevokeMCPTools(b); return err },
		} {
			var te *TypeError
			if err := f([]byte(tc.in)); !errors.As(err, &te) || te.Key != tc.key || te.Is != tc.is || te.Want != tc.want {
				t.Errorf("%s(%s): %v, want %s is %s, not %s", name, tc.in, err, tc.key, tc.is, tc.want)
			}
		}
	}
	for _, fine := range []string{`{"hooks":{"PostToolUse":"x"}}`, `{"permissions":{"deny":"x","defaultMode":3}}`, `{"env":[]}`} {
		if _, _, err := RegisterHooks([]byte(fine), Registration{Command: []string{"/bin/bottled"}}); err != nil {
			t.Errorf("%s: %v", fine, err)
		}
	}
}

// TestUninstallLeavesNoTrace: what install adds to settings (the hooks, the
// read grant, the MCP tools' rules) is taken out whole by what uninstall
// runs, with the objects it emptied, and what the user had stays.
func TestUninstallLeavesNoTrace(t *testing.T) {
	access := ReadAccess{Dir: "/home/me/.claude-mem/bottles", Home: "/home/me"}
	for _, before := range []string{
		`{"model":"opus"}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify"}]}]},"permissions":{"allow":["Bash(ls:*)"]}}`,
		`{"permissions":{"blockReadsOutsideWorkingDirectories":true}}`,
	} {
		out, _, err := RegisterHooks([]byte(before), Registration{Command: []string{"/bin/bottled"}, MCPTools: true})
		if err == nil {
			out, _, _, err = GrantRead(out, access, nil)
		}
		if err == nil {
			out, _, err = GrantMCPTools(out)
		}
		if err == nil {
			out, _, err = UnregisterHooks(out)
		}
		if err == nil {
			out, _, err = RevokeRead(out, access)
		}
		if err == nil {
			out, _, err = RevokeMCPTools(out)
		}
		if err != nil {
			t.Fatalf("%s: %v", before, err)
		}
		var want, got any
		if json.Unmarshal([]byte(before), &want) != nil || json.Unmarshal(out, &got) != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("install then uninstall of %s left %s", before, out)
		}
	}
}
