package watch

import (
	"context"
	"time"
)

// syncBottles syncs the bottles written once none has been written for
// Config.SyncQuiet (or at once when asked, syncNow), then removes the
// batch's crash marker, until ctx is done (Run syncs the last ones and
// removes the marker). A failed sync or removal is tried again after
// another SyncQuiet.
func (d *Daemon) syncBottles(ctx context.Context) {
	var quiet <-chan time.Time // fires once no bottle was written for SyncQuiet
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.batch.Dirty:
			quiet = time.After(d.cfg.SyncQuiet)
			continue
		case <-d.syncNow:
		case <-quiet:
		}
		quiet = nil
		if !d.syncBatch() {
			quiet = time.After(d.cfg.SyncQuiet)
		}
	}
}

// syncBatch syncs the bottles the batch wrote and removes its crash
// marker, as the syncer does once the batch is quiet and Run does as it
// stops, and reports whether both were done (a failure is logged).
func (d *Daemon) syncBatch() bool {
	if err := d.batch.Sync(); err != nil {
		d.log.Warn("sync bottles", "err", err)
		return false
	}
	if err := d.batch.Unmark(); err != nil {
		d.log.Warn("remove the unsynced bottles' marker", "err", err)
		return false
	}
	return true
}
