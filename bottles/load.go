package bottles

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// Request names a session whose bottle is to be made from the sources on
// disk, as the render command and the hook's inline fallback do. (The
// daemon keeps parse state between renders and builds Input itself.)
type Request struct {
	SessionID string
	// Transcript is the transcript's path; "" looks it up under ClaudeDir.
	Transcript string
	ClaudeDir  string
	// ClaudeMem is claude-mem's database; nil when there is none, and then
	// MemoryErr may say why (the error opening it).
	ClaudeMem    *sources.ClaudeMemDB
	ClaudeMemErr error
	// Expect are states of the transcripts recorded before (by the bottle
	// a render replaces), checked as they are read (Loaded.Rewritten);
	// WriteFromDisk reads them from the bottle when nil.
	Expect []sources.FileState
	// Rules redact the bottle (nil: the built-in rules; see LoadRules).
	Rules *redact.Rules
	// Verify is how much of the transcript Ensure's freshness check reads
	// (see CheckState): VerifyHook when 0.
	Verify int64
}

// Loaded is what was found on disk for a session, and why the rest was not.
type Loaded struct {
	Chain         []*sources.Transcript // the session's transcript, predecessors first
	ClaudeMem     *sources.ClaudeMem
	TranscriptErr error // why Chain is empty
	ClaudeMemErr  error // why ClaudeMem is nil
}

// Load reads a session's transcript chain and its claude-mem records.
// Missing or unreadable sources are reported in Loaded, not as errors: a
// bottle can be made from either source alone. Only a cancelled context is
// an error.
func Load(ctx context.Context, req Request) (*Loaded, error) {
	l := &Loaded{}
	path := req.Transcript
	if path == "" {
		path, l.TranscriptErr = sources.FindTranscript(req.ClaudeDir, req.SessionID)
	}
	if l.TranscriptErr == nil {
		l.Chain, l.TranscriptErr = sources.ReadChain(req.SessionID, path, req.Expect...)
	}
	if req.ClaudeMem == nil {
		l.ClaudeMemErr = req.ClaudeMemErr
		if l.ClaudeMemErr == nil {
			l.ClaudeMemErr = sources.ErrNoClaudeMemDB
		}
	} else {
		l.ClaudeMem, l.ClaudeMemErr = req.ClaudeMem.Session(ctx, req.SessionID)
		if l.ClaudeMemErr == nil && l.ClaudeMem == nil {
			l.ClaudeMemErr = fmt.Errorf("claude-mem has no records of session %s", req.SessionID)
		}
	}
	return l, ctx.Err()
}

// FromDisk loads a session's sources and renders its bottle now, without
// writing it. When there is nothing to render the error wraps ErrNothing
// and says why.
func (s *Store) FromDisk(ctx context.Context, req Request) (*render.Bottle, error) {
	b, _, err := s.fromDisk(ctx, req)
	return b, err
}

// fromDisk is FromDisk, which also reports whether a transcript no longer
// holds what req.Expect says it held (Loaded.Rewritten), so that the
// write that replaces the old bottle with this one asks the search index
// to forget what the old one said (Put).
func (s *Store) fromDisk(ctx context.Context, req Request) (b *render.Bottle, rewritten bool, err error) {
	l, err := Load(ctx, req)
	if err != nil {
		return nil, false, err
	}
	in := l.Input(req.SessionID)
	in.Now, in.Location, in.Rules = s.Now(), s.Loc, req.Rules
	b, err = render.Render(in)
	if errors.Is(err, render.ErrNothing) {
		return nil, false, fmt.Errorf("%w for session %s: %s", render.ErrNothing, req.SessionID, l.Why())
	}
	if err != nil {
		return nil, false, err
	}
	return b, l.Rewritten(), nil
}

// MaxCrossed bounds how many times a session is rendered in a row because
// another writer's bottle crossed the new one (see Crossed). Each attempt
// reads the sources afresh, so the second normally covers both; only a
// source that cannot be read now (the database) makes them all cross.
const MaxCrossed = 3

// WriteFromDisk renders a session from disk and writes its bottle,
// rendering again while another writer's bottle crosses the new one. It
// returns the last bottle rendered and what Write did with it. A bottle
// that replaces one made from transcript bytes that are gone now (a
// redaction), or one made by other redaction rules, asks the search index
// to forget what the old one said (Write leaves the purge marker).
func (s *Store) WriteFromDisk(ctx context.Context, req Request) (*render.Bottle, Outcome, error) {
	st, err := ReadState(s.Path(req.SessionID))
	if err != nil {
		st = nil
	}
	return s.writeFromDisk(ctx, req, st)
}

// writeFromDisk is WriteFromDisk of a session whose bottle on disk has
// state onDisk (nil if it has none), already read by the caller.
func (s *Store) writeFromDisk(ctx context.Context, req Request, onDisk *render.State) (*render.Bottle, Outcome, error) {
	if onDisk != nil && req.Expect == nil {
		req.Expect = onDisk.Transcripts
	}
	for attempt := 1; ; attempt++ {
		b, rewritten, err := s.fromDisk(ctx, req)
		if err != nil {
			return nil, 0, err
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("render %s: %w", req.SessionID, err)
		}
		r, err := s.Put(b, rewritten)
		if err != nil || r.Outcome != Crossed || attempt == MaxCrossed || req.ClaudeMem == nil {
			return b, r.Outcome, err
		}
	}
}

// Input turns what was loaded into the renderer's input.
func (l *Loaded) Input(sessionID string) render.Input {
	in := render.Input{SessionID: sessionID, ClaudeMem: l.ClaudeMem}
	if len(l.Chain) > 0 {
		in.Spine = sources.BuildSpine(sessionID, l.Chain)
	}
	return in
}

// Rewritten reports whether a transcript read no longer holds the bytes
// a state in the request's Expect covered.
func (l *Loaded) Rewritten() bool {
	for _, t := range l.Chain {
		if t.Rewrites() > 0 {
			return true
		}
	}
	return false
}

// Why explains, in one line, why a session had nothing to render.
func (l *Loaded) Why() string {
	var parts []string
	switch {
	case l.TranscriptErr != nil:
		parts = append(parts, l.TranscriptErr.Error())
	case len(l.Chain) > 0:
		parts = append(parts, "its transcript has no messages")
	}
	switch {
	case errors.Is(l.ClaudeMemErr, sources.ErrNoClaudeMemDB):
		parts = append(parts, "no claude-mem database")
	case l.ClaudeMemErr != nil:
		parts = append(parts, l.ClaudeMemErr.Error())
	case l.ClaudeMem.Empty():
		parts = append(parts, "claude-mem stored no prompt or observation for it")
	}
	return strings.Join(parts, "; ")
}
