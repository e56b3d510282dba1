//go:build !linux

package watch_test

import (
	"os/exec"
	"runtime"
	"testing"
)

// asUser, inNamespace: user and mount namespaces are Linux's; the tests
// that need them skip elsewhere (requireNamespaces).
func asUser(cmd *exec.Cmd)                     {}
func inNamespace(setup string) func(*exec.Cmd) { return func(*exec.Cmd) {} }
func ownMounts(cmd *exec.Cmd) bool             { return false }

func requireNamespaces(t *testing.T) {
	t.Helper()
	t.Skipf("no user namespaces on %s; the test needs one to take permissions or space away from the daemon alone", runtime.GOOS)
}
