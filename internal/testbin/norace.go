//go:build !race

package testbin

// Race reports that the tests were built with the race detector, and so
// are the binaries Binaries builds.
const Race = false
