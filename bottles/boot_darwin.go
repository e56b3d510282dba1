package bottles

import "syscall"

// readBootID reads the kernel's id of this boot session.
func readBootID() string {
	id, err := syscall.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return id
}
