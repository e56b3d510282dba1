package index

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// ReaderBuildFor bounds the building OpenForReader does before the index
// answers, when it must be built (or its build was left unfinished and no
// process is at it): long enough for the common case, short of the
// patience of the person or the model waiting for the first answer, which
// then comes from the newest sessions indexed so far, saying so.
const ReaderBuildFor = 2 * time.Second

// OpenForReader opens the index of dataDir, whose bottles were rendered
// in loc, for a reader that keeps it open while it answers (the MCP
// server, the web view): it builds for at most ReaderBuildFor (the reader
// finishes the build in the background, FinishBuild), and it watches the
// bottles, so that a query syncs only those that changed. A watch that
// cannot be set is logged: without it every query looks at every bottle's
// file, slower, still right.
func OpenForReader(ctx context.Context, dataDir string, loc *time.Location, log *slog.Logger) (*Index, error) {
	ix, err := Open(ctx, dataDir, Options{Location: loc, BuildFor: ReaderBuildFor})
	if err != nil {
		return nil, fmt.Errorf("open the search index: %w", err)
	}
	if err := ix.Watch(); err != nil {
		log.Warn("watch bottles for the index", "err", err)
	}
	return ix, nil
}

// FinishBuild is Build for a reader that answers from what is indexed
// whatever becomes of the build: a failure is logged (unless ctx ended,
// which is how the reader stops it), and the next Open or Build goes on.
func (ix *Index) FinishBuild(ctx context.Context, log *slog.Logger) {
	if err := ix.Build(ctx); err != nil && ctx.Err() == nil {
		log.Warn("build the search index", "err", err)
	}
}
