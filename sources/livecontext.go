package sources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// LiveContext is what a transcript says about the model's context as it
// stands: where the latest compaction is (before it, the conversation was
// replaced by a summary) and which SessionStart hook context was injected
// after it. Claude Code keeps hook context in the conversation it
// resumes, so a pointer found here is still in front of the model.
//
// How versions record hook context (seen in the real transcripts): from
// 2.1.112 on, an attachment hook_additional_context with the text and an
// attachment hook_success with the hook's stdout; 2.1.38–2.1.42 wrote only
// a hook_progress record naming the command, without the text: a
// conversation resumed from such a transcript cannot hold the text either.
type LiveContext struct {
	// Compacted reports that the file holds a compaction: a
	// compact_boundary record, or the compaction summary that opens a file
	// the conversation rolled over into.
	Compacted bool
	// At is the byte offset of the line that marks the latest compaction
	// (valid when Compacted).
	At int64
	// Injected holds the SessionStart hook context recorded after the
	// latest compaction (after Floor when there is none), oldest first.
	Injected []string
}

// Pointed reports whether a bottled pointer naming path was injected
// after the latest compaction.
func (lc LiveContext) Pointed(path string) bool {
	for _, text := range lc.Injected {
		if strings.HasPrefix(strings.TrimSpace(text), PointerHeading) && strings.Contains(text, path) {
			return true
		}
	}
	return false
}

// Tunables of the backward scan.
const (
	// scanChunk is how much is read at a time from the end of the file: a
	// compaction is usually near the end, and one read of this size finds
	// the records after it.
	scanChunk = 256 << 10
	// scanMaxLine bounds the line kept whole while scanning. The records
	// the scan looks for (compaction markers, hook attachments of at most
	// 10,000 characters of context) are far smaller; a longer line is tool
	// output and is passed over without being held.
	scanMaxLine = 4 << 20
)

// ScanLiveContext reads the transcript at path backwards from its end to
// its latest compaction, or to floor, a line start before which the
// caller knows there is no compaction. The cost is the bytes after the
// latest compaction (or after floor), not the whole file.
func ScanLiveContext(path string, floor int64) (LiveContext, error) {
	f, info, err := OpenRegular(path)
	if err != nil {
		return LiveContext{}, err
	}
	defer f.Close()
	floor = max(0, min(floor, info.Size()))
	var lc LiveContext
	var injected []string // newest first while scanning
	done := false
	err = scanLinesBackward(f, floor, info.Size(), scanChunk, scanMaxLine, func(line []byte, at int64) bool {
		switch c := classifyContextLine(line); {
		case c.compaction:
			lc.Compacted, lc.At = true, at
			done = true
		case c.context != "":
			injected = append(injected, c.context)
		}
		return !done
	})
	if err != nil {
		return LiveContext{}, fmt.Errorf("scan %s: %w", path, err)
	}
	for i := len(injected) - 1; i >= 0; i-- {
		lc.Injected = append(lc.Injected, injected[i])
	}
	return lc, nil
}

// contextLine is what ScanLiveContext uses of one transcript line.
type contextLine struct {
	compaction bool
	context    string // SessionStart hook context, if the line records one
}

// classifyContextLine decodes only lines that can matter: a cheap byte
// test first, since most lines are tool traffic.
func classifyContextLine(line []byte) contextLine {
	boundary := bytes.Contains(line, []byte(`"compact_boundary"`))
	summary := bytes.Contains(line, []byte(`"isCompactSummary":true`))
	hook := bytes.Contains(line, []byte(`SessionStart`)) &&
		(bytes.Contains(line, []byte(`"hook_additional_context"`)) || bytes.Contains(line, []byte(`"hook_success"`)))
	if !boundary && !summary && !hook {
		return contextLine{}
	}
	var rec struct {
		Type             string `json:"type"`
		Subtype          string `json:"subtype"`
		IsSidechain      bool   `json:"isSidechain"`
		IsCompactSummary bool   `json:"isCompactSummary"`
		Attachment       struct {
			Type      string          `json:"type"`
			HookEvent string          `json:"hookEvent"`
			Content   json.RawMessage `json:"content"`
			Stdout    string          `json:"stdout"`
		} `json:"attachment"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.IsSidechain {
		return contextLine{}
	}
	switch {
	case rec.Type == "system" && rec.Subtype == "compact_boundary",
		rec.Type == "user" && rec.IsCompactSummary:
		return contextLine{compaction: true}
	case rec.Type != "attachment" || rec.Attachment.HookEvent != "SessionStart":
		return contextLine{}
	case rec.Attachment.Type == "hook_additional_context":
		var texts []string
		if json.Unmarshal(rec.Attachment.Content, &texts) != nil {
			var one string
			if json.Unmarshal(rec.Attachment.Content, &one) != nil {
				return contextLine{}
			}
			texts = []string{one}
		}
		return contextLine{context: strings.Join(texts, "\n")}
	case rec.Attachment.Type == "hook_success":
		// Versions that record only the hook's output: its JSON answer.
		var out struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(rec.Attachment.Stdout)), &out) != nil {
			return contextLine{}
		}
		return contextLine{context: out.HookSpecificOutput.AdditionalContext}
	}
	return contextLine{}
}
