package render

import (
	"os"
	"path/filepath"
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
const purgeName = ".purge-index"

// PurgeMarker is the path of the marker in the bottles directory dir.
func PurgeMarker(dir string) string { return filepath.Join(dir, purgeName) }

// AskPurge leaves the marker in the bottles directory dir.
func AskPurge(dir string) error {
	f, err := os.OpenFile(PurgeMarker(dir), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}
