package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripTags(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// claude-mem's behaviour (claude-mem.md §4.1), kept.
		{"plain", "hello", "hello"},
		{"private element", "a <private>secret</private> b", "a  b"},
		{"trimmed", "  <private>x</private> keep \n", "keep"},
		{"attributes", `a<private reason="x">s</private>b`, "ab"},
		{"newline in opening tag", "a<private\nid=1>s</private>b", "ab"},
		{"multiline content", "a<private>\nline1\nline2\n</private>b", "ab"},
		{"case-sensitive", "<PRIVATE>shown</PRIVATE>", "<PRIVATE>shown</PRIVATE>"},
		{"hyphen is a word boundary", "a<private-notes>s</private>b", "ab"},
		{"underscore is not", "a<private_x>shown</private_x>b", "a<private_x>shown</private_x>b"},
		{"letters continue the name", "<privatefoo>shown</privatefoo>", "<privatefoo>shown</privatefoo>"},
		{"close needs exact form", "a<system-reminder>x</system-reminder >b", "a<system-reminder>x</system-reminder >b"},
		{"all six tags", "<private>1</private>a<claude-mem-context>2</claude-mem-context>b<system_instruction>3</system_instruction>c<system-instruction>4</system-instruction>d<persisted-output>5</persisted-output>e<system-reminder>6</system-reminder>", "abcde"},
		{"different-name nesting", "a<private>x<system-reminder>y</system-reminder>z</private>b", "ab"},
		{"several elements", "<private>a</private>x<private>b</private>y", "xy"},
		{"inner blank lines kept", "one\n\n\ntwo<private>x</private>", "one\n\n\ntwo"},
		{"unclosed other tag kept", "a <system-reminder> b", "a <system-reminder> b"},
		{"stray close kept", "a </private> b", "a </private> b"},
		{"self-closing private opens", "a<private/>b</private>c", "ac"},
		// Where claude-mem leaks, bottled does not.
		{"nested private", "a<private>x<private>y</private>LEAK</private>b", "ab"},
		{"unclosed private hides the rest", "before <private>SECRET and more", "before"},
		{"unclosed nested private", "a<private>x<private>y</private>SECRET", "a"},
		{"other tag cannot carry private text out", "<system-reminder>x<private>y</system-reminder>SECRET</private>z", "<system-reminder>xz"},
		{"nested same-name other tag", "a<system-reminder>x<system-reminder>y</system-reminder>z</system-reminder>b", "ab"},
		{"unbalanced other tag falls back to later element", "a<persisted-output><persisted-output>x</persisted-output>b", "a<persisted-output>b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripTags(tc.in); got != tc.want {
				t.Errorf("StripTags(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzStripTags puts a secret inside a <private> element surrounded by
// arbitrary text and checks that no input can get it out. The fuzzed parts
// may contain any markup except a </private> close inside the element,
// which would end the element before the secret by definition.
func FuzzStripTags(f *testing.F) {
	seeds := [][3]string{
		{"", "", ""},
		{"<system-reminder>", "</system-reminder>", "</private>"},
		{"<private", "<private>", ""},
		{"<persisted-output>x", "</persisted-output><private>", "tail"},
		{"</private>", "<private x=", "</private></private>"},
		{"<claude-mem-context>", "", "</claude-mem-context>"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	const secret = "S3CR3T-Q7"
	f.Fuzz(func(t *testing.T, before, inside, after string) {
		inside = strings.ReplaceAll(inside, "</private>", "")
		for _, part := range []*string{&before, &inside, &after} {
			*part = strings.ReplaceAll(*part, secret, "")
		}
		in := before + "<private>" + inside + secret + "</private>" + after
		out := StripTags(in)
		if strings.Contains(out, secret) {
			t.Fatalf("secret leaked:\nin:  %q\nout: %q", in, out)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("valid input gave invalid UTF-8: %q", out)
		}
	})
}
