package inject

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// DefaultTimeout bounds the SessionStart hook's whole run (see
// SessionStartFrom), its inline render included. Claude Code waits for
// the hook; a compaction should not stall on bottled.
const DefaultTimeout = 5 * time.Second

// Config is what the hooks need to know.
type Config struct {
	ClaudeDir string
	DataDir   string
	Timeout   time.Duration // for an inline render; for the whole run with SessionStartFrom
	Log       *slog.Logger  // stderr only: stdout carries the hook's answer
	Now       func() time.Time
	// MCPTools: bottled's MCP server is registered, and the pointer says
	// the bottle can also be read and searched with its tools.
	MCPTools bool
}

func (c *Config) defaults() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// rules are the data directory's redaction rules, read for each render
// (the hook logs a patterns file it cannot use: bottles.LoadRulesOrWarn).
func (c *Config) rules() *redact.Rules { return bottles.LoadRulesOrWarn(c.DataDir, c.Log) }

// store is the data directory's bottles, rendered at the hook's clock in
// the user's time zone.
func (c *Config) store() *bottles.Store { return bottles.Open(c.DataDir, c.Now, time.Local) }

// output is the JSON Claude Code reads from a SessionStart hook.
type output struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// SessionStart answers the SessionStart hook. The pointer is injected only
// where it helps: after a compaction, and on the resume of a session that
// has one (Claude Code then loads the summary and what follows the latest
// compaction; a session never compacted comes back whole, and a pointer
// would make the model read it twice). It is never injected twice into
// one context: a resume whose transcript shows a pointer to the same
// bottle after the latest compaction gets nothing. Otherwise it makes sure
// the session's bottle is fresh, rendering it within the timeout if it is
// stale or missing, and returns the JSON pointing to it. When there is
// nothing to add it returns nil: the hook prints nothing.
func SessionStart(ctx context.Context, cfg Config, p *Payload) ([]byte, error) {
	cfg.defaults()
	if p.Source != "compact" && p.Source != "resume" {
		return nil, nil
	}
	store := cfg.store()
	transcript := transcriptOf(cfg, p)
	if sources.IsObserverSession(transcript, p.CWD, cfg.DataDir) {
		return nil, nil // claude-mem's own session: not bottled
	}
	cur, err := store.ReadCurrent(p.SessionID)
	if err != nil {
		return nil, err
	}
	var live sources.LiveContext
	if transcript != "" {
		var compacted bool
		if live, compacted, err = liveContext(transcript, cur, p.SessionID); err != nil {
			return nil, err
		}
		if p.Source == "resume" && !compacted {
			cfg.Log.Info("resume of a session never compacted: Claude Code loaded all of it", "session", p.SessionID)
			return nil, nil
		}
	}
	db := openMemory(ctx, cfg)
	if db != nil {
		defer db.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	req := bottles.Request{SessionID: p.SessionID, Transcript: transcript, ClaudeDir: cfg.ClaudeDir, ClaudeMem: db, Rules: cfg.rules(), Verify: bottles.VerifyHook}
	b, rendered, err := store.Ensure(ctx, req, cur)
	if err != nil {
		return nil, err
	}
	if rendered {
		cfg.Log.Info("rendered the bottle, which was stale or missing", "session", p.SessionID)
	}
	on := AfterCompaction
	switch {
	case transcript == "":
		on = Unloaded
	case p.Source == "resume":
		if live.Pointed(b.Path) {
			cfg.Log.Info("a pointer to this bottle is already in the context", "session", p.SessionID)
			return nil, nil
		}
		on = OnResume
	}
	text := Pointer(b, on, replacedSpan(b.State, live, transcript, on), cfg.MCPTools)
	var out output
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = text
	return json.Marshal(out)
}

// liveContext scans the session's transcript back to its latest
// compaction, and reports whether the session has one in any file of its
// chain. A live bottle that holds no compaction spares the scan of the part
// of the transcript it read, while that file is still the one it read.
func liveContext(transcript string, cur *bottles.Current, session string) (sources.LiveContext, bool, error) {
	var floor int64
	if cur != nil && len(cur.State.Legs) <= 1 {
		if info, err := os.Stat(transcript); err == nil {
			for _, f := range cur.State.Transcripts {
				if f.Session == session && f.Path == transcript && f.ID == sources.FileIDOf(info) && info.Size() >= f.Offset {
					floor = f.Offset
				}
			}
		}
	}
	live, err := sources.ScanLiveContext(transcript, floor)
	if err != nil {
		return live, false, err
	}
	return live, live.Compacted || (cur != nil && len(cur.State.Legs) > 1), nil
}

// replacedSpan is the part of the bottle that the latest compaction's
// summary stands for: the leg that ended at the latest compaction (after
// a compaction, on to the end of the bottle: whatever arrived since is
// part of what the model must read). A bottle written before the latest
// compaction does not mark it yet: then its last leg is that part.
func replacedSpan(st *render.State, live sources.LiveContext, transcript string, on Occasion) Span {
	if on == Unloaded { // nothing is in context: the latest leg
		return Span{lastLeg(st), st.Lines}
	}
	includes := true
	if live.Compacted {
		includes = false
		for _, f := range st.Transcripts {
			if f.Path == transcript && f.Offset > live.At {
				includes = true
			}
		}
	}
	n := len(st.Legs)
	if n == 0 {
		return Span{1, st.Lines}
	}
	if !includes || n < 2 {
		return Span{st.Legs[n-1], st.Lines}
	}
	if on == OnResume {
		return Span{st.Legs[n-2], st.Legs[n-1] - 1}
	}
	return Span{st.Legs[n-2], st.Lines}
}

// openMemory opens claude-mem's database, or returns nil if there is none
// or it cannot be read (the bottle is then judged and made without it).
// A database its writer keeps locked makes a reader wait; the open waits
// at most half the hook's deadline, which leaves the other half to answer
// without it.
func openMemory(ctx context.Context, cfg Config) *sources.ClaudeMemDB {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout/2)
	defer cancel()
	db, err := sources.OpenClaudeMemDB(ctx, sources.ClaudeMemFile(cfg.DataDir))
	if err != nil {
		if !errors.Is(err, sources.ErrNoClaudeMemDB) {
			cfg.Log.Warn("claude-mem database unreadable", "err", err)
		}
		return nil
	}
	return db
}

// transcriptOf is the session's transcript: the payload's when it is one
// under Claude Code's projects directory, else the one found there; "" if
// there is none.
func transcriptOf(cfg Config, p *Payload) string {
	transcript := p.transcriptFor(cfg.ClaudeDir)
	if transcript != "" {
		if _, err := sources.StatRegular(transcript); err != nil {
			transcript = "" // gone, or not a transcript
		}
	}
	if transcript == "" {
		transcript, _ = sources.FindTranscript(cfg.ClaudeDir, p.SessionID)
	}
	return transcript
}

// SessionEnd answers the SessionEnd hook: when the session ends because
// the user cleared it (/clear), its bottle is archived, so that the next
// compaction in that terminal does not point to a conversation the user
// put away. Other reasons leave the bottle alone. The bottle archived is
// the newer of the one on disk and one rendered from the sources now
// (see latestBottle).
func SessionEnd(ctx context.Context, cfg Config, p *Payload) error {
	cfg.defaults()
	if p.Reason != "clear" {
		return nil
	}
	transcript := transcriptOf(cfg, p)
	if sources.IsObserverSession(transcript, p.CWD, cfg.DataDir) {
		return nil // claude-mem's own session: not bottled
	}
	b := latestBottle(ctx, cfg, p.SessionID, transcript)
	moved, err := cfg.store().ArchiveLatest(p.SessionID, b)
	if err == nil && moved != "" {
		cfg.Log.Info("archived bottle of cleared session", "session", p.SessionID, "to", moved)
	}
	return err
}

// archiveRender bounds the render SessionEnd makes before archiving: half
// of SessionEndTimeout (and at most half the time the hook has left),
// leaving the rest to archive. A transcript of a few MB renders in tens of
// milliseconds; a longer one that does not render in time leaves the
// bottle on disk to be archived as it is.
const archiveRender = SessionEndTimeout / 2

// latestBottle renders the session from its sources as they are now,
// without writing it, for the archive, or returns nil if that cannot be
// done within archiveRender (or there is nothing to render). The daemon
// renders a moment after each write (later on a busy machine), so the
// bottle on disk may lack the last turn; archived as it is, the daemon's
// next render, finding content the archive lacks, would bring the cleared
// session back as live.
func latestBottle(ctx context.Context, cfg Config, session, transcript string) *render.Bottle {
	budget := archiveRender
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(deadline)/2)
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	done := make(chan *render.Bottle, 1)
	// Left behind at the deadline, the render writes nothing: it ends
	// with ctx (its database reads) or with the hook's process, which
	// exits right after the archive.
	go func() {
		db := openMemory(ctx, cfg)
		if db != nil {
			defer db.Close()
		}
		req := bottles.Request{SessionID: session, Transcript: transcript, ClaudeDir: cfg.ClaudeDir, ClaudeMem: db, Rules: cfg.rules()}
		b, err := cfg.store().FromDisk(ctx, req)
		if err != nil {
			b = nil
		}
		done <- b
	}()
	select {
	case b := <-done:
		return b
	case <-ctx.Done():
		return nil
	}
}
