package render

import (
	"bytes"
	"sort"
)

// Lines finds a bottle's lines by the numbers its state line, outline and
// search hits give them, which the readers of a bottle (bottled show, the
// MCP server's read, the web view) take: line n, from 1, starts after
// the (n-1)th newline, and a final newline ends the last line without
// starting another.
type Lines struct {
	data   []byte
	starts []int // starts[n-1] is where line n starts
}

// LinesOf finds the lines of data, which Lines keeps.
func LinesOf(data []byte) Lines {
	l := Lines{data: data}
	if len(data) == 0 {
		return l
	}
	l.starts = make([]int, 1, bytes.Count(data, []byte("\n"))+1)
	for at := 0; ; {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 || at+i+1 == len(data) {
			return l
		}
		at += i + 1
		l.starts = append(l.starts, at)
	}
}

// Count is how many lines there are.
func (l Lines) Count() int { return len(l.starts) }

// Start is the byte offset line n starts at (1 ≤ n ≤ Count).
func (l Lines) Start(n int) int { return l.starts[n-1] }

// Line is line n with its newline (the last line may have none); nil if
// there is no line n.
func (l Lines) Line(n int) []byte { return l.Span(n, n) }

// Span is lines from to to, inclusive, with their newlines; nil unless
// 1 ≤ from ≤ to ≤ Count.
func (l Lines) Span(from, to int) []byte {
	if from < 1 || to < from || to > len(l.starts) {
		return nil
	}
	end := len(l.data)
	if to < len(l.starts) {
		end = l.starts[to]
	}
	return l.data[l.starts[from-1]:end]
}

// At is the line that holds byte off (the last line past the end; 0 if
// there are no lines).
func (l Lines) At(off int) int {
	return sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off })
}
