package sources

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"syscall"
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
	uuidBytes   = 16 + 48 + 1
)

// Size estimates the memory the parse state holds, in bytes. It costs a
// look at the records added since the last call.
func (t *Transcript) Size() int64 {
	for _, r := range t.recs[t.sized:] {
		t.size += recordBytes + int64(len(r.text)+len(r.msg)+len(r.toolUse)+len(r.trigger))
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
	return &Transcript{SessionID: sessionID, Path: path, ids: map[string]int32{}}
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
	return FileState{Session: t.SessionID, Path: t.Path, ID: t.fileID, Offset: t.offset, Tail: t.tailSum, Sum: t.sum, Mod: t.mod}
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
	if t.offset > 0 && (id != t.fileID || info.Size() < t.offset || !t.tailMatches(f) ||
		(verify || inPlace) && !t.prefixMatches(f)) {
		t.reset()
		changed = true
	}
	t.fileID, t.seenSize, t.seenMod = id, info.Size(), info.ModTime()
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
	if t.offset != before {
		if t.tailSum, err = tailChecksum(f, t.offset); err != nil {
			return true, fmt.Errorf("read transcript %s: %w", t.Path, err)
		}
	}
	return changed || t.offset != before, nil
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

func (t *Transcript) reset() {
	n := t.rewrites + 1
	*t = *NewTranscript(t.SessionID, t.Path)
	t.rewrites = n
}

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
// shows (a genuine user message, assistant text, a steering message).
// Records that only add structure or noise (tool results, hook and
// progress records, a compaction boundary and its summary) do not count.
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
			r.kind == recAssistant && r.text != "":
			return false, true, nil
		}
	}
	return false, false, nil
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

// addLine parses one complete line into the state.
func (t *Transcript) addLine(line []byte) {
	// Claude Code's own reader skips NUL padding left by preallocation.
	line = bytes.TrimLeft(line, "\x00 \t\r")
	if len(line) == 0 {
		return
	}
	var r rawRecord
	if !parseRecord(line, &r) {
		t.malformed++
		return
	}
	t.apply(&r)
}

func (t *Transcript) apply(r *rawRecord) {
	if r.sidechain {
		return
	}
	if len(r.uuid) > 0 {
		if id, ok := t.ids[string(r.uuid)]; ok && t.hasRec[id] {
			return // a replayed copy; the first occurrence wins
		}
	}
	ts := parseTime(r.timestamp)
	if t.cwd == "" {
		t.cwd = string(r.cwd)
	}
	if t.started.IsZero() {
		t.started = ts
	}
	base := record{id: -1, parent: -1, blockIndex: -1, time: ts}
	t.noteUnknown(r)
	switch r.typ {
	case "queue-operation":
		t.applyQueue(r, base)
		return
	case "continued-in":
		t.continuedIn = r.continuedIn
		return
	}
	if len(r.uuid) == 0 {
		return // metadata: summary, file-history-snapshot, last-prompt…
	}
	base.id = t.intern(r.uuid)
	base.parent = t.intern(r.parent)
	t.hasRec[base.id] = true
	switch r.typ {
	case "user":
		t.applyUser(r, base)
	case "assistant":
		t.applyAssistant(r, base)
	case "system":
		switch {
		case r.subtype == "compact_boundary":
			base.kind, base.trigger = recCompact, r.trigger
		case r.subtype == "local_command" && r.queueContent.isString && isLocalOutput(strings.TrimSpace(unescape(r.queueContent.raw))):
			base.kind = recLocalOutput
		}
		t.recs = append(t.recs, base)
	case "attachment":
		if r.attachType == "queued_command" {
			t.applyQueued(r, base)
			return
		}
		t.recs = append(t.recs, base)
	default:
		t.recs = append(t.recs, base)
	}
}

// localEchoWindow is how close to its caveat a command's output is
// written: Claude Code writes both at once, while a message the user types
// after a caveat takes seconds at least.
const localEchoWindow = 2 * time.Second

func (t *Transcript) applyUser(r *rawRecord, rec record) {
	u := classifyUser(r)
	class, text, typed, images := u.class, u.text, u.typed, u.images
	if class == userGenuine {
		if tag := wrapperTag(text); tag != "" && !knownTags[tag] {
			count(&t.unknown.UserShapes, "tag:"+tag, 1)
		}
	}
	if u.caveat {
		if t.caveats == nil {
			t.caveats = map[int32]time.Time{}
		}
		t.caveats[rec.id] = rec.time
	}
	if at, ok := t.caveats[rec.parent]; ok && class == userGenuine && rec.time.Sub(at).Abs() <= localEchoWindow {
		// A plain record written with a caveat is its command's output
		// (2.1.6x wrote "Unknown skill: btw" so, without a wrapper).
		class, text = userLocalOutput, ""
	}
	rec.kind, rec.class, rec.text, rec.images = recUser, class, text, images
	if typed != "" {
		rec.typed = typedHash(typed)
	}
	t.recs = append(t.recs, rec)
}

// applyQueued handles a queued_command attachment (≈2.1.101+): text the
// user typed while Claude worked, delivered into the conversation, unless
// its origin or command mode says the harness queued it (a task
// notification). Its typed text is recorded either way, so that the queue
// operations carrying the same text are not taken for a second copy.
func (t *Transcript) applyQueued(r *rawRecord, rec record) {
	raw, images := r.attachPrompt.userText()
	rec.kind = recQueued
	rec.typed = typedHash(raw)
	human := (r.attachOrigin == "" || r.attachOrigin == "human") && (r.attachCmd == "" || r.attachCmd == "prompt")
	if class, text, _ := classifyText(raw, images); human && class == userGenuine {
		rec.class, rec.text, rec.images = userGenuine, text, images
	}
	t.recs = append(t.recs, rec)
}

func (t *Transcript) applyAssistant(r *rawRecord, rec record) {
	if r.apiErr || r.model == "<synthetic>" {
		t.recs = append(t.recs, rec) // harness text, not the model's
		return
	}
	rec.kind, rec.blockIndex = recAssistant, r.blockIndex
	rec.msg = r.msgID
	if rec.msg == "" {
		rec.msg = string(r.uuid)
	}
	kept := false
	for _, b := range r.content.blocks {
		out := rec
		switch b.typ {
		case "text":
			out.text = strings.TrimSpace(unescape(b.text))
			if out.text == "" {
				continue
			}
		case "tool_use", "server_tool_use", "mcp_tool_use":
			out.toolUse = b.id
		default:
			if !knownName(b.typ, knownAssistantBlocks, nil, knownAssistantBlockSuffx) {
				count(&t.unknown.AssistantBlocks, orNone(b.typ), 1)
			}
			continue
		}
		t.recs = append(t.recs, out)
		kept = true
	}
	if !kept {
		rec.kind = recNode
		t.recs = append(t.recs, rec)
	}
}

func (t *Transcript) applyQueue(r *rawRecord, rec record) {
	switch r.operation {
	case "enqueue":
		rec.kind = recEnqueue
	case "dequeue":
		rec.kind = recDequeue
	case "remove":
		rec.kind = recRemove
	case "popAll":
		rec.kind = recPopAll
	default:
		return
	}
	c := r.queueContent
	switch {
	case c.isString:
		raw := strings.TrimSpace(unescape(c.raw))
		if raw != "" {
			rec.queue, rec.text = classifyQueued(raw)
			rec.typed = typedHash(raw)
		}
	case len(c.blocks) > 0:
		// 2.0.x queued block lists and wrote the same text again as a
		// normal user record when it ran; such an entry is never a
		// steering message, but it still holds a place in the queue.
		rec.queue = queueNotice
	}
	if rec.kind == recEnqueue && rec.queue == queueNone {
		return // nothing queued
	}
	t.recs = append(t.recs, rec)
}

// intern returns the id of a uuid, assigning the next one on first sight.
func (t *Transcript) intern(uuid []byte) int32 {
	if len(uuid) == 0 {
		return -1
	}
	if id, ok := t.ids[string(uuid)]; ok {
		return id
	}
	id := int32(len(t.uuids))
	u := string(uuid)
	t.uuids = append(t.uuids, u)
	t.hasRec = append(t.hasRec, false)
	t.ids[u] = id
	return id
}

// parseTime reads a transcript timestamp. Claude Code always writes
// 2006-01-02T15:04:05.000Z, which is parsed by hand; anything else goes to
// time.Parse, and an unparsable value reads as the zero time.
func parseTime(b []byte) time.Time {
	if len(b) == 24 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[23] == 'Z' {
		n := func(i, w int) int {
			v := 0
			for _, c := range b[i : i+w] {
				if c < '0' || c > '9' {
					return -1
				}
				v = v*10 + int(c-'0')
			}
			return v
		}
		y, mo, d, h, mi, sec, ms := n(0, 4), n(5, 2), n(8, 2), n(11, 2), n(14, 2), n(17, 2), n(20, 3)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && sec >= 0 && sec < 61 && ms >= 0 {
			return time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC)
		}
	}
	ts, _ := time.Parse(time.RFC3339Nano, string(b))
	return ts
}
