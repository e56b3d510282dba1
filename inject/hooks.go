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

// SessionStart answers the SessionStart hook. For source compact or resume
// it makes sure the session's bottle is fresh, rendering it within the
// timeout if it is stale or missing, and returns the JSON pointing to it.
// For any other source, or when there is no bottle to point to, it returns
// nil: the hook prints nothing.
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
	db := openMemory(ctx, cfg)
	if db != nil {
		defer db.Close()
	}
	path := render.BottlePath(dir, p.SessionID)
	fresh, st, why, err := render.Check(dir, p.SessionID, transcript, render.CursorNow(ctx, db, p.SessionID), render.VerifyHook)
	if err != nil || fresh != render.Fresh {
		cfg.Log.Info("rendering bottle", "session", p.SessionID, "freshness", fresh, "why", why, "err", err)
		ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		if path, st, err = renderNow(ctx, cfg, p.SessionID, transcript, db); err != nil {
			return nil, err
		}
	}
	text, err := Pointer(path, st)
	if err != nil {
		return nil, err
	}
	var out output
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = text
	return json.Marshal(out)
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
