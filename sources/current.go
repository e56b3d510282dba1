package sources

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Claude Code tells the processes it starts (hooks, MCP servers) the
// session they were started in: CLAUDE_CODE_SESSION_ID, with
// CLAUDE_PROJECT_DIR. An MCP server lives as long as the Claude Code
// process, though, and the session changes under it: /clear starts a new
// session (a new transcript), and a compaction may roll the conversation
// over into a new file (continued-in). Claude Code 2.1.332 writes the id of
// the session the process started with into the records of those later
// transcripts, as "session_id" beside their own "sessionId" (seen in the
// interactive screen; headless runs write no session_id, and end with the
// process anyway).

// launcherWindow bounds how much of a transcript's head is read for its
// first "session_id".
const launcherWindow = 1 << 20

// SessionTracker follows which session a process started by Claude Code
// is in now. It is safe for concurrent use.
type SessionTracker struct {
	claudeDir, launched string

	// mu guards launchers.
	mu sync.Mutex
	// launchers caches, per transcript file, the session id of the
	// process that wrote it ("" when it names none): the head of a
	// transcript does not change.
	launchers map[FileID]string
}

// NewSessionTracker follows the session of a process started in session
// launched (CLAUDE_CODE_SESSION_ID).
func NewSessionTracker(claudeDir, launched string) *SessionTracker {
	return &SessionTracker{claudeDir: claudeDir, launched: launched, launchers: map[FileID]string{}}
}

// Current returns the session the process is in now: the most recently
// written transcript in the launch session's project directory that the
// same process wrote (the launch session itself, or one started by /clear
// since), followed along continued-in links. It returns "" when the launch
// session is not a valid id, and the launch session when its transcript
// cannot be found.
func (t *SessionTracker) Current() string {
	if !ValidSessionID(t.launched) {
		return ""
	}
	path, err := FindTranscript(t.claudeDir, t.launched)
	if err != nil {
		return t.launched
	}
	best, bestPath, bestMod := t.launched, path, modTime(path)
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		name := e.Name()
		if !IsSessionFile(name) || name == t.launched+".jsonl" {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().After(bestMod) {
			continue
		}
		p := filepath.Join(filepath.Dir(path), name)
		if t.launcher(p, info) == t.launched {
			best, bestPath, bestMod = SessionOf(name), p, info.ModTime()
		}
	}
	for range maxChain {
		next, err := ReadContinuedIn(bestPath)
		if err != nil || next == "" {
			break
		}
		p := filepath.Join(filepath.Dir(bestPath), next+".jsonl")
		if _, err := StatRegular(p); err != nil {
			break
		}
		best, bestPath = next, p
	}
	return best
}

// launcher returns the session_id the transcript at path records, "" if
// none is in its head.
func (t *SessionTracker) launcher(path string, info os.FileInfo) string {
	id := FileIDOf(info)
	t.mu.Lock()
	l, ok := t.launchers[id]
	t.mu.Unlock()
	if ok {
		return l
	}
	l, complete := readLauncher(path)
	if complete {
		t.mu.Lock()
		t.launchers[id] = l
		t.mu.Unlock()
	}
	return l
}

// readLauncher reads the first "session_id" value of a transcript. The
// answer is complete (worth keeping) when it was found or the whole window
// was read.
func readLauncher(path string) (string, bool) {
	f, _, err := OpenRegular(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, launcherWindow)
	n, err := io.ReadFull(f, buf)
	buf = buf[:n]
	key := []byte(`"session_id":"`)
	i := bytes.Index(buf, key)
	if i < 0 {
		return "", n == launcherWindow && err == nil
	}
	rest := buf[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || !ValidSessionID(string(rest[:end])) {
		return "", false
	}
	return string(rest[:end]), true
}

func modTime(path string) time.Time {
	info, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}
