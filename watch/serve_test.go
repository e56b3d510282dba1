package watch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bottled-dev/bottled/internal/waitfor"
)

// TestStatusCache: a status is built at most once per statusReuse however
// many ask; while one is built, askers take the one before if the build
// began soon enough after it, and wait otherwise.
func TestStatusCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var builds atomic.Int32
		release := make(chan struct{})
		blocking := atomic.Bool{}
		c := &statusCache{now: time.Now, build: func() []byte {
			n := builds.Add(1)
			if blocking.Load() {
				<-release
			}
			return []byte{byte('0' + n)}
		}}
		get := func() string { return string(c.get()) }
		if got := get(); got != "1" || builds.Load() != 1 {
			t.Fatalf("first: %q after %d builds", got, builds.Load())
		}
		time.Sleep(statusReuse - time.Millisecond)
		for range 100 {
			if got := get(); got != "1" {
				t.Fatalf("within statusReuse: %q", got)
			}
		}
		time.Sleep(time.Millisecond)
		if got := get(); got != "2" {
			t.Fatalf("after statusReuse: %q, want a new build", got)
		}

		// Back to back: the build under way began right after the last
		// one expired, so askers meanwhile take the last one.
		time.Sleep(statusReuse)
		blocking.Store(true)
		var wg sync.WaitGroup
		wg.Go(func() {
			if got := get(); got != "3" {
				t.Errorf("the builder got %q", got)
			}
		})
		synctest.Wait() // the build is under way
		if got := get(); got != "2" {
			t.Errorf("during a build begun right after the last one: %q, want the last one", got)
		}
		release <- struct{}{}
		wg.Wait()

		// After a quiet while the last one is old: askers wait for the
		// new one.
		time.Sleep(time.Minute)
		var got [2]string
		wg.Go(func() { got[0] = get() })
		synctest.Wait()
		wg.Go(func() { got[1] = get() })
		synctest.Wait() // both wait: one builds, one for it
		release <- struct{}{}
		wg.Wait()
		if got != [2]string{"4", "4"} || builds.Load() != 4 {
			t.Errorf("after a quiet minute: %q after %d builds, want the new one, built once", got, builds.Load())
		}
	})
}

// statusAt starts a status server answering build on a socket in a
// temporary directory, on a clock the test moves with its return, and
// returns the directory.
func statusAt(t *testing.T, build func() Status) (*statusServer, string, func(time.Duration)) {
	t.Helper()
	dir := t.TempDir()
	ln, err := listenStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ahead atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	s := newStatusServer(build, now, slog.New(slog.DiscardHandler))
	s.start(ln)
	t.Cleanup(func() {
		ln.close()
		s.wait()
	})
	return s, dir, func(d time.Duration) { ahead.Add(int64(d)) }
}

// TestStatusServerBounds holds every slot of a status server (its build
// waits): a client more is told at once that the daemon is busy, which
// Query reports as ErrBusy at its deadline; released, every client held
// gets its status. A client that does not read an answer longer than its
// socket's buffer is dropped at the write deadline, freeing its slot.
func TestStatusServerBounds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var big atomic.Bool
	s, dir, advance := statusAt(t, func() Status {
		<-release
		st := Status{Version: "held"}
		if big.Load() {
			st.Unwatched = []string{strings.Repeat("u", 8<<20)}
		}
		return st
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server's cleanup waits for its answers
	s.writeTimeout = 200 * time.Millisecond
	socket := filepath.Join(dir, SocketFile)

	// connectAll connects as many clients as the server answers at once.
	connectAll := func() []*os.File {
		var conns []*os.File
		for range statusConns {
			conn, err := dialUnix(socket)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			conns = append(conns, conn)
		}
		return conns
	}
	held := connectAll()
	// Asked once, with time to spare for a busy machine, the server says
	// it is busy rather than keep the client waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	_, err := query(ctx, dir)
	cancel()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("with every slot held, one query: %v, want ErrBusy", err)
	}
	// Query asks again until its deadline, and reports the last answer.
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	_, err = Query(ctx, dir)
	cancel()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("with every slot held: %v, want ErrBusy", err)
	}
	unblock()
	for i, conn := range held {
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		if b, err := io.ReadAll(conn); err != nil || !strings.Contains(string(b), `"version":"held"`) {
			t.Fatalf("held client %d: %v, %.100q", i, err, b)
		}
	}

	// Slow readers of a long status hold the slots until the deadline.
	big.Store(true)
	advance(time.Minute) // the next answer is built again, long
	held = connectAll()
	waitfor.Cond(t, "the slow readers are dropped and a client is answered", func() bool {
		st, err := Query(context.Background(), dir)
		return err == nil && st.Version == "held"
	})
	for i, conn := range held {
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		if b, err := io.ReadAll(conn); err == nil && len(b) == 8<<20 {
			t.Errorf("slow client %d got the whole answer after the write deadline", i)
		}
	}
}
