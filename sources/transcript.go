package sources

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"
	"unsafe"
)

const (
	// readChunk is the read size. Real transcripts run from kilobytes to
	// gigabytes; 1 MiB keeps syscalls rare without holding much memory.
	readChunk = 1 << 20
	// longLine is the longest line held whole in memory. Real lines reach
	// a few megabytes (inline screenshots, huge tool results); a longer one
	// is read through a compactor (see compactor) that keeps its structure
	// and short strings and leaves out every string longer than
	// keepString, so that a line of any length costs a bounded amount of
	// memory. The rule depends only on the line, never on how it was read,
	// so that incremental and one-shot parses agree.
	longLine = 8 << 20
	// tailWindow is how many bytes before the read offset are checksummed to
	// notice cheaply a file rewritten near its end.
	tailWindow = 4096
	// modSettle is how old a file's modification time must be when it is
	// read for any later write to be sure to change it: file systems keep
	// it at a coarse grain, a clock tick (at most 10 ms) on Linux's, a
	// second or two on some (HFS+, FAT, ext4 with small inodes), which
	// show as times with no fraction of a second: those wait
	// coarseModSettle.
	modSettle       = 100 * time.Millisecond
	coarseModSettle = 2 * time.Second
	// verifyChunk is the read size when a file's bytes are checksummed
	// again.
	verifyChunk = 256 << 10
)

// Transcript is the parse state of one transcript file. It is built by
// reading complete lines from the start of the file and can be brought up
// to date by reading only the lines appended since; both paths give the
// same state.
//
// A Transcript is not safe for concurrent use.
type Transcript struct {
	// SessionID is the session the file belongs to (its base name).
	SessionID string
	// Path is the file's location.
	Path string
	// aside: the file is a /btw side question's (see IsAsideFile), whose
	// records are all sidechain records and are kept; owner is the
	// session it was asked in.
	aside bool
	owner string

	recs   []record
	uuids  []string         // interned uuid by id
	hasRec []bool           // whether a record with that uuid was kept
	ids    map[string]int32 // uuid → id

	caveats map[int32]time.Time // local-command caveats by id, with their times
	unknown Unknown             // what the reader met and does not know

	cwd         string
	started     time.Time
	continuedIn string
	malformed   int

	offset  int64  // just past the last complete line
	fileID  FileID // identity of the file read
	tailSum uint32 // CRC-32 of up to tailWindow bytes before offset
	sum     uint32 // CRC-32 of every byte before offset
	mod     int64  // settled modification time when last read (FileState.Mod)
	// seenSize and seenMod are the file's size and time at the last
	// Update: a write that changed the time but not the size was made in
	// place, and everything before the offset is checked again.
	seenSize int64
	seenMod  time.Time
	// appendOnly: the last read that found lines appended compared only
	// the tail window before them (see CheckedWhole).
	appendOnly bool

	// sized and size: Size has counted recs[:sized], size bytes.
	sized, sizedUUIDs int
	size              int64

	// rewrites counts the times bytes read before were found gone (see
	// Rewrites); expect, if not nil, is a state of the file read before by
	// another reader, checked as the first read from the start passes it
	// (see Expect).
	rewrites int
	expect   *FileState
}

// Per-item overheads Size counts beside the strings' bytes: a record's
// struct, and an interned uuid's string header, map entry and slot.
const (
	recordBytes = int64(unsafe.Sizeof(record{}))
	deedBytes   = int64(unsafe.Sizeof(Deed{}))
	uuidBytes   = 16 + 48 + 1
)

// Size estimates the memory the parse state holds, in bytes. It costs a
// look at the records added since the last call.
func (t *Transcript) Size() int64 {
	for _, r := range t.recs[t.sized:] {
		t.size += recordBytes + int64(len(r.text)+len(r.msg)+len(r.toolUse)+len(r.trigger))
		if r.deed != nil {
			t.size += deedBytes + int64(len(r.deed.Tool)+len(r.deed.Target)+len(r.deed.Agent))
		}
	}
	t.sized = len(t.recs)
	var uuids int64
	for _, u := range t.uuids[t.sizedUUIDs:] {
		uuids += uuidBytes + int64(len(u))
	}
	t.sizedUUIDs = len(t.uuids)
	t.size += uuids
	return t.size
}

// NewTranscript returns empty parse state for the transcript of sessionID
// at path. Nothing is read until Update.
func NewTranscript(sessionID, path string) *Transcript {
	t := &Transcript{SessionID: sessionID, Path: path, ids: map[string]int32{}}
	if IsAsideFile(filepath.Base(path)) {
		t.aside, t.owner = true, filepath.Base(filepath.Dir(filepath.Dir(path)))
	}
	return t
}

// ReadTranscript parses the whole transcript at path, checking on the way
// the states of it in expect (see Expect).
func ReadTranscript(sessionID, path string, expect ...FileState) (*Transcript, error) {
	t := NewTranscript(sessionID, path)
	for _, fs := range expect {
		t.Expect(fs)
	}
	if _, err := t.Update(); err != nil {
		return nil, err
	}
	return t, nil
}

// State reports how much of the file t reflects.
func (t *Transcript) State() FileState {
	mod := t.mod
	if t.appendOnly {
		// The time vouches for the bytes the last read compared only:
		// a change made in place before them may have come first.
		mod = 0
	}
	return FileState{Session: t.SessionID, Path: t.Path, ID: t.fileID, Offset: t.offset, Tail: t.tailSum, Sum: t.sum, Mod: mod}
}

// ContinuedIn is the session this file's conversation moved to, if its
// tail recorded one (a continued-in record).
func (t *Transcript) ContinuedIn() string { return t.continuedIn }

// Update reads what was appended to the file since the last call. If the
// file was replaced, truncated or rewritten, it parses it again from the
// start. A write that did not make the file longer was made in place:
// then every byte before the offset is checked again (Verify), wherever a
// change may be. It reports whether the state changed.
func (t *Transcript) Update() (changed bool, err error) {
	return t.update(false)
}

// UpdateVerified is Update that always checks every byte before the
// offset, for a file that may have been changed in place among appends.
func (t *Transcript) UpdateVerified() (changed bool, err error) {
	return t.update(true)
}

func (t *Transcript) update(verify bool) (changed bool, err error) {
	f, info, err := openStat(t.Path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	id := FileIDOf(info)
	inPlace := info.Size() == t.seenSize && !info.ModTime().Equal(t.seenMod)
	checkPrefix := verify || inPlace
	if t.offset > 0 && (id != t.fileID || info.Size() < t.offset || !t.tailMatches(f) ||
		checkPrefix && !t.prefixMatches(f)) {
		t.reset()
		changed = true
	} else if checkPrefix {
		t.appendOnly = false // every byte before the offset compared
	}
	t.fileID, t.seenSize, t.seenMod = id, info.Size(), info.ModTime()
	// The file's time comes from the kernel's clock, so the real clock,
	// not one a caller injects, says whether it has settled.
	t.mod = settledMod(info.ModTime(), time.Now())
	if info.Size() == t.offset {
		t.checkExpected(true)
		return changed, nil
	}
	before := t.offset
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return changed, fmt.Errorf("seek transcript %s: %w", t.Path, err)
	}
	if err := t.readFrom(f, info.Size()-t.offset); err != nil {
		return true, fmt.Errorf("read transcript %s: %w", t.Path, err)
	}
	t.checkExpected(true)
	if t.offset != before && before > 0 && !checkPrefix {
		t.appendOnly = true
	}
	if t.offset != before {
		if t.tailSum, err = tailChecksum(f, t.offset); err != nil {
			return true, fmt.Errorf("read transcript %s: %w", t.Path, err)
		}
	}
	return changed || t.offset != before, nil
}

func (t *Transcript) reset() {
	n := t.rewrites + 1
	*t = *NewTranscript(t.SessionID, t.Path)
	t.rewrites = n
}

// CheckedWhole reports whether the last Update that read appended lines
// also read or compared every byte before them: it parsed the file from
// the start, or checked it all (a write in place, UpdateVerified). After
// one that compared only the few KiB before the lines it read, a change
// made in place earlier in the file is not seen until something checks
// the whole file again (bottles.VerifyAll does), and State's Mod is 0.
func (t *Transcript) CheckedWhole() bool { return !t.appendOnly }

// Rewrites counts the times the file was found not to hold bytes read
// before: by Update, which then parses it again from the start (replaced,
// truncated, rewritten), or against a state given to Expect. A change in
// it means something once read may have been removed: a redaction, say,
// which whatever was made from the old bytes must forget.
func (t *Transcript) Rewrites() int { return t.rewrites }

// Expect gives a transcript not read yet a state of its file that another
// reader recorded (a bottle's): as the first Update reads the file from
// the start, it checks that the file still holds the bytes that state
// covers, and counts a rewrite if not. It costs nothing more than that
// read. A state of another file, or of nothing, is ignored.
func (t *Transcript) Expect(fs FileState) {
	if t.offset == 0 && fs.Path == t.Path && fs.Offset > 0 {
		t.expect = &fs
	}
}

// checkExpected compares what was read with the expected state once the
// read reaches its offset (a line end, as every recorded offset is) or
// the file ends: a read that passed the offset between two lines, or
// ended short of it, or holds other bytes up to it, is of a rewritten file.
func (t *Transcript) checkExpected(atEnd bool) {
	e := t.expect
	if e == nil || (t.offset < e.Offset && !atEnd) {
		return
	}
	if t.offset != e.Offset || t.sum != e.Sum {
		t.rewrites++
	}
	t.expect = nil
}

func (t *Transcript) tailMatches(f *os.File) bool {
	sum, err := tailChecksum(f, t.offset)
	return err == nil && sum == t.tailSum
}

func (t *Transcript) prefixMatches(f *os.File) bool {
	sum, err := prefixChecksum(f, t.offset)
	return err == nil && sum == t.sum
}

// readFrom consumes the complete lines r yields, advancing t.offset past
// each and adding its bytes to t.sum. A final line without its newline is
// left for the next call: it is still being written. sizeHint is how many
// bytes r is expected to hold; the daemon's appends are usually a few
// kilobytes, which need no 1 MiB buffer.
//
// Lines up to longLine bytes are parsed whole; a longer line is streamed
// through a compactor and the compacted line parsed.
func (t *Transcript) readFrom(r io.Reader, sizeHint int64) error {
	buf := make([]byte, min(max(sizeHint+1, 4096), readChunk))
	start, end, scanned := 0, 0, 0 // buf[start:end] is unconsumed; buf[start:scanned] has no newline
	var (
		long    *compactor // the line being streamed, once it is longer than longLine
		longSum uint32     // t.sum with the streamed line's bytes so far
		longLen int64      // the streamed line's bytes so far
	)
	for {
		if long == nil && end == len(buf) {
			switch {
			case start > 0:
				copy(buf, buf[start:end])
				end -= start
				scanned -= start
				start = 0
			case len(buf) > longLine:
				// One line fills the buffer: stream it from here on.
				long = newCompactor()
				long.write(buf[:end])
				longSum, longLen = crc32.Update(t.sum, crc32.IEEETable, buf[:end]), int64(end)
				end, scanned = 0, 0
			default:
				buf = append(buf, make([]byte, min(len(buf), longLine+1-len(buf)))...)
			}
		}
		n, err := r.Read(buf[end:])
		end += n
		if long != nil {
			i := bytes.IndexByte(buf[:end], '\n')
			if i < 0 {
				long.write(buf[:end])
				longSum, longLen = crc32.Update(longSum, crc32.IEEETable, buf[:end]), longLen+int64(end)
				end = 0
			} else {
				long.write(buf[:i])
				t.sum = crc32.Update(longSum, crc32.IEEETable, buf[:i+1])
				t.offset += longLen + int64(i+1)
				t.checkExpected(false)
				if line, ok := long.line(); ok {
					t.addLine(line)
				} else {
					t.malformed++
				}
				long = nil
				start, scanned = i+1, i+1
			}
		}
		for long == nil {
			i := bytes.IndexByte(buf[scanned:end], '\n')
			if i < 0 {
				scanned = end
				break
			}
			lineEnd := scanned + i
			t.addLine(buf[start:lineEnd])
			t.sum = crc32.Update(t.sum, crc32.IEEETable, buf[start:lineEnd+1])
			t.offset += int64(lineEnd + 1 - start)
			t.checkExpected(false)
			start, scanned = lineEnd+1, lineEnd+1
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
