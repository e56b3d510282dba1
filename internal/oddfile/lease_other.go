//go:build !linux

package oddfile

import (
	"os"
	"testing"
)

// Lease skips the test: file leases are Linux's.
func Lease(tb testing.TB, path string) *os.File {
	tb.Skip("file leases are Linux's")
	return nil
}
