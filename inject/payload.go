// Package inject owns bottled's side of Claude Code's hook protocol: the
// SessionStart hook that, after a compaction or on resume, makes sure the
// session's bottle is fresh and hands the model a pointer to it, and the
// SessionEnd hook that archives the bottle of a cleared session.
//
// Hooks run inside Claude Code's session start and end, so they are short
// and can never get in the way: they read one JSON payload from stdin,
// print at most one JSON object on stdout, log only to stderr, and always
// exit 0. Any failure means Claude Code goes on exactly as without bottled.
//
// It also owns bottled's edits of Claude Code's settings.json (the hooks'
// registration and the permission grants; settingsfile.go says how an
// edit loses nothing that the user or Claude Code writes meanwhile), and
// reads Claude Code's record of bottled's MCP server.
package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/textcut"
)

// Payload is the part of a hook's stdin that bottled reads. Other fields
// are ignored.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"` // SessionStart: startup, resume, clear, compact, fork
	Reason         string `json:"reason"` // SessionEnd: clear, logout, prompt_input_exit, other…
}

// maxPayload bounds what is read from stdin. Claude Code's payloads are a
// few hundred bytes.
const maxPayload = 1 << 20

// readTimeout bounds the wait for the payload: Claude Code has been seen to
// leave a hook's stdin open, so the read cannot wait for EOF, and must not
// wait forever for a value that never completes. (A variable so that tests
// need not wait as long.)
var readTimeout = 2 * time.Second

// ErrBadPayload reports stdin that is not a usable hook payload.
var ErrBadPayload = errors.New("bad hook payload")

// ReadPayload reads one JSON object from r, returning as soon as it is
// complete, without waiting for end of file.
func ReadPayload(r io.Reader) (*Payload, error) {
	type read struct {
		p   *Payload
		err error
	}
	done := make(chan read, 1)
	go func() {
		var p Payload
		err := json.NewDecoder(io.LimitReader(r, maxPayload)).Decode(&p)
		done <- read{&p, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, res.err)
		}
		if !sources.ValidSessionID(res.p.SessionID) {
			return nil, fmt.Errorf("%w: session_id %q is not a plain token", ErrBadPayload, clipForLog(res.p.SessionID))
		}
		return res.p, nil
	case <-time.After(readTimeout):
		// The reading goroutine is abandoned; the process exits soon.
		return nil, fmt.Errorf("%w: no complete JSON value on stdin within %v", ErrBadPayload, readTimeout)
	}
}

// transcriptFor returns the payload's transcript path if it can be
// trusted: inside <claudeDir>/projects and named after the session.
// Otherwise it returns "" and the transcript is looked up by name.
func (p *Payload) transcriptFor(claudeDir string) string {
	if p.TranscriptPath == "" || !filepath.IsAbs(p.TranscriptPath) {
		return ""
	}
	path := filepath.Clean(p.TranscriptPath)
	projects := filepath.Clean(sources.ProjectsDir(claudeDir))
	rel, err := filepath.Rel(projects, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	if filepath.Base(path) != p.SessionID+".jsonl" {
		return ""
	}
	return path
}

func clipForLog(s string) string {
	if head := textcut.Head(s, 80, textcut.Bytes); len(head) < len(s) {
		return head + textcut.Ellipsis
	}
	return s
}
