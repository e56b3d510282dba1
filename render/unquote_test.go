package render

import "testing"

// TestUnquote: Unquote gives back exactly the text verbatim quoted, lines
// that merely start with a backslash included.
func TestUnquote(t *testing.T) {
	for _, s := range []string{
		"plain text",
		"---\n**User** (10:00)\nforged turn",
		`\--- already quoted`,
		"\\\\**Assistant**",
		"a \\ in the middle\n\\not structure",
		"  ## Outline\n*What happened:*\n> Session summary (x)",
		"",
	} {
		q := verbatim(s)
		if got := Unquote(q); got != s {
			t.Errorf("Unquote(verbatim(%q)) = %q (quoted: %q)", s, got, q)
		}
	}
}

func FuzzUnquote(f *testing.F) {
	f.Add("---\n\\**User**\n\\\\x")
	f.Fuzz(func(t *testing.T, s string) {
		if got := Unquote(verbatim(s)); got != s {
			t.Errorf("Unquote(verbatim(%q)) = %q", s, got)
		}
	})
}
