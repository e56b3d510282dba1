package main

import "fmt"

// Numbers in words, for what people read.

// count is n and the noun for it: "1 session", "3 sessions", "0 sessions".
func count(n int, what string) string { return countAs(n, what, what+"s") }

// countAs is count for a noun whose plural is not an s added:
// countAs(2, "directory", "directories").
func countAs(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// size is a number of bytes in the unit that suits it (decimal units, as
// disks and networks count): "512 bytes", "12 KB", "3.4 MB", "1.1 GB", with
// a decimal below ten of a unit so that small sizes do not read as 0.
func size(n int64) string {
	if n < 1000 {
		return count(int(n), "byte")
	}
	v, unit := float64(n), ""
	for _, u := range []string{"KB", "MB", "GB", "TB"} {
		v, unit = v/1000, u
		if v < 999.5 {
			break
		}
	}
	if v < 9.95 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// rate is bytes per second, as size does it: "512 bytes/s", "7.3 MB/s".
func rate(bytes int64, seconds float64) string {
	return size(int64(float64(bytes)/max(seconds, 1e-9))) + "/s"
}

// sizeOf is "done of total" bytes in total's unit ("512 of 1090 MB"), so
// that the two read together; done over total when it is in another.
func sizeOf(done, total int64) string {
	t := size(total)
	d := size(done)
	du, tu := unitOf(d), unitOf(t)
	if du == tu && total >= 1000 {
		return d[:len(d)-len(du)-1] + " of " + t
	}
	return d + " of " + t
}

// unitOf is the unit a size ends with.
func unitOf(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return s[i+1:]
		}
	}
	return ""
}
