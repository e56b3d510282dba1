//go:build !linux && !darwin

package main

import "os"

// ttyColumns is 0 where bottled does not ask the terminal: rows are not cut.
func ttyColumns(*os.File) int { return 0 }
