package bottles

import (
	"context"
	"log/slog"
	"time"

	"github.com/bottled-dev/bottled/redact"
)

// Reader is what an interface that reads bottles for someone while it
// runs (the MCP server, the web view) knows to read one: where the
// transcripts and the bottles are, the clock and the time zone bottles are
// rendered at, where a redaction patterns file it cannot use is said, and
// how long a render before a read may take.
type Reader struct {
	ClaudeDir string
	DataDir   string
	Location  *time.Location   // time.Local if nil
	Now       func() time.Time // time.Now if nil
	Log       *slog.Logger     // nothing is logged if nil
	// RenderTimeout bounds a render before a read (the default given to
	// Defaults if 0).
	RenderTimeout time.Duration
}

// Defaults gives the fields r leaves zero their defaults, renderTimeout
// for RenderTimeout.
func (r *Reader) Defaults(renderTimeout time.Duration) {
	if r.Location == nil {
		r.Location = time.Local
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if r.RenderTimeout <= 0 {
		r.RenderTimeout = renderTimeout
	}
}

// Store is the data directory's bottles, at the reader's clock and zone.
func (r *Reader) Store() *Store { return Open(r.DataDir, r.Now, r.Location) }

// FindSession resolves a session id or the start of one
// (Store.FindSession); a start several sessions have is an
// *AmbiguousError.
func (r *Reader) FindSession(arg string) (string, error) {
	return r.Store().FindSession(r.ClaudeDir, arg)
}

// EnsureRead reads the bottle of session id, rendered first, within
// RenderTimeout, if it is stale or missing and its session was not cleared
// (Store.EnsureRead): when that fails, the bottle on disk comes with the
// error, if there is one.
func (r *Reader) EnsureRead(ctx context.Context, id string) (*Current, error) {
	return r.Store().EnsureRead(ctx, ReadRequest{SessionID: id, ClaudeDir: r.ClaudeDir, Timeout: r.RenderTimeout, Rules: r.rules()})
}

// rules are the data directory's redaction rules, read for each render:
// the user may change them while the reader runs (LoadRulesOrWarn).
func (r *Reader) rules() *redact.Rules { return LoadRulesOrWarn(r.DataDir, r.Log) }
