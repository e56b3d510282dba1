//go:build linux || darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// ttyColumns asks the terminal f how many columns it has (0 if it cannot
// tell).
func ttyColumns(f *os.File) int {
	var ws struct{ rows, cols, x, y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return 0
	}
	return int(ws.cols)
}
