package watch

import (
	"context"
	"errors"
	"time"

	"github.com/bottled-dev/bottled/index"
)

// keepIndex opens the search index, and opens it again (building it here,
// in the background) whenever a render found it must be built again, until
// ctx is done. An index that cannot be opened (a full disk, a permission)
// is tried again with the renders' backoff, so that it comes back once the
// fault is fixed, without a restart. Run closes it after the renders in
// flight have finished.
func (d *Daemon) keepIndex(ctx context.Context) {
	failures := 0
	var said string // the failure last logged as a warning
	for {
		var retry *time.Timer
		began := d.cfg.Now()
		err := d.openIndex(ctx)
		took := d.cfg.Now().Sub(began)
		if err == nil {
			failures, said = 0, ""
		} else if ctx.Err() == nil {
			failures++
			wait := d.cfg.indexRetryWait(failures, took)
			// A fault that stays is logged once, not every few minutes.
			if err.Error() != said {
				d.log.Warn("search index unavailable; bottles are written as usual", "err", err, "retry_in", wait)
				said = err.Error()
			} else {
				d.log.Debug("search index still unavailable", "err", err, "retry_in", wait)
			}
			retry = time.NewTimer(wait)
			d.noteSearch(Search{State: SearchUnavailable, Error: err.Error(), Retry: d.cfg.Now().Add(wait)})
		}
		if !d.waitIndexTurn(ctx, retry) {
			return
		}
		// An index lost again and again (deleted, damaged) is not built
		// more often than Config.IndexIdleFactor allows either.
		if !sleep(ctx, began.Add(time.Duration(d.cfg.IndexIdleFactor)*took).Sub(d.cfg.Now())) {
			return
		}
	}
}

// sleep waits for d, or until ctx is done (then it reports false).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// waitIndexTurn waits until the index should be opened again: retry fires
// (nil: never), or a render asks; meanwhile it purges the index when
// asked. It reports false once ctx is done.
func (d *Daemon) waitIndexTurn(ctx context.Context, retry *time.Timer) bool {
	var fired <-chan time.Time
	if retry != nil {
		defer retry.Stop()
		fired = retry.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-fired:
			return true
		case <-d.reopenIndex:
			d.closeIndex()
			return true
		case <-d.purgeNow:
			if !sleep(ctx, d.purgeDue.Sub(d.cfg.Now())) {
				return false
			}
			// An index not open now is purged by openIndex's sync.
			if ix := d.index.Load(); ix != nil {
				d.purge(ctx, ix)
			}
		}
	}
}

// openIndex opens bottled's search index (building it from the bottles if
// it is missing, of an older format or corrupt) and brings it up to date
// with bottles written while the daemon was not running. Run runs it in
// the background so that a first build does not hold up rendering; until it
// is done, renders leave the index alone and readers sync it themselves.
func (d *Daemon) openIndex(ctx context.Context) error {
	began := d.cfg.Now()
	d.noteSearch(Search{State: SearchOpening})
	if err := index.RemoveOtherFormats(d.cfg.DataDir); err != nil {
		d.log.Warn("an older bottled's search index is left in the data directory", "err", err)
	}
	progress := func(done, total int64) {
		d.rec.update(func(st *Status) {
			if st.Search.State == SearchOpening {
				st.Search.Done, st.Search.Total = done, total
			}
		})
	}
	ix, err := index.Open(ctx, d.cfg.DataDir, index.Options{Location: time.Local, Progress: progress})
	if err != nil {
		return err
	}
	if err := d.syncIndex(ctx, ix); err != nil {
		ix.Close()
		return err
	}
	d.index.Store(ix)
	// A bottle written between the sync and the store was not indexed by
	// its render: look once more.
	if err := d.syncIndex(ctx, ix); err != nil && ctx.Err() == nil {
		d.log.Warn("sync search index", "err", err)
	}
	d.log.Info("search index ready", "took", d.cfg.Now().Sub(began).Round(time.Millisecond))
	d.noteSearch(Search{State: SearchReady})
	return nil
}

// syncIndex syncs ix for openIndex, which purges it if asked. A purge that
// fails leaves the index usable: it is tried again as the keeper's purges
// are (purged), and only another error is returned.
func (d *Daemon) syncIndex(ctx context.Context, ix *index.Index) error {
	began := d.cfg.Now()
	err := ix.Sync(ctx)
	if errors.Is(err, index.ErrPurge) {
		d.purged(ctx, err, d.cfg.Now().Sub(began))
		return nil
	}
	return err
}

// purgeAsked wakes the index keeper for the purge marker the store left
// as it replaced a session's bottle (bottles.Result.AskedPurge,
// ResealFile): the search index must forget, in its files as in its
// results, what the bottle no longer shows (a redaction). The marker
// outlives a crash; the keeper purges the index in the background, paced
// (see purged). A marker another process left is found by the rescan.
func (d *Daemon) purgeAsked(session string) {
	d.log.Debug("bottle replaced by one that may not show what it showed; purging the search index", "session", session)
	signal(d.purgeNow)
}

// purge syncs the index, which purges it if the marker asks (index.Sync).
// Called by the keeper.
func (d *Daemon) purge(ctx context.Context, ix *index.Index) {
	began := d.cfg.Now()
	err := ix.Sync(ctx)
	d.purged(ctx, err, d.cfg.Now().Sub(began))
}

// purged sets, after a sync that purged the index (or failed to) in took,
// when the next purge may start: a purge rewrites the whole index (seconds
// for hundreds of megabytes), and transcripts rewritten over and over must
// not keep a core busy, so purges are paced like builds (Config.IndexIdleFactor).
// A purge that failed (a full disk, another process that kept reading the
// index) leaves the marker and is tried again with the retries' backoff
// (an index found unusable is built again by the sync, which holds only
// what the bottles hold now); so is one that could not start because
// another process held the index's build lock, which is no fault and is
// not warned of. Called by the keeper.
func (d *Daemon) purged(ctx context.Context, err error, took time.Duration) {
	if err == nil {
		d.purgeFailures = 0
		d.purgeDue = d.cfg.Now().Add(time.Duration(d.cfg.IndexIdleFactor) * took)
		d.log.Info("search index synced after a transcript was rewritten, and purged if still asked", "took", took.Round(time.Millisecond))
		return
	}
	if ctx.Err() != nil {
		return
	}
	d.purgeFailures++
	wait := d.cfg.indexRetryWait(d.purgeFailures, took)
	if errors.Is(err, index.ErrPurgeBusy) {
		d.log.Debug("purge of the search index waits for another process", "err", err, "retry_in", wait)
	} else {
		d.log.Warn("purge the search index of what rewritten transcripts no longer say", "err", err, "retry_in", wait)
	}
	d.purgeDue = d.cfg.Now().Add(wait)
	signal(d.purgeNow)
}

// indexBottle updates the search index with a bottle the daemon just
// wrote: only the blocks that changed are indexed. A failure is logged and
// costs nothing else; readers sync the index before each query.
func (d *Daemon) indexBottle(ctx context.Context, session string, bottle []byte) {
	ix := d.index.Load()
	if ix == nil {
		return
	}
	ctx, done := d.untilStopped(ctx)
	defer done()
	err := ix.Put(ctx, session+".md", bottle)
	switch {
	case errors.Is(err, index.ErrUnusable):
		// Building it again takes a while: not in a render. Until the
		// keeper has, Put keeps saying so, at no cost.
		d.log.Debug("search index must be built again; asking for it in the background", "err", err)
		signal(d.reopenIndex)
	case err != nil && ctx.Err() != nil:
		d.log.Debug("the daemon is stopping: the bottle is indexed at the next start", "session", session, "err", err)
	case err != nil:
		d.log.Warn("index bottle", "session", session, "err", err)
	}
}

// checkIndex makes sure the search index the daemon keeps is still on
// disk: a directory deleted under it would leave the daemon alone with
// files it holds open and no other process sees, saying "index ready"
// until its next write. Found gone (or unreadable), it is said once, in
// the log and in status, and the keeper opens it again, building it if it
// must. Called by the file watcher, at the rescan and when the index's
// directory goes.
func (d *Daemon) checkIndex() {
	ix := d.index.Load()
	if ix == nil || d.lostIndex.Load() == ix {
		return // not open, or already found gone
	}
	err := ix.Verify()
	if err == nil || d.index.Load() != ix {
		return
	}
	d.lostIndex.Store(ix)
	d.log.Warn("the search index is gone or cannot be read; opening it again, building it if it must", "err", err)
	d.noteSearch(Search{State: SearchUnavailable, Error: "its files are gone or cannot be read (" + err.Error() + "); opening it again"})
	signal(d.reopenIndex)
}

func (d *Daemon) closeIndex() {
	if ix := d.index.Swap(nil); ix != nil {
		ix.Close()
	}
}

// noteSearch records the search index's new state for status.
func (d *Daemon) noteSearch(s Search) {
	s.Since = d.cfg.Now()
	d.rec.update(func(st *Status) { st.Search = s })
}

// untilStopped is ctx, ended also once the daemon stops. A render in
// flight at shutdown finishes (its context is not the daemon's), but its
// bottle's index update need not wait for another process's write to the
// index then (up to SQLite's busy timeout, 10 s, which a stop waited
// out): the index is synced with the bottles when the daemon next starts.
func (d *Daemon) untilStopped(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.stopping == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(d.stopping, cancel)
	return ctx, func() { stop(); cancel() }
}
