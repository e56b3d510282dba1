package skips

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// statFields returns the fields of /proc/<pid>/stat after the command
// name (state first, then the parent's pid…), nil without /proc.
func statFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the name may hold spaces and parentheses
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// startTime is "-" and the process's start time (clock ticks since boot),
// which tells it from a later process given the same pid; "" where it
// cannot be read.
func startTime(pid int) string {
	if f := statFields(pid); len(f) > 19 {
		return "-" + f[19]
	}
	return ""
}

// othersRunning reports whether a child of parent other than self is
// running (a test binary, or a compile or link of the next package). It
// reports false where processes cannot be listed.
func othersRunning(parent, self int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if f := statFields(pid); len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(parent) {
			return true
		}
	}
	return false
}

// removeStale removes the run directories in tmp whose go command is gone.
func removeStale(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	for _, dir := range dirs {
		pidStart := strings.TrimPrefix(filepath.Base(dir), dirPrefix)
		pidText, start, _ := strings.Cut(pidStart, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil {
			continue
		}
		if gone(pid) || (start != "" && startTime(pid) != "-"+start) {
			os.RemoveAll(dir)
		}
	}
}
