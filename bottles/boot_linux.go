package bottles

import (
	"os"
	"strings"
)

// readBootID reads the kernel's random id of this boot.
func readBootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
