package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/bottled-dev/bottled/sources"
)

// Format is the version of the bottle layout. A bottle of another format is
// always re-rendered. Format 2 records each transcript's checksum of every
// byte read and its settled modification time; format 3 carries the trail
// of what the assistant did. Format 4 tells the user's words from Claude
// Code's notices and queue echoes by the rules of issue 17 (background-task
// notices, queue pairing, undelivered messages, asides): a bottle made by
// the older rules may show a notice as a message or lack one.
const Format = 4

// Mode says what a bottle was rendered from.
type Mode string

const (
	// ModeFull: the transcript, with observations from the database.
	ModeFull Mode = "full"
	// ModeReconstructed: the database alone; assistant messages are lost.
	ModeReconstructed Mode = "reconstructed"
)

// State is the machine-readable record a bottle carries in its fourth line:
// what it was rendered from and how it is laid out. It lives in the same
// file as the content so that the two can never disagree.
type State struct {
	Format   int       `json:"format"`
	Session  string    `json:"session"`
	Mode     Mode      `json:"mode"`
	Rendered time.Time `json:"rendered"`
	// Redact is the ID of the redaction rules the bottle was made by
	// (redact.Rules.ID): a bottle made by other rules (by a bottled from
	// before redaction, none) is stale, and is made again.
	Redact string `json:"redact"`
	// Transcripts are the files read, oldest first (a chain has several).
	Transcripts []sources.FileState `json:"transcripts,omitempty"`
	// ClaudeMem is the database cursor the records were read at, if any.
	ClaudeMem *sources.ClaudeMemCursor `json:"memory,omitempty"`
	// Lines and Bytes are the size of the whole bottle.
	Lines int `json:"lines"`
	Bytes int `json:"bytes"`
	// Outline is the first and last line of the outline list.
	Outline [2]int `json:"outline"`
	// Legs holds the line where each leg of the conversation starts; a new
	// leg starts at each compaction.
	Legs []int `json:"legs"`
	// Task is a one-line statement of what the session is working on.
	Task string `json:"task,omitempty"`
	// Unknown counts what the transcripts hold that this bottled does not
	// know (new record types, attachment types, message shapes…): after a
	// Claude Code upgrade, the first bottle says what is new.
	Unknown *sources.Unknown `json:"unknown,omitempty"`
}

// stateLine is the fourth line of a bottle: an HTML comment, so markdown
// viewers hide it.
const (
	stateOpen  = "<!-- bottled-state "
	stateClose = " -->"
	stateLineN = 4
)

func (s *State) line() ([]byte, error) {
	js, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode bottle state: %w", err)
	}
	return slices.Concat([]byte(stateOpen), js, []byte(stateClose), []byte("\n")), nil
}

// withStateLine is head, the state line of s and the rest, with s.Bytes
// the size of the whole: the count's own digits can change that size, so
// the line is made until the count stops changing it.
func (s *State) withStateLine(head []byte, rest ...[]byte) ([]byte, error) {
	fixed := len(head)
	for _, p := range rest {
		fixed += len(p)
	}
	size := fixed
	for range 4 {
		s.Bytes = size
		sl, err := s.line()
		if err != nil {
			return nil, err
		}
		if n := fixed + len(sl); n != size {
			size = n
			continue
		}
		out := bottleBuffer(size)
		out = append(append(out, head...), sl...)
		for _, p := range rest {
			out = append(out, p...)
		}
		return out, nil
	}
	return nil, errUnsettled
}

// errUnsettled reports a state line whose byte count never matched the
// bottle's size.
var errUnsettled = errors.New("bottle size did not settle")

// ErrNoState reports a file that does not carry a bottle state line.
var ErrNoState = errors.New("no bottle state")

// StateOf reads the state recorded in a bottle's bytes.
func StateOf(data []byte) (*State, error) {
	return readState(bytes.NewReader(data))
}

// ReadStateFrom reads the state line of the bottle r reads, reading no
// further than it.
func ReadStateFrom(r io.Reader) (*State, error) { return readState(r) }

// readState is the one reader of a bottle's state line, for files and
// bytes alike. The header lines before it and the state line itself may
// be of any length (a deep working directory, a session continued over
// many transcripts with long paths): the header is skipped as it is read,
// and only the state line is held. A file that does not open the way a
// bottle does is given up at its first bytes, so that reading one costs a
// buffer whatever it holds.
func readState(r io.Reader) (*State, error) {
	br := bufio.NewReader(r)
	if !hasPrefix(br, headerPrefix) {
		return nil, ErrNoState
	}
	for range stateLineN - 1 {
		if err := skipLine(br); err != nil {
			return nil, ErrNoState
		}
	}
	if !hasPrefix(br, stateOpen) {
		return nil, ErrNoState
	}
	line, err := br.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrNoState, err)
	}
	body, ok := bytes.CutSuffix(bytes.TrimSuffix(line[len(stateOpen):], []byte("\n")), []byte(stateClose))
	if !ok {
		return nil, ErrNoState
	}
	var s State
	if err := json.Unmarshal(body, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoState, err)
	}
	return &s, nil
}

// hasPrefix reports whether what br reads next starts with prefix.
func hasPrefix(br *bufio.Reader, prefix string) bool {
	b, _ := br.Peek(len(prefix))
	return string(b) == prefix
}

// skipLine reads past the next newline, however far it is.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// Covers reports whether a bottle of state s reflects everything a bottle
// of state o would: same format and mode, every transcript file of o read
// at least as far, and the database read at or past o's rows. Cursors of
// two different database files are not comparable here (Write decides
// between them by which file is claude-mem's database now).
func (s *State) Covers(o *State) bool {
	if s.Format != o.Format || s.Session != o.Session || s.Mode != o.Mode {
		return false
	}
	return s.CoversNow(o, nil, nil)
}

// CoversNow is Covers without the format and mode check, told what is on
// disk now. A transcript of o that gone reports no longer there (deleted,
// or another file now has its name) is not held against s, which could
// not have read it; gone nil holds every transcript. db, if not nil,
// names the database file there is now: a cursor of that file covers one
// of a file that is gone.
func (s *State) CoversNow(o *State, gone func(sources.FileState) bool, db func() (sources.FileID, bool)) bool {
	for _, ot := range o.Transcripts {
		i := slices.IndexFunc(s.Transcripts, func(st sources.FileState) bool {
			return st.Session == ot.Session && st.ID == ot.ID
		})
		switch {
		case i < 0:
			if gone == nil || !gone(ot) {
				return false
			}
		case s.Transcripts[i].Offset < ot.Offset:
			return false
		}
	}
	return memoryCovers(s.ClaudeMem, o.ClaudeMem, db)
}

// memoryCovers reports whether database cursor a reflects every row b
// does. No cursor, or one without rows, is covered by anything: a bottle
// rendered while the database did not know the session (or could not be
// read) shows nothing from it.
func memoryCovers(a, b *sources.ClaudeMemCursor, db func() (sources.FileID, bool)) bool {
	if !hasRows(b) {
		return true
	}
	if a == nil {
		return false
	}
	if a.DB != b.DB {
		if db == nil {
			return false
		}
		now, ok := db()
		return ok && a.DB == now // b's database was replaced by a's
	}
	return (a.MemorySessionID == b.MemorySessionID || b.MemorySessionID == "") &&
		a.Prompt >= b.Prompt && a.Observation >= b.Observation &&
		a.Summary >= b.Summary && a.ToolUseLinks >= b.ToolUseLinks
}

// hasRows reports whether a cursor saw anything of the session.
func hasRows(c *sources.ClaudeMemCursor) bool {
	return c != nil && (c.MemorySessionID != "" || c.Prompt > 0 || c.Observation > 0 || c.Summary > 0 || c.ToolUseLinks > 0)
}
