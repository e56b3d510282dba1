package watch

import (
	"context"
	"time"
)

// syncBottles syncs the bottles written, Config.SyncDelay after the first write
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
		case <-time.After(d.cfg.SyncDelay):
		}
		if err := d.batch.Sync(); err != nil {
			d.log.Warn("sync bottles", "err", err)
			signal(d.batch.Dirty) // try again
		}
	}
}
