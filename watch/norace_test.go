//go:build !race

package watch_test

const raceEnabled = false
