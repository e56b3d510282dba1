package bottles

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bottled-dev/bottled/safefile"
)

// Redactions and the search index. When a bottle is rendered again because
// its transcript was rewritten (a secret removed in place, the file
// replaced), or by other redaction rules, or is redacted in place, the
// words the old bottle showed must leave the search index's files too, and
// the index (bottled/index) only marks deleted rows, so it must be purged.
// The store itself asks: Write and Put, a Batch's, and ResealFile leave a
// marker in the bottles directory before they rename such a bottle into
// place (see write), and say so (Result.AskedPurge; ResealFile's new
// bytes), so that a process that keeps the index open (the daemon)
// purges it at once; otherwise the next process to bring the whole index
// up to date purges it and removes the marker.
//
// The marker is on disk before the bottle that needs it: a process killed
// right after the rename leaves both, never a fresh bottle whose old words
// nothing asks to purge. The marker is written, and the bottle renamed, in
// one hold of the bottles directory's lock, and a purge takes the marker
// under the same lock (TakePurge): a purge that took a marker lists the
// bottles after the rename it was left for, and takes that bottle in. A
// marker already there is given a new token, unsynced (the one it replaces
// is on disk), so that a purge that took it before this rename does not
// remove it; a new one is written durably, file and directory.
//
// The marker goes only once the purge is on disk: a process killed while
// purging (kill -9, a crash of the machine) leaves it, and the next purges
// again. Each request is a new token, so that a purge removes only the
// request it took: one left while it ran (another redaction, whose bottle
// its listing may have missed) stays for the next. Done takes the lock
// too, which makes "is it still the request I took" and the removal one
// step.
const purgeName = ".purge-index"

// PurgeMarker is the path of the marker in the bottles directory dir.
func purgeMarker(dir string) string { return filepath.Join(dir, purgeName) }

// AskPurge leaves a new marker in the bottles directory dir, durably.
func askPurge(dir string) error {
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	return leavePurge(dir)
}

// leavePurge leaves a new marker in the bottles directory dir, whose lock
// the caller holds: on disk (file and directory synced) when there was
// none, else as a new token over the one on disk.
func leavePurge(dir string) error {
	var token [16]byte
	rand.Read(token[:])
	data := []byte(hex.EncodeToString(token[:]) + "\n")
	path := purgeMarker(dir)
	if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
		if err := safefile.Write(path, data); err != nil {
			return fmt.Errorf("ask for a purge of the search index: %w", err)
		}
		return nil
	}
	tmp, _, err := safefile.WriteTemp(dir, safefile.TempPrefix+purgeName+"-*", data, false)
	if err == nil {
		if err = os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("ask for a purge of the search index: %w", err)
	}
	return nil
}

// A PurgeRequest is the marker as a purge took it.
type PurgeRequest struct {
	dir   string
	token []byte
}

// TakePurge returns the request the marker in the bottles directory dir
// holds, and false if none is asked, under the lock writers take, so that
// the bottle a marker was left for is in place once it is taken. The purge
// that takes it must be done before it calls Done.
func takePurge(dir string) (PurgeRequest, bool) {
	if _, err := os.Lstat(purgeMarker(dir)); err != nil {
		return PurgeRequest{}, false // the common case: no lock taken
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return PurgeRequest{}, false
	}
	token, err := os.ReadFile(purgeMarker(dir))
	unlock()
	if err != nil {
		return PurgeRequest{}, false // none (or none this process may read: nothing it can purge for)
	}
	return PurgeRequest{dir: dir, token: token}, true
}

// Done removes the marker, once the purge it asked for is durable, unless
// it holds another request now (asked again meanwhile).
func (r PurgeRequest) Done() error {
	unlock, err := lockDir(r.dir)
	if err != nil {
		return err
	}
	defer unlock()
	now, err := os.ReadFile(purgeMarker(r.dir))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && string(now) != string(r.token)) {
		return nil // removed by another purge, or asked again
	}
	if err == nil {
		err = os.Remove(purgeMarker(r.dir))
	}
	if err != nil {
		return fmt.Errorf("remove the purge marker: %w", err)
	}
	return safefile.SyncDir(r.dir)
}
