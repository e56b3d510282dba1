package inject

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"time"

	"bottled/render"
	"bottled/sources"
)

// DefaultTimeout bounds an inline render in the SessionStart hook. Claude
// Code waits for the hook; a compaction should not stall on bottled.
const DefaultTimeout = 5 * time.Second

// Config is what the hooks need to know.
type Config struct {
	ClaudeDir string
	DataDir   string
	Timeout   time.Duration // for an inline render
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
	dir := render.BottlesDir(cfg.DataDir)
	transcript := p.transcriptFor(cfg.ClaudeDir)
	if transcript != "" {
		if _, err := os.Stat(transcript); err != nil {
			transcript = ""
		}
	}
	if transcript == "" {
		transcript, _ = sources.FindTranscript(cfg.ClaudeDir, p.SessionID)
	}
	if sources.IsObserverSession(transcript, p.CWD, cfg.DataDir) {
		return nil, nil // claude-mem's own session: not bottled
	}
	path := render.BottlePath(dir, p.SessionID)
	var live sources.LiveContext
	if transcript != "" {
		var compacted bool
		var err error
		if live, compacted, err = liveContext(transcript, path, p.SessionID); err != nil {
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
	fresh, st, why, err := render.Check(dir, p.SessionID, transcript, render.CursorNow(ctx, db, p.SessionID), render.VerifyHook)
	if err == nil && fresh == render.Cleared {
		fresh, path = render.Fresh, render.ArchivedPath(dir, p.SessionID)
	}
	if err != nil || fresh != render.Fresh {
		cfg.Log.Info("rendering bottle", "session", p.SessionID, "freshness", fresh, "why", why, "err", err)
		ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		if path, st, err = renderNow(ctx, cfg, p.SessionID, transcript, db); err != nil {
			return nil, err
		}
	}
	on := AfterCompaction
	switch {
	case transcript == "":
		on = Unloaded
	case p.Source == "resume":
		if live.Pointed(path) {
			cfg.Log.Info("a pointer to this bottle is already in the context", "session", p.SessionID)
			return nil, nil
		}
		on = OnResume
	}
	text, err := Pointer(path, st, on, replacedSpan(st, live, transcript, on), cfg.MCPTools)
	if err != nil {
		return nil, err
	}
	var out output
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = text
	return json.Marshal(out)
}

// liveContext scans the session's transcript back to its latest
// compaction, and reports whether the session has one in any file of its
// chain. A bottle that holds no compaction and whose transcript still
// holds what it read spares the scan of the part it covers.
func liveContext(transcript, bottle, session string) (sources.LiveContext, bool, error) {
	var floor int64
	st, _ := render.ReadState(bottle)
	if st != nil && len(st.Legs) <= 1 {
		for _, f := range st.Transcripts {
			if f.Session == session && f.Path == transcript {
				if ok, err := f.Holds(); err == nil && ok {
					floor = f.Offset
				}
			}
		}
	}
	live, err := sources.ScanLiveContext(transcript, floor)
	if err != nil {
		return live, false, err
	}
	return live, live.Compacted || (st != nil && len(st.Legs) > 1), nil
}

// replacedSpan is the part of the bottle that the latest compaction's
// summary stands for: the leg that ended at the latest compaction (after
// a compaction, on to the end of the bottle: whatever arrived since is
// part of what the model must read). A bottle written before the latest
// compaction does not mark it yet: then its last leg is that part.
func replacedSpan(st *render.State, live sources.LiveContext, transcript string, on Occasion) Span {
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
func openMemory(ctx context.Context, cfg Config) *sources.MemoryDB {
	db, err := sources.OpenMemoryDB(ctx, sources.MemoryFile(cfg.DataDir))
	if err != nil {
		if !errors.Is(err, sources.ErrNoMemoryDB) {
			cfg.Log.Warn("claude-mem database unreadable", "err", err)
		}
		return nil
	}
	return db
}

// renderNow renders and writes the session's bottle, returning the path of
// the bottle to point to and its state. A concurrent render (the daemon)
// may have written a newer bottle meanwhile: then that one is pointed to;
// so is the bottle on disk when it shows claude-mem records the database
// cannot give now.
func renderNow(ctx context.Context, cfg Config, id, transcript string, db *sources.MemoryDB) (string, *render.State, error) {
	req := render.Request{SessionID: id, Transcript: transcript, ClaudeDir: cfg.ClaudeDir, Memory: db}
	dir := render.BottlesDir(cfg.DataDir)
	b, outcome, err := render.WriteFromDisk(ctx, dir, req, cfg.Now, time.Local)
	if err != nil {
		return "", nil, err
	}
	path := outcome.Path(dir, id)
	if outcome == render.Written {
		return path, &b.State, nil
	}
	st, err := render.ReadState(path)
	if err != nil {
		return "", nil, err
	}
	return path, st, nil
}

// SessionEnd answers the SessionEnd hook: when the session ends because
// the user cleared it (/clear), its bottle is archived, so that the next
// compaction in that terminal does not point to a conversation the user
// put away. Other reasons leave the bottle alone.
func SessionEnd(cfg Config, p *Payload) error {
	cfg.defaults()
	if p.Reason != "clear" {
		return nil
	}
	moved, err := render.Archive(render.BottlesDir(cfg.DataDir), p.SessionID, cfg.Now())
	if err == nil && moved != "" {
		cfg.Log.Info("archived bottle of cleared session", "session", p.SessionID, "to", moved)
	}
	return err
}
