package main

import (
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// minLastColumn is the fewest columns a table's last cell is cut to, however
// narrow the terminal: below that a cut cell says nothing.
const minLastColumn = 12

// writeTable prints rows (the first is the header) as columns two spaces
// apart, every cell padded to its column's width in terminal columns. The
// last cell of each row is cut so that the row fits width columns (not at
// all if width is 0), and is never padded.
func writeTable(w io.Writer, rows [][]string, width int) {
	if len(rows) == 0 {
		return
	}
	cols := len(rows[0])
	widths := make([]int, cols)
	for _, row := range rows {
		for i, cell := range row[:cols-1] {
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	lead := 0
	for _, w := range widths[:cols-1] {
		lead += w + 2
	}
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for i, cell := range row[:cols-1] {
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)+2))
		}
		last := row[cols-1]
		if width > 0 {
			last = cutToWidth(last, max(width-lead, minLastColumn))
		}
		b.WriteString(last)
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
}

// cutToWidth cuts s to width terminal columns, ending it with "…" when cut;
// a width of 0 leaves it whole.
func cutToWidth(s string, width int) string {
	if width <= 0 || displayWidth(s) <= width {
		return s
	}
	used := 0
	for i, r := range s {
		if used+runeWidth(r) > width-1 {
			return s[:i] + "…"
		}
		used += runeWidth(r)
	}
	return s
}

// displayWidth is how many terminal columns s takes.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is how many terminal columns r takes: none for combining marks
// and format characters, two for the wide characters of East Asian scripts
// (and emoji), one for the rest.
func runeWidth(r rune) int {
	switch {
	case r == utf8.RuneError || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r):
		return 0
	case r >= 0x1100 && r <= 0x115F, // Hangul Jamo
		r >= 0x2E80 && r <= 0xA4CF && r != 0x303F, // CJK radicals … Yi
		r >= 0xAC00 && r <= 0xD7A3,                // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF,                // CJK compatibility ideographs
		r >= 0xFE30 && r <= 0xFE4F,                // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFF60,                // fullwidth forms
		r >= 0xFFE0 && r <= 0xFFE6,                //
		r >= 0x1F300 && r <= 0x1FAFF,              // emoji and pictographs
		r >= 0x20000 && r <= 0x3FFFD:              // CJK extensions
		return 2
	}
	return 1
}

// terminalWidth is the width of the terminal w writes to, 0 if it is not
// a terminal.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return 0
	}
	return ttyColumns(f)
}
