package watch

import (
	"context"
	"time"
)

// syncDelay is how long after a bottle is written it is synced to disk
// (with the others written meanwhile; see bottles.Batch): the window in
// which a crash of the machine makes bottles be rendered again.
const syncDelay = time.Second

// syncBottles syncs the bottles written, syncDelay after the first write
// of each batch, until ctx is done (Run syncs the last ones).
func (d *Daemon) syncBottles(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.batch.Dirty:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(syncDelay):
		}
		if err := d.batch.Sync(); err != nil {
			d.log.Warn("sync bottles", "err", err)
			signal(d.batch.Dirty) // try again
		}
	}
}
