package main

import (
	"io"
	"os"
	"strings"

	"github.com/bottled-dev/bottled/textcut"
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
			widths[i] = max(widths[i], textcut.Width(cell))
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
			b.WriteString(strings.Repeat(" ", widths[i]-textcut.Width(cell)+2))
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
	if width <= 0 {
		return s
	}
	return textcut.Clip(s, width, textcut.Columns)
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

// columnWidth is how many terminal columns column i of rows takes.
func columnWidth(rows [][]string, i int) int {
	n := 0
	for _, row := range rows {
		n = max(n, textcut.Width(row[i]))
	}
	return n
}

// leadWidth is how many terminal columns the first n columns of rows
// take, each with the two spaces after it.
func leadWidth(rows [][]string, n int) int {
	w := 0
	for i := range n {
		w += columnWidth(rows, i) + 2
	}
	return w
}
