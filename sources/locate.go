package sources

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ErrNoTranscript reports that a session has no transcript on disk (never
// written, or deleted by Claude Code's cleanup).
var ErrNoTranscript = errors.New("no transcript")

// maxSessionIDLen bounds session ids taken from untrusted input. Claude
// Code's are 36-character UUIDs.
const maxSessionIDLen = 128

// ValidSessionID reports whether id is a plain token ([A-Za-z0-9_-], at most
// 128 bytes) that is safe to use in a file name.
func ValidSessionID(id string) bool {
	if id == "" || len(id) > maxSessionIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ProjectsDir is where Claude Code keeps transcripts under its config dir.
func ProjectsDir(claudeDir string) string { return filepath.Join(claudeDir, "projects") }

// IsSessionFile reports whether name (a base name in a project directory)
// is a main session transcript rather than a 2.0.x flat subagent file.
func IsSessionFile(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, "agent-") &&
		ValidSessionID(strings.TrimSuffix(name, ".jsonl"))
}

// FindTranscript returns the transcript of sessionID under
// <claudeDir>/projects/*/. Project directory names are a lossy encoding of
// the working directory, so the file is found by name, not by rebuilding
// the key. With none, the error is ErrNoTranscript, or, when what stands
// under the transcript's name is not a regular file (a named pipe, a
// directory), an error that is ErrNotRegular and says what it is.
func FindTranscript(claudeDir, sessionID string) (string, error) {
	if !ValidSessionID(sessionID) {
		return "", fmt.Errorf("invalid session id %q", sessionID)
	}
	matches, err := filepath.Glob(filepath.Join(ProjectsDir(claudeDir), "*", sessionID+".jsonl"))
	if err != nil {
		return "", fmt.Errorf("find transcript of %s: %w", sessionID, err)
	}
	var newest string
	var newestMod int64
	var odd error // what stands under the name but is not a regular file
	for _, m := range matches {
		info, err := StatRegular(m)
		if err != nil {
			if errors.Is(err, ErrNotRegular) {
				odd = err
			}
			continue
		}
		// The same id in two projects happens only with copied sessions;
		// the most recently written one is the live one.
		if mod := info.ModTime().UnixNano(); newest == "" || mod > newestMod {
			newest, newestMod = m, mod
		}
	}
	switch {
	case newest == "" && odd != nil:
		return "", fmt.Errorf("transcript of session %s: %w", sessionID, odd)
	case newest == "":
		return "", fmt.Errorf("%w for session %s under %s", ErrNoTranscript, sessionID, ProjectsDir(claudeDir))
	}
	return newest, nil
}

// maxChain bounds how many predecessors a session chain may have, so that a
// loop of continued-in records cannot run forever.
const maxChain = 64

// Predecessors returns the transcripts whose conversation continued, directly
// or through others, in the session whose transcript is at path, oldest
// first. Recent Claude Code builds roll an auto-compaction into a new
// session file and append a continued-in record to the old one; the new
// file does not point back. So the sibling files' tails are read (never
// whole files) to find the link.
func Predecessors(path string) ([]string, error) {
	dir := filepath.Dir(path)
	links, err := Links(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ChainBack(links, SessionOf(path)) {
		out = append(out, filepath.Join(dir, id+".jsonl"))
	}
	return out, nil
}

// Links reads the continued-in records at the tails of a project
// directory's transcripts: session → the session it continued in.
func Links(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list project dir: %w", err)
	}
	links := map[string]string{}
	var buf []byte // one tail's room for every file (the daemon's catch-up reads hundreds)
	for _, e := range entries {
		if e.IsDir() || !IsSessionFile(e.Name()) {
			continue
		}
		var next string
		next, buf, err = readContinuedIn(filepath.Join(dir, e.Name()), buf)
		if err != nil || next == "" {
			continue // an unreadable sibling is not part of a chain
		}
		links[SessionOf(e.Name())] = next
	}
	return links, nil
}

// ChainBack follows continued-in links (session → its successor) backwards
// from a session and returns its predecessors, oldest first. Loops and
// chains longer than maxChain are cut.
func ChainBack(links map[string]string, session string) []string {
	prev := map[string]string{}
	for from, to := range links {
		if p, dup := prev[to]; !dup || from < p {
			prev[to] = from // two files claiming one successor: a stable pick
		}
	}
	var chain []string
	seen := map[string]bool{session: true}
	for id := session; len(chain) < maxChain; {
		p, ok := prev[id]
		if !ok || seen[p] {
			break
		}
		seen[p] = true
		chain = append(chain, p)
		id = p
	}
	slices.Reverse(chain)
	return chain
}

// asidePrefix opens the names of the transcripts Claude Code writes for
// /btw side questions: agent-aside_question-<16 hex>.jsonl, among the
// session's subagent transcripts.
const asidePrefix = "agent-aside_question-"

// IsAsideFile reports whether name (a base name) is the transcript of a
// /btw side question.
func IsAsideFile(name string) bool {
	return strings.HasPrefix(name, asidePrefix) && strings.HasSuffix(name, ".jsonl") &&
		ValidSessionID(strings.TrimSuffix(name, ".jsonl"))
}

// SubagentsDir is the directory of the subagent transcripts (2.1.x) of
// the session whose transcript is at path: <sessionId>/subagents beside it.
func SubagentsDir(path string) string {
	return filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
}

// AsideFiles returns the /btw side-question transcripts of the session
// whose transcript is at path, by name (none if it has no subagents
// directory). A side question's words exist only there: Claude Code
// writes nothing of it into the session's own transcript.
func AsideFiles(path string) []string {
	entries, err := os.ReadDir(SubagentsDir(path))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && IsAsideFile(e.Name()) {
			out = append(out, filepath.Join(SubagentsDir(path), e.Name()))
		}
	}
	return out
}

// SessionOf is the session id a transcript file is named after.
func SessionOf(path string) string { return strings.TrimSuffix(filepath.Base(path), ".jsonl") }

// ListTranscripts returns every main session transcript under
// <claudeDir>/projects/*/ (subagent files excluded).
func ListTranscripts(claudeDir string) []string {
	matches, _ := filepath.Glob(filepath.Join(ProjectsDir(claudeDir), "*", "*.jsonl"))
	out := matches[:0]
	for _, m := range matches {
		if IsSessionFile(filepath.Base(m)) {
			out = append(out, m)
		}
	}
	return out
}

// continuedInWindow is how much of a file's end is searched for a
// continued-in record: Claude Code appends it as the file's last line.
const continuedInWindow = 64 << 10

// ReadContinuedIn returns the session id named by the last continued-in
// record in the tail of the transcript at path, or "" if there is none.
func ReadContinuedIn(path string) (string, error) {
	next, _, err := readContinuedIn(path, nil)
	return next, err
}

// readContinuedIn is ReadContinuedIn reading the tail into buf's room,
// grown if need be; it returns buf for the next file. It is not ScanTail,
// which allocates per chunk, because a catch-up asks it of every
// transcript in turn and one buffer serves them all.
func readContinuedIn(path string, buf []byte) (string, []byte, error) {
	f, info, err := OpenRegular(path)
	if err != nil {
		return "", buf, err
	}
	defer f.Close()
	off := max(info.Size()-continuedInWindow, 0)
	buf = slices.Grow(buf[:0], int(info.Size()-off))[:info.Size()-off]
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", buf, err
	}
	next := ""
	for line := range bytes.Lines(buf[:n]) { // a file cut short since holds no more
		if !bytes.Contains(line, []byte(`"continued-in"`)) {
			continue
		}
		var r rawRecord
		if parseRecord(bytes.TrimSpace(line), &r) && r.typ == "continued-in" && ValidSessionID(r.continuedIn) {
			next = r.continuedIn
		}
	}
	return next, buf, nil
}

// ReadChain parses the transcript of sessionID at path and those of its
// predecessors, oldest first, then the side-question transcripts of each
// (see ChainFiles), checking on the way the states of them in expect (see
// Transcript.Expect).
func ReadChain(sessionID, path string, expect ...FileState) ([]*Transcript, error) {
	preds, err := Predecessors(path)
	if err != nil {
		return nil, err
	}
	var chain []*Transcript
	for _, p := range ChainFiles(append(preds, path)) {
		id := SessionOf(p)
		if p == path {
			id = sessionID
		}
		t, err := ReadTranscript(id, p, expect...)
		if err != nil && !(IsAsideFile(filepath.Base(p)) && errors.Is(err, fs.ErrNotExist)) {
			return nil, err
		}
		if t != nil {
			chain = append(chain, t)
		}
	}
	return chain, nil
}

// ChainFiles is the files a session's spine is built from, given its
// chain of transcripts (predecessors first): those, then the /btw
// side-question transcripts of each, in the same order.
func ChainFiles(chain []string) []string {
	out := slices.Clone(chain)
	for _, p := range chain {
		out = append(out, AsideFiles(p)...)
	}
	return out
}

// maxProjectKey is the length (in UTF-16 units) past which Claude Code cuts
// a project key and appends a hash of the whole path.
const maxProjectKey = 200

// ProjectKey is the name Claude Code gives the project directory of a
// working directory: every UTF-16 code unit that is not an ASCII letter or
// digit becomes "-", and a key longer than 200 units is cut to 200 and
// followed by "-" and a base-36 hash of the path (transcript-format.md
// §1.1). The mapping cannot be reversed; it is only ever computed forward.
func ProjectKey(path string) string {
	units := utf16.Encode([]rune(path))
	key := make([]byte, len(units))
	for i, u := range units {
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			key[i] = byte(u)
		} else {
			key[i] = '-'
		}
	}
	if len(key) <= maxProjectKey {
		return string(key)
	}
	var h int32 // JavaScript's (h << 5) - h + c | 0
	for _, u := range units {
		h = h<<5 - h + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(key[:maxProjectKey]) + "-" + strconv.FormatInt(abs, 36)
}

// ObserverDir is the working directory claude-mem runs its observer's own
// Claude Code sessions in, under its data directory.
func ObserverDir(dataDir string) string { return filepath.Join(dataDir, observerProject) }

// IsObserverSession reports whether the transcript at path belongs to
// claude-mem's observer (for the claude-mem data directory dataDir): its
// project directory is the observer directory's, or cwd, the working
// directory its records name ("" if unknown), is inside the observer
// directory. Those sessions are claude-mem's work, not the user's
// conversations.
func IsObserverSession(path, cwd, dataDir string) bool {
	dir := ObserverDir(dataDir)
	if filepath.Base(filepath.Dir(path)) == ProjectKey(dir) {
		return true
	}
	return cwd != "" && (cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)))
}
