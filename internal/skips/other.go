//go:build !unix

package skips

// lock does nothing where there is no flock: at worst a reason is written
// twice.
func lock(string) (unlock func()) { return func() {} }

// gone cannot tell here: a run directory is kept.
func gone(int) bool { return false }
