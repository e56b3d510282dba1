package sources

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestScanTail: the whole lines of a transcript's last bytes, last
// first, down to the window's start, and no further than fn asks.
func TestScanTail(t *testing.T) {
	const content = "one\ntwo\r\nthree\nfour" // the last line torn, as while Claude Code writes it
	all := []string{"four", "three", "two", "one"}
	tests := []struct {
		name   string
		window int64
		stopAt string // fn returns false on this line
		want   []string
	}{
		{name: "the whole file", window: 1 << 20, want: all},
		{name: "a window the size of the file", window: int64(len(content)), want: all},
		{name: "a window that starts at a line", window: int64(len(content) - len("one\n")), want: all[:3]},
		{name: "a window that cuts a line", window: int64(len(content) - len("on")), want: all[:3]},
		{name: "a window that cuts the last line", window: 2, want: nil},
		{name: "stopped", window: 1 << 20, stopAt: "three", want: all[:2]},
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := ScanTail(path, tc.window, func(line []byte) bool {
				got = append(got, string(line))
				return string(line) != tc.stopAt
			})
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ScanTail(%d) gave %q, %v; want %q", tc.window, got, err, tc.want)
			}
		})
	}
	fifo := filepath.Join(t.TempDir(), "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ScanTail(fifo, 1<<20, func([]byte) bool { t.Error("a line of a named pipe"); return true }); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ScanTail of a named pipe: %v, want ErrNotRegular", err)
	}
}

// TestScanLinesBackward checks the backward reader against a forward
// split, for every chunk size from one byte up, with floors at line
// starts, a torn last line and lines longer than the chunk.
func TestScanLinesBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var b bytes.Buffer
		var starts []int64
		for i := range rng.IntN(12) {
			starts = append(starts, int64(b.Len()))
			fmt.Fprintf(&b, "%d:%s", i, strings.Repeat("x", rng.IntN(40)))
			if rng.IntN(8) > 0 || i == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteString("\r\n")
			}
		}
		data := b.Bytes()
		if len(data) > 0 && rng.IntN(3) == 0 {
			data = data[:len(data)-1] // a torn last line
		}
		floorIdx := 0
		if len(starts) > 0 {
			floorIdx = rng.IntN(len(starts))
		}
		var floor int64
		if len(starts) > 0 {
			floor = starts[floorIdx]
		}
		var want []string
		for i, s := range starts[floorIdx:] {
			end := int64(len(data))
			if i+floorIdx+1 < len(starts) {
				end = starts[i+floorIdx+1]
			}
			if s >= end {
				continue
			}
			want = append(want, fmt.Sprintf("%d %s", s, strings.TrimRight(string(data[s:end]), "\r\n")))
		}
		slices.Reverse(want)
		for chunk := 1; chunk <= len(data)+2; chunk += 1 + chunk/3 {
			var got []string
			err := scanLinesBackward(bytes.NewReader(data), floor, int64(len(data)), chunk, 1<<20, func(line []byte, at int64) bool {
				got = append(got, fmt.Sprintf("%d %s", at, line))
				return true
			})
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("trial %d, chunk %d, floor %d: got %q (err %v), want %q", trial, chunk, floor, got, err, want)
			}
		}
	}
}

func TestScanLinesBackwardPassesOverLongLines(t *testing.T) {
	long := strings.Repeat("L", 100)
	data := []byte("a\n" + long + "\nb\n" + long + long + "\nc\n")
	for chunk := 1; chunk < 40; chunk++ {
		var got []string
		err := scanLinesBackward(bytes.NewReader(data), 0, int64(len(data)), chunk, 20, func(line []byte, at int64) bool {
			got = append(got, string(line))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		// A long line may be passed over or, when it fits the chunks
		// read, returned; the short lines always come back, in order.
		var short []string
		for _, l := range got {
			if !strings.HasPrefix(l, "L") {
				short = append(short, l)
			}
		}
		if !slices.Equal(short, []string{"c", "b", "a"}) {
			t.Fatalf("chunk %d: lines %q", chunk, got)
		}
	}
}
