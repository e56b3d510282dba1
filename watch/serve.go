package watch

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"
)

// Serving status never delays a render: a status is built from what the
// daemon knows of every session, under the locks the loop and the file
// watcher take, so it is built at most once per statusReuse and the same
// bytes are written to every client that asks meanwhile; a bounded number
// of connections is answered at once, each within a deadline, and a client
// over the bound is told so at once.
const (
	// statusConns bounds the connections answered at once. An answer is
	// the shared snapshot, which a client's socket buffer takes at once,
	// so a connection is held for microseconds, and 32 is far more than
	// the people and scripts that ask at one moment; it bounds the
	// goroutines and descriptors a flood of clients makes the daemon hold.
	statusConns = 32
	// statusSlotWait is how long a connection waits for a slot before it
	// is told the daemon is busy. The goroutines answering are started
	// faster than they run when clients queue up, so slots are full for
	// a moment in any burst; only slow readers keep them full longer.
	statusSlotWait = 100 * time.Millisecond
	// statusWriteTimeout bounds how long one connection is held: a client
	// that has not taken its answer by then (one longer than its socket's
	// buffer, read slowly or not at all) is dropped.
	statusWriteTimeout = 2 * time.Second
	// statusReuse is how long a status is answered before another is
	// built. Building one for 20,000 sessions takes 40 to 50 ms of CPU, of
	// which under a millisecond holding the recorder's lock and as much
	// the file watcher's (BenchmarkStatusBuild), so however many clients
	// ask, status costs at most a sixth of a core and the loop waits at
	// most a few milliseconds a second for it; and an answer is never
	// much older than twice this (see statusCache.get).
	statusReuse = 250 * time.Millisecond
)

// statusServer answers the status socket. It outlives a listener: the
// guard makes a new one when the socket is deleted.
type statusServer struct {
	cache *statusCache
	log   *slog.Logger
	// slots holds a token per connection being answered (statusConns).
	slots chan struct{}
	// serving are the goroutines accepting on a listener, each ended by
	// closing it; answers those answering a connection, each ended by
	// writeTimeout. wait waits for both.
	serving, answers sync.WaitGroup
	writeTimeout     time.Duration
}

func newStatusServer(build func() Status, now func() time.Time, log *slog.Logger) *statusServer {
	s := &statusServer{log: log, slots: make(chan struct{}, statusConns), writeTimeout: statusWriteTimeout}
	s.cache = &statusCache{now: now, build: func() []byte {
		data, err := json.Marshal(build())
		if err != nil {
			log.Error("encode status", "err", err)
			return nil
		}
		return append(data, '\n')
	}}
	return s
}

// busyAnswer is what a client over the bound gets: an object that is not a
// status, which Query turns into ErrBusy.
var busyAnswer = []byte(`{"busy":"the daemon is answering as many status requests as it takes at once; try again"}` + "\n")

// start answers every connection on ln until ln is closed.
func (s *statusServer) start(ln *unixListener) {
	s.serving.Go(func() { s.serve(ln) })
}

func (s *statusServer) serve(ln *unixListener) {
	pause := time.Duration(0)
	for {
		conn, err := ln.accept()
		var errno syscall.Errno
		switch {
		case errors.As(err, &errno):
			// Out of descriptors or memory, or a connection aborted:
			// wait a little, as net/http does, then accept again.
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			s.log.Warn("accept a status connection", "err", err, "pause", pause)
			time.Sleep(pause)
			continue
		case err != nil:
			return // closed
		}
		pause = 0
		if !s.takeSlot() {
			refuse(conn)
			continue
		}
		s.answers.Go(func() {
			defer func() { <-s.slots }()
			s.answer(conn)
		})
	}
}

// takeSlot takes a slot for a connection, waiting up to statusSlotWait for
// one (meanwhile the next clients wait in the kernel's queue).
func (s *statusServer) takeSlot() bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	wait := time.NewTimer(statusSlotWait)
	defer wait.Stop()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-wait.C:
		return false
	}
}

// answer writes the status to conn and closes it.
func (s *statusServer) answer(conn *os.File) {
	defer conn.Close()
	data := s.cache.get()
	if data == nil {
		return
	}
	conn.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	conn.Write(data)
}

// refuse tells a client over the bound so, in one write that never waits
// (a new connection's buffer is empty), and closes the connection.
func refuse(conn *os.File) {
	defer conn.Close()
	if rc, err := conn.SyscallConn(); err == nil {
		rc.Write(func(fd uintptr) bool {
			syscall.Write(int(fd), busyAnswer)
			return true
		})
	}
}

// wait waits until the listeners are closed and the connections
// answered.
func (s *statusServer) wait() {
	s.serving.Wait()
	s.answers.Wait()
}

// statusCache is the status last built, as JSON, shared by every answer.
type statusCache struct {
	build func() []byte
	now   func() time.Time
	// mu guards the fields below, never a build.
	mu   sync.Mutex
	data []byte
	at   time.Time // when data's build began: what it shows is newer
	// building is closed when the build under way, begun at began, is
	// done; nil if none.
	building chan struct{}
	began    time.Time
}

// get returns the status: the last one built if it is younger than
// statusReuse, else a new one. While one is being built, those who ask
// take the last one if the build began less than twice statusReuse after
// it (a flood of clients never waits for builds made back to back), and
// otherwise wait for the new one. So an answer is never older than twice
// statusReuse and the time a build takes.
func (c *statusCache) get() []byte {
	c.mu.Lock()
	now := c.now()
	if c.data != nil && now.Sub(c.at) < statusReuse {
		defer c.mu.Unlock()
		return c.data
	}
	if done := c.building; done != nil {
		if c.data != nil && c.began.Sub(c.at) < 2*statusReuse {
			defer c.mu.Unlock()
			return c.data
		}
		c.mu.Unlock()
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.data
	}
	done := make(chan struct{})
	c.building, c.began = done, now
	c.mu.Unlock()

	data := c.build()

	c.mu.Lock()
	c.data, c.at, c.building = data, now, nil
	c.mu.Unlock()
	close(done)
	return data
}
