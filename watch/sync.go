package watch

import (
	"context"
	"time"
)

// syncBottles syncs the bottles written, Config.SyncDelay after the first write
// of each batch, and removes the batch's crash marker once no bottle has
// been written for Config.MarkerQuiet after the last sync, until ctx is
// done (Run syncs the last ones and removes the marker).
func (d *Daemon) syncBottles(ctx context.Context) {
	var quiet <-chan time.Time // after a sync: fires once the batch was quiet for MarkerQuiet
	for {
		select {
		case <-ctx.Done():
			return
		case <-quiet:
			quiet = nil
			if err := d.batch.Unmark(); err != nil {
				d.log.Warn("remove the unsynced bottles' marker", "err", err)
				quiet = time.After(d.cfg.MarkerQuiet) // try again
			}
			continue
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
		quiet = time.After(d.cfg.MarkerQuiet)
	}
}
