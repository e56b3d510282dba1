package render

import "testing"

// TestLines: the lines of a bottle, numbered from 1, a final newline
// starting no line; what holds a byte; spans and lines outside the
// bottle are nil.
func TestLines(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  string
		lines []string
	}{
		{"nothing", "", nil},
		{"one line without a newline", "a", []string{"a"}},
		{"one line", "a\n", []string{"a\n"}},
		{"an empty line", "\n", []string{"\n"}},
		{"lines", "# head\n\nbody\nlast", []string{"# head\n", "\n", "body\n", "last"}},
		{"lines ending in an empty one", "a\nb\n\n", []string{"a\n", "b\n", "\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := LinesOf([]byte(c.data))
			if l.Count() != len(c.lines) {
				t.Fatalf("Count() = %d, want %d", l.Count(), len(c.lines))
			}
			off := 0
			for i, want := range c.lines {
				n := i + 1
				if got := string(l.Line(n)); got != want {
					t.Errorf("Line(%d) = %q, want %q", n, got, want)
				}
				if l.Start(n) != off {
					t.Errorf("Start(%d) = %d, want %d", n, l.Start(n), off)
				}
				for b := off; b < off+len(want); b++ {
					if l.At(b) != n {
						t.Errorf("At(%d) = %d, want %d", b, l.At(b), n)
					}
				}
				off += len(want)
			}
			if got := string(l.Span(1, l.Count())); got != c.data {
				t.Errorf("Span(1, Count()) = %q, want the whole %q", got, c.data)
			}
			if at, want := l.At(len(c.data)), l.Count(); at != want {
				t.Errorf("At(the end) = %d, want %d", at, want)
			}
			for _, s := range [][2]int{{0, 1}, {1, 0}, {2, 1}, {1, l.Count() + 1}, {l.Count() + 1, l.Count() + 1}} {
				if got := l.Span(s[0], s[1]); got != nil {
					t.Errorf("Span(%d, %d) = %q, want nil", s[0], s[1], got)
				}
			}
			if got := l.Line(l.Count() + 1); got != nil {
				t.Errorf("Line past the end = %q, want nil", got)
			}
		})
	}
}
