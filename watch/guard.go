package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
)

// guard keeps the data directory this daemon's while it runs. The lock
// file and the status socket are files in it: a user who deletes the
// directory (or them) would otherwise leave a daemon that status calls not
// running, beside which a second one starts. So when the watch sees them
// change (within a second: rm -rf has finished by then), and at every
// rescan, it checks that the files at their paths are the ones it holds,
// and makes them again if not. If another daemon locked the directory in
// between, this one stops, saying so: never two daemons on one data
// directory.
//
// The file watcher's goroutine runs its checks and owns the lock and the
// listener while it runs; Run closes them after it has stopped.
type guard struct {
	dir  string // the data directory
	log  *slog.Logger
	lk   *lock
	ln   *unixListener
	stop context.CancelCauseFunc
	// rescan asks for a rescan (the bottles may have gone with the
	// directory), and serve serves status on a new socket.
	rescan func()
	serve  func(*unixListener)
}

// check makes the lock file and the socket again if they are not the
// daemon's own any more.
func (g *guard) check() {
	dir := g.dir
	if !g.lk.intact() {
		lk, err := g.relock(dir)
		switch {
		case errors.Is(err, ErrRunning):
			g.log.Error("the data directory was deleted and another daemon has taken it since; stopping this one", "err", err)
			g.stop(err)
			return
		case err != nil:
			g.log.Warn("the data directory was deleted and cannot be made again; trying again", "err", err)
			return
		}
		g.lk.release()
		g.lk = lk
		g.log.Warn("the data directory or its lock was deleted; made it again", "dir", dir)
		g.rescan()
	}
	if !g.ln.intact() {
		ln, err := listenStatus(dir)
		if err != nil {
			g.log.Warn("cannot make the status socket again; trying again", "err", err)
			return
		}
		g.ln.close()
		g.ln = ln
		g.serve(ln)
		g.log.Warn("the status socket was deleted; made it again", "path", ln.path)
	}
}

func (g *guard) relock(dir string) (*lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	return acquireLock(dir)
}

// close releases the lock and the socket; the guard must have stopped.
func (g *guard) close() {
	g.ln.close()
	g.lk.release()
}
