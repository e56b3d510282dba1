package watch_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// asUser runs a command in a new user namespace as uid and gid 1000,
// mapped to the test's own: the daemon owns the test's files but holds no
// capability, so that permissions bind it even when the tests run as root.
func asUser(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 1000, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 1000, HostID: os.Getgid(), Size: 1}},
		Credential:  &syscall.Credential{Uid: 1000, Gid: 1000},
	}
}

// inNamespace runs a command through sh in a new user and mount namespace,
// as root there, after the shell commands in setup: a tmpfs can be mounted
// or a per-namespace limit lowered without touching the machine's.
func inNamespace(setup string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		cmd.Args = append([]string{"sh", "-c", setup + ` && exec "$0" "$@"`}, cmd.Args...)
		cmd.Path = "/bin/sh"
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
	}
}

// requireNamespaces skips the test where user namespaces cannot be made.
func requireNamespaces(t *testing.T) {
	t.Helper()
	cmd := exec.Command("true")
	inNamespace("true")(cmd)
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot make a user namespace here (%v); the test needs one to take permissions or space away from the daemon alone", err)
	}
}

// ownMounts reports whether cmd runs in a mount namespace of its own
// (inNamespace).
func ownMounts(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	return a != nil && a.Cloneflags&syscall.CLONE_NEWNS != 0
}
