package bottles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// Durability. A bottle is a cache: every reader validates it from its state
// line against the sources, and a bottle that is stale or missing is simply
// rendered again. What must never happen is a bottle that a reader takes
// for fresh while its bytes are not what was rendered, which a crash of the
// machine (not of a process: the page cache survives that) can cause when
// a renamed file's data had not reached the disk.
//
// A writer of one bottle (a hook, the render command) syncs it before the
// rename and the directory after, as before. A writer of many (the
// daemon's catch-up writes hundreds) uses a Batch instead, which costs no
// sync per bottle:
//
//  1. before the first write of a batch, it writes a marker file in the
//     bottles directory, naming this boot of the machine and the time,
//     and syncs it (and the directory);
//  2. bottles are written and put in place without syncing (exchanged
//     with the bottle before where the system can, safefile.Replace, so
//     that a bottle replaced before any sync never reaches the disk);
//  3. Sync, once no bottle has been written for a while (the daemon's
//     Config.SyncQuiet), syncs every bottle written and the directory
//     (on Linux, many at once with one syncfs of their file system, see
//     syncOneByOne);
//  4. Unmark, right after, removes the marker if every bottle written is
//     synced.
//
// The syncs wait for the writes to stop, and the marker stays while they
// come, because a live session's bottle is replaced every few seconds:
// synced each time, every version of it is written to the disk (for a
// long session, megabytes an append), and making the marker again is a
// new file and a sync, which on some file systems costs a millisecond of
// CPU or more (ext4 without a journal, see README). A crash while the
// marker is there makes every bottle modified since its time be rendered
// again, a few more than strictly needed, never fewer.
//
// A marker from another boot means the machine went down in the middle of
// a batch: every bottle modified since the marker's time may be damaged,
// so Check calls it stale and Write replaces it whatever its state line
// says, until the daemon has rendered them all again and its next Sync
// removes the marker. A marker of this boot means nothing was lost (a
// process died, its writes are in the page cache), and is ignored.
const (
	markerName = ".unsynced"
	// markerSlack covers the coarse grain of file times: a bottle written
	// just before the marker's time is suspected too.
	markerSlack = 2 * time.Second
)

// marker is the content of the marker file.
type marker struct {
	Boot  string    `json:"boot"`
	Since time.Time `json:"since"`
}

// bootID identifies this boot of the machine ("" where unknown; then
// every marker is taken for one of another boot, and Batch syncs each
// write as Write does).
var bootID = sync.OnceValue(readBootID)

// readMarker returns the marker in dir, nil if there is none.
func readMarker(dir string) *marker {
	data, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		return nil
	}
	var m marker
	if json.Unmarshal(data, &m) != nil {
		return &marker{} // unreadable: assume the worst, from the start of time
	}
	return &m
}

// crashed returns the time since which bottles in dir may be damaged by a
// crash of the machine during a batch, and false if none may be.
func crashed(dir string) (time.Time, bool) {
	m := readMarker(dir)
	if m == nil || (m.Boot != "" && m.Boot == bootID()) {
		return time.Time{}, false
	}
	return m.Since.Add(-markerSlack), true
}

// UnsyncedMarker is the path of the marker file in the bottles directory
// (see above): there while a Batch writes bottles, until they are synced
// and no more come (Unmark), or until every bottle a crash of the machine
// may have damaged was rendered again.
func (s *Store) UnsyncedMarker() string { return filepath.Join(s.Dir, markerName) }

// damaged reports whether the bottle at path was modified during a batch
// that a crash of the machine interrupted, as crash (crashed, or what a
// Batch knows) tells.
func damaged(path string, crash func() (time.Time, bool)) bool {
	since, ok := crash()
	if !ok {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && !info.ModTime().Before(since)
}

// A Batch writes bottles to one directory without syncing each (see
// above). Write and Sync may be called from several goroutines.
type Batch struct {
	dir string
	now func() time.Time // the marker's time

	// mu guards the fields below.
	mu       sync.Mutex
	marked   bool            // a marker of this batch is on disk
	recovery bool            // the marker on disk is from a crash; keep it until Recovered
	since    time.Time       // with recovery: bottles modified since may be damaged
	inflight int             // writes between marking and renaming
	writes   uint64          // writes renamed since the batch began
	synced   uint64          // of those, how many the last Sync made durable
	pending  map[string]bool // bottles renamed and not synced yet
	// Dirty receives a value (capacity 1) when a write leaves something
	// to sync.
	Dirty chan struct{}
}

// NewBatch returns a batch writing into the store without syncing each
// bottle. A marker left there by a crash of the machine is kept until
// Recovered.
func (s *Store) NewBatch() *Batch {
	since, crash := crashed(s.Dir)
	return &Batch{dir: s.Dir, now: s.Now, recovery: crash, since: since, pending: map[string]bool{}, Dirty: make(chan struct{}, 1)}
}

// crashed is the crash the batch knows of (see the package function).
func (b *Batch) crashed() (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.since, b.recovery
}

// Damaged reports whether a crash of the machine may have damaged bottles
// in the batch's directory (they are stale until rendered again).
func (b *Batch) Damaged() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.recovery
}

// Recovered says every bottle a crash may have damaged was rendered
// again: the next Sync removes the crash's marker.
func (b *Batch) Recovered() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recovery = false
}

// Put is Store.Put without the syncs, under the batch's marker.
func (b *Batch) Put(bt *render.Bottle, rewritten bool) (Result, error) {
	if bootID() == "" {
		return writeDurable(b.dir, bt, rewritten)
	}
	if err := b.begin(); err != nil {
		return Result{}, err
	}
	r, err := write(b.dir, bt, rewritten, false, b.crashed)
	b.mu.Lock()
	b.inflight--
	if r.Outcome == Written && err == nil {
		b.writes++
		b.pending[BottlePath(b.dir, bt.State.Session)] = true
		select {
		case b.Dirty <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
	return r, err
}

// begin puts the batch's marker on disk if it is not there, and counts a
// write in flight.
func (b *Batch) begin() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.marked {
		if _, err := os.Stat(filepath.Join(b.dir, markerName)); err != nil {
			b.marked = false // removed with the directory: made again
		}
	}
	if !b.marked && !b.recovery {
		if err := safefile.MkdirPrivate(b.dir); err != nil {
			return err
		}
		data, _ := json.Marshal(marker{Boot: bootID(), Since: b.now()})
		if err := safefile.Write(filepath.Join(b.dir, markerName), data); err != nil {
			return err
		}
		b.marked = true
	}
	b.inflight++
	return nil
}

// Sync makes every bottle the batch wrote durable. The batch's own marker
// stays, for the writes to come (Unmark removes it); the marker a crash
// of the machine left, or a process of this boot killed in a batch, goes
// once the batch has recovered, if nothing was written meanwhile.
func (b *Batch) Sync() error {
	b.mu.Lock()
	pending, writes := b.pending, b.writes
	b.pending = map[string]bool{}
	b.mu.Unlock()
	var err error
	if len(pending) > 0 {
		err = syncWritten(b.dir, pending)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		for path := range pending {
			b.pending[path] = true // try again next time
		}
		return err
	}
	b.synced = max(b.synced, writes)
	if b.marked || b.writes != writes || b.inflight > 0 || b.recovery || readMarker(b.dir) == nil {
		return nil
	}
	return b.removeMarker()
}

// Pending is how many bottles the batch wrote that no Sync has made
// durable yet.
func (b *Batch) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// Unmark removes the batch's marker if every bottle it wrote is synced
// and none is being written; otherwise it leaves it, for the next Sync
// and Unmark. A caller calls it once writes have stopped for a while.
func (b *Batch) Unmark() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.marked || b.writes != b.synced || b.inflight > 0 || len(b.pending) > 0 || b.recovery {
		return nil
	}
	return b.removeMarker()
}

// removeMarker removes the marker in the batch's directory, with b.mu
// held (so that no write begins under a marker going away).
func (b *Batch) removeMarker() error {
	if err := os.Remove(filepath.Join(b.dir, markerName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", markerName, err)
	}
	b.marked = false
	return safefile.SyncDir(b.dir)
}

// syncEach makes the bottles in pending durable one by one, then their
// directory dir, for their names.
func syncEach(dir string, pending map[string]bool) error {
	var errs []error
	for path := range pending {
		if err := safefile.SyncFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, safefile.SyncDir(dir))...)
}
