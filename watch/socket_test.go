package watch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/watch"
)

// TestDaemonSocketMode: the status socket is its owner's alone, read and
// write (connecting to a unix socket takes write permission; the execute
// bit means nothing on one), as the README says, also when the daemon
// makes it again after it was deleted.
func TestDaemonSocketMode(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	d := startDaemon(t, claude, data)
	socket := filepath.Join(data, watch.SocketFile)
	check := func(when string) {
		t.Helper()
		info, err := os.Lstat(socket)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if info.Mode().Type() != os.ModeSocket || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: the socket is %v, want a socket of mode 0600", when, info.Mode())
		}
	}
	check("at start")
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the daemon makes its socket again", func() bool {
		_, err := d.status()
		return err == nil
	})
	check("made again")
}
