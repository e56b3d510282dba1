package sources

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"syscall"
	"time"
)

// The state of a transcript file as a reader saw it (FileState), and the
// checks that tell whether the file on disk still is that file: Holds,
// Verify, Gone, Since. Bottles record it; the freshness checks ask it.

// FileState records how much of one transcript file a spine reflects.
type FileState struct {
	Session string `json:"session"`
	Path    string `json:"path"`
	// ID identifies the file (device and inode), so that a file replaced
	// under the same name is not mistaken for the one that was read.
	ID FileID `json:"id"`
	// Offset is the byte offset just past the last complete line read.
	Offset int64 `json:"offset"`
	// Tail is the CRC-32 of the (up to) 4 KiB before Offset: with ID and
	// Offset it tells cheaply whether the file still ends the way it did
	// where it was read to.
	Tail uint32 `json:"tail"`
	// Sum is the CRC-32 of every byte before Offset: reading the file
	// again tells whether anything before the offset changed (a secret
	// redacted in place, say), wherever it is.
	Sum uint32 `json:"sum"`
	// Mod is the file's modification time (Unix nanoseconds) when it was
	// read, if it was already old enough then that any later write must
	// change it (file system clocks are coarse); else 0. While the file
	// still has this time, nothing was written to it since.
	Mod int64 `json:"mod,omitempty"`
}

// FileID identifies a file independently of its name.
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// settledMod is FileState.Mod for a file whose time is mod, read at now.
func settledMod(mod, now time.Time) int64 {
	if !Settled(mod, now) {
		return 0
	}
	return mod.UnixNano()
}

// Settled reports whether a file whose modification time is mod, seen at
// now, is sure to get another time if it is written after now: its time
// is older than the grain its file system keeps it at.
func Settled(mod, now time.Time) bool {
	if mod.Nanosecond() == 0 {
		return now.Sub(mod) >= coarseModSettle
	}
	return now.Sub(mod) >= modSettle
}

// Holds reports whether the file at fs.Path is still the one fs describes
// and still ends, where fs read to, with the bytes that were read: same
// identity, at least Offset bytes long, the same 4 KiB before Offset. A
// transcript written only by appending then holds everything a reader of
// fs saw; Verify checks the rest. It reads at most 4 KiB.
func (fs FileState) Holds() (bool, error) {
	f, info, err := openStat(fs.Path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return fs.holds(f, info)
}

// Verify reports whether the file at fs.Path still holds every byte fs
// read: Holds, and the same checksum of all the bytes before Offset. It
// reads them all.
func (fs FileState) Verify() (bool, error) {
	f, info, err := openStat(fs.Path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if ok, err := fs.holds(f, info); err != nil || !ok {
		return ok, err
	}
	sum, err := prefixChecksum(f, fs.Offset)
	return err == nil && sum == fs.Sum, err
}

// prefixChecksum is the CRC-32 of the first n bytes of f.
func prefixChecksum(f *os.File, n int64) (uint32, error) {
	buf := make([]byte, min(n, verifyChunk))
	var sum uint32
	for off := int64(0); off < n; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off)
		sum = crc32.Update(sum, crc32.IEEETable, buf[:k])
		off += int64(k)
		if err != nil && !(errors.Is(err, io.EOF) && off == n) {
			return 0, err
		}
	}
	return sum, nil
}

// Gone reports whether the file fs describes is no longer at fs.Path:
// deleted, or replaced by another file of the same name.
func (fs FileState) Gone() bool {
	info, err := os.Stat(fs.Path)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return FileIDOf(info) != fs.ID
}

func (fs FileState) holds(f *os.File, info os.FileInfo) (bool, error) {
	if FileIDOf(info) != fs.ID || info.Size() < fs.Offset {
		return false, nil
	}
	sum, err := tailChecksum(f, fs.Offset)
	if err != nil {
		return false, err
	}
	return sum == fs.Tail, nil
}

// openStat opens a transcript and stats the open file (not the name, which
// may be replaced meanwhile). A transcript is a regular file: anything
// else is as good as missing (see OpenRegular).
func openStat(path string) (*os.File, os.FileInfo, error) {
	f, info, err := OpenRegular(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open transcript: %w", err)
	}
	return f, info, nil
}

func tailChecksum(f *os.File, offset int64) (uint32, error) {
	n := min(offset, tailWindow)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, offset-n); err != nil {
		return 0, err
	}
	return crc32.ChecksumIEEE(buf), nil
}

// FileIDOf returns the identity of the file info describes.
func FileIDOf(info os.FileInfo) FileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return FileID{}
}

// Since compares the file at fs.Path with what fs read, opening it once:
// rewritten reports that it no longer holds those bytes; appended, that
// the complete lines written after fs.Offset carry something a spine
// shows (a genuine user message, assistant text, a steering message, a
// tool call, a tool result that failed or made a file). Records that only
// add structure or noise (other tool results, hook and progress records,
// a compaction boundary and its summary) do not count.
//
// A file whose time is still fs.Mod was not written since: nothing more
// is read. Otherwise the 4 KiB before the offset are compared (Holds), and
// when fs.Offset is at most verify, every byte before it (Verify): verify
// bounds what a caller pays to find a change made in place far from the
// end.
func (fs FileState) Since(verify int64) (rewritten, appended bool, err error) {
	f, info, err := openStat(fs.Path)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	if fs.Mod != 0 && info.ModTime().UnixNano() == fs.Mod && FileIDOf(info) == fs.ID && info.Size() >= fs.Offset {
		return false, false, nil
	}
	holds, err := fs.holds(f, info)
	if err != nil || !holds {
		return !holds, false, err
	}
	if fs.Offset <= verify {
		sum, err := prefixChecksum(f, fs.Offset)
		if err != nil || sum != fs.Sum {
			return err == nil, false, err
		}
	}
	if info.Size() == fs.Offset {
		return false, false, nil
	}
	t := NewTranscript(fs.Session, fs.Path)
	if err := t.readFrom(io.NewSectionReader(f, fs.Offset, info.Size()-fs.Offset), info.Size()-fs.Offset); err != nil {
		return false, false, err
	}
	for i, r := range t.recs {
		switch {
		case r.kind == recUser && r.class == userCommand:
			if hasArgs(r.text) || commandAnswered(len(t.recs)-i-1, func(k int) *record { return &t.recs[i+1+k] }) {
				return false, true, nil
			}
		case r.kind == recUser && r.class == userGenuine,
			r.kind == recQueued && r.class == userGenuine,
			(r.kind == recEnqueue || r.kind == recRemove) && r.queue == queueTyped,
			r.kind == recAssistant && (r.text != "" || r.deed != nil),
			r.kind == recNode && r.result != 0: // a failure or a new file the trail shows
			return false, true, nil
		}
	}
	return false, false, nil
}
