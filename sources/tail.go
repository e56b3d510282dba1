package sources

import (
	"bytes"
	"fmt"
	"io"
)

// Reading a transcript's last lines: its newest records, which say what
// a session is now (its compactions and injected context, ScanLiveContext;
// the session its records name; when it was last active), without reading
// the rest of a file that can be gigabytes.

// tailChunk is how much ScanTail reads at a time: a few records, which is
// where what its callers look for usually is.
const tailChunk = 64 << 10

// ScanTail calls fn with each whole line in the last window bytes of the
// transcript at path, last line first and without its line ending, until
// fn returns false. The line the window's start cuts is not given. Only a
// regular file is opened, without waiting (see OpenRegular).
func ScanTail(path string, window int64, fn func(line []byte) bool) error {
	f, info, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	floor := max(info.Size()-window, 0)
	cut := false // the window starts inside a line
	if floor > 0 {
		var before [1]byte
		if _, err := f.ReadAt(before[:], floor-1); err != nil {
			return fmt.Errorf("read the tail of %s: %w", path, err)
		}
		cut = before[0] != '\n'
	}
	err = scanLinesBackward(f, floor, info.Size(), tailChunk, int(window), func(line []byte, at int64) bool {
		return cut && at == floor || fn(line)
	})
	if err != nil {
		return fmt.Errorf("read the tail of %s: %w", path, err)
	}
	return nil
}

// scanLinesBackward calls fn with each line of f between floor and end,
// last line first, with the offset where it starts, until fn returns
// false, reading chunk bytes at a time. Lines over maxLine are passed
// over.
func scanLinesBackward(f io.ReaderAt, floor, end int64, chunk, maxLine int, fn func(line []byte, at int64) bool) error {
	var carry []byte  // data after this chunk: a line whose start is not read yet
	skipping := false // the line after this chunk is too long and is passed over
	for end > floor {
		start := max(floor, end-int64(chunk))
		buf := make([]byte, end-start, int(end-start)+len(carry))
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return err
		}
		// Lines wholly inside this chunk start after its first newline,
		// unless it starts at floor, itself a line start.
		first := 0
		if start > floor {
			first = bytes.IndexByte(buf, '\n') + 1
			if first == 0 { // the chunk is the middle of one line
				if !skipping {
					carry = append(buf, carry...)
					if len(carry) > maxLine {
						carry, skipping = nil, true
					}
				}
				end = start
				continue
			}
		}
		data := append(buf, carry...)
		stop := len(data)
		if skipping {
			// The long line starts after the chunk's last newline.
			stop = first + bytes.LastIndexByte(data[first:], '\n') + 1
			skipping = false
		}
		for seg := data[first:stop]; len(seg) > 0; {
			body := bytes.TrimSuffix(seg, []byte("\n"))
			i := bytes.LastIndexByte(body, '\n') + 1
			if !fn(bytes.TrimSuffix(body[i:], []byte("\r")), start+int64(first+i)) {
				return nil
			}
			seg = seg[:i]
		}
		carry = data[:first]
		end = start
	}
	return nil
}
