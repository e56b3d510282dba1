package render

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bottled-dev/bottled/internal/fixtures"
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
		{"other tags are case-sensitive", "<SYSTEM-REMINDER>shown</SYSTEM-REMINDER>", "<SYSTEM-REMINDER>shown</SYSTEM-REMINDER>"},
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
		// <private> in any case: a user who types <PRIVATE> means it.
		{"upper-case private", "a<PRIVATE>SECRET</PRIVATE>b", "ab"},
		{"mixed-case tags pair", "a<Private reason=\"x\">SECRET</PRIVATE>b", "ab"},
		{"upper-case unclosed private", "before <PRIVATE>SECRET and more", "before"},
		{"mixed-case nesting", "a<private>x<PRIVATE>y</private>SECRET</Private>b", "ab"},
		{"upper-case letters continue the name", "<PRIVATEfoo>shown</PRIVATEfoo>", "<PRIVATEfoo>shown</PRIVATEfoo>"},
		// Removing an element cannot make a new one out of what is left.
		{"private assembled around another tag", "see <priv<system-reminder>x</system-reminder>ate>SECRET</private> ok", "see  ok"},
		{"private assembled around a private", "<pri<private>a</private>vate>SECRET</private>b", "b"},
		{"private assembled twice", "<pri<pri<private>a</private>vate>b</private>vate>SECRET</private>c", "c"},
		{"other tag assembled around a private", "a<system-rem<private>x</private>inder>SECRET</system-reminder>b", "ab"},
		{"close tag assembled", "a<system-reminder>SECRET</system-rem<private>x</private>inder>b", "ab"},
		{"unclosed private assembled", "keep <priv<system-reminder>x</system-reminder>ate>SECRET", "keep"},
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
// may contain any markup except a </private> close (in any case) inside
// the element, which would end the element before the secret by
// definition.
func FuzzStripTags(f *testing.F) {
	seeds := [][3]string{
		{"", "", ""},
		{"<system-reminder>", "</system-reminder>", "</private>"},
		{"<private", "<private>", ""},
		{"<persisted-output>x", "</persisted-output><private>", "tail"},
		{"</private>", "<private x=", "</private></private>"},
		{"<PRIVATE>", "</pri</PRIVATE>vate>", "</Private>"},
		{"<claude-mem-context>", "", "</claude-mem-context>"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	const secret = "S3CR3T-Q7"
	f.Fuzz(func(t *testing.T, before, inside, after string) {
		for { // in any case, and none made by taking one out
			i := indexTag(inside, "</private>", true)
			if i < 0 {
				break
			}
			inside = inside[:i] + inside[i+len("</private>"):]
		}
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

// assembled is a <private> element that only appears once depth elements
// inside its opening tag are removed, one at a time.
func assembled(depth int) string {
	s := "<private>a</private>"
	for range depth {
		s = "<pri" + s + "vate>b</private>"
	}
	return "keep " + s[:len(s)-len("b</private>")] + "SECRET</private> end"
}

// TestStripAssembledDeep: however deep the assembly, nothing of the
// element gets out and the result is left as it is by another strip.
func TestStripAssembledDeep(t *testing.T) {
	for _, depth := range []int{1, 2, maxStripPasses - 1, maxStripPasses, maxStripPasses + 1, 100} {
		in := assembled(depth)
		out := StripTags(in)
		if strings.Contains(out, "SECRET") || !strings.HasPrefix(out, "keep") {
			t.Errorf("depth %d: StripTags(%q) = %q", depth, in, out)
		}
		if again := StripTags(out); again != out {
			t.Errorf("depth %d: StripTags(%q) = %q, not a fixed point", depth, out, again)
		}
	}
}

// FuzzStripFixedPoint: stripping (transcript text and stored text alike)
// leaves nothing that stripping again would remove.
func FuzzStripFixedPoint(f *testing.F) {
	for _, s := range []string{
		"see <priv<system-reminder>x</system-reminder>ate>SECRET</private> ok",
		"<pri<private>a</private>vate>SECRET</private>b",
		"a<system-rem<private>x</private>inder>SECRET</system-reminder>b",
		"<PRIVATE>x</Private> <persisted-output><persisted-output>x</persisted-output>",
		assembled(3), assembled(maxStripPasses + 2),
		"a</private>b<system-reminder",
		"start  NESTEDLEAK1</private> end",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, strip := range map[string]func(string) string{"StripTags": StripTags, "StripStored": StripStored} {
			out := strip(s)
			if again := strip(out); again != out {
				t.Fatalf("%s: not a fixed point:\nin:    %q\nout:   %q\nagain: %q", name, s, out, again)
			}
		}
	})
}

// BenchmarkStrip measures the stripper over every message of the real
// transcripts (both corpora) beside its single pass, the baseline, in the
// same run: the passes to a fixed point must cost little more than one.
// It reports how many texts needed more than one removing pass.
func BenchmarkStrip(b *testing.B) {
	var texts []string
	var size int64
	for _, f := range fixtures.All(b) {
		for _, e := range spineOf(b, f).Entries {
			texts = append(texts, clean(e.Text))
			size += int64(len(e.Text))
		}
	}
	onePass := func(s string) string { return strings.TrimSpace(stripElements(stripPrivate(s), otherTags)) }
	again := 0
	for _, s := range texts {
		if out := onePass(s); len(out) != len(strings.TrimSpace(s)) && onePass(out) != out {
			again++
		}
	}
	for _, bc := range []struct {
		name string
		fn   func(string) string
	}{{"one pass", onePass}, {"fixed point", StripTags}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, s := range texts {
					bc.fn(s)
				}
			}
			b.ReportMetric(float64(again), "texts-needing-more")
			b.ReportMetric(float64(len(texts)), "texts")
		})
	}
}
