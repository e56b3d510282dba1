//go:build !linux && !darwin

package bottles

// readBootID knows no boot id here: a Batch then syncs every write.
func readBootID() string { return "" }
