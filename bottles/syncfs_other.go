//go:build !linux

package bottles

// syncWritten makes the bottles a Batch wrote in dir (pending) durable,
// with their names.
func syncWritten(dir string, pending map[string]bool) error { return syncEach(dir, pending) }
