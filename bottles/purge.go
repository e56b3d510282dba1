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
// replaced), the words the old bottle showed must leave the search index's
// files too, and the index (bottled/index) only marks deleted rows, so it
// must be purged. The writer of such a bottle (WriteFromDisk, for the hook,
// the render command and the MCP server; the daemon, which reads
// transcripts incrementally, by itself) leaves a marker in the bottles
// directory, and the next process to bring the whole index up to date
// purges it and removes the marker.
//
// The marker is the request, and it goes only once the purge is on disk:
// a process killed while purging (kill -9, a crash of the machine) leaves
// it, and the next purges again. Each request is a new marker with a token
// of its own, so that a purge removes only the request it took: one left
// while it ran (another redaction, whose bottle its listing may have
// missed) stays for the next. Asking and removing take the bottles
// directory's lock, which makes "is it still the request I took" and the
// removal one step.
const purgeName = ".purge-index"

// PurgeMarker is the path of the marker in the bottles directory dir.
func purgeMarker(dir string) string { return filepath.Join(dir, purgeName) }

// AskPurge leaves a new marker in the bottles directory dir, durably.
func askPurge(dir string) error {
	var token [16]byte
	rand.Read(token[:])
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	return safefile.Write(purgeMarker(dir), []byte(hex.EncodeToString(token[:])+"\n"))
}

// A PurgeRequest is the marker as a purge took it.
type PurgeRequest struct {
	dir   string
	token []byte
}

// TakePurge returns the request the marker in the bottles directory dir
// holds, and false if none is asked. The purge that takes it must be done
// before it calls Done.
func takePurge(dir string) (PurgeRequest, bool) {
	token, err := os.ReadFile(purgeMarker(dir))
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
