package watch_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/watch"
	"golang.org/x/sync/errgroup"
)

// manySessions writes n small transcripts of two records each, spread over
// 30 project directories, and returns the path of the first. It writes
// manyWriters at a time: making a file waits on the disk far more than it
// uses a core.
func manySessions(t testing.TB, claude string, n int) (firstID, firstPath string) {
	t.Helper()
	const projects, manyWriters = 30, 16
	session := func(i int) (id, path string) {
		id = fmt.Sprintf("f1000000-0000-4000-8000-%012d", i)
		return id, filepath.Join(claude, "projects", fmt.Sprintf("-home-dev-f%02d", i%projects), id+".jsonl")
	}
	for i := range min(n, projects) {
		_, path := session(i)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var g errgroup.Group
	g.SetLimit(manyWriters)
	for i := range n {
		g.Go(func() error {
			id, path := session(i)
			return os.WriteFile(path, []byte(userRec(id, "u1", "", "FLOOD a prompt")+assistantRec(id, "a1", "u1", "m1", "An answer.")), 0o600)
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return session(0)
}

// flood is clients keeping the daemon's status socket busy until stopped:
// idle ones (connect, never read, hang up after a while), slow ones (read
// a byte at a time) and eager ones (read the answer, connect again at
// once), as a script gone wrong or a hostile local process would.
type flood struct {
	stopped  chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	// connected counts connections; answered, refused and unanswered the
	// eager clients' status answers, busy answers, and waits for an
	// answer that ended in nothing.
	connected, answered, refused, unanswered atomic.Int64
}

func startFlood(socket string, clients int) *flood {
	f := &flood{stopped: make(chan struct{})}
	for i := range clients {
		f.wg.Go(func() { f.client(socket, i%3) })
	}
	return f
}

func (f *flood) on() bool {
	select {
	case <-f.stopped:
		return false
	default:
		return true
	}
}

// client connects again and again until the flood stops; kind says how it
// treats a connection: 0 idle, 1 slow, 2 eager.
func (f *flood) client(socket string, kind int) {
	for f.on() {
		conn, err := net.Dial("unix", socket)
		if err != nil {
			time.Sleep(10 * time.Millisecond) // the queue is full: try again
			continue
		}
		f.connected.Add(1)
		hangUp := time.Now().Add(500 * time.Millisecond)
		switch kind {
		case 0:
			for f.on() && time.Now().Before(hangUp) {
				time.Sleep(20 * time.Millisecond)
			}
		case 1:
			var b [1]byte
			for f.on() && time.Now().Before(hangUp) {
				conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				if _, err := conn.Read(b[:]); err == io.EOF {
					break
				}
			}
		case 2:
			// As long as a user waits: far longer than answering takes.
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			b, err := io.ReadAll(conn)
			switch {
			case err != nil || len(b) == 0:
				f.unanswered.Add(1)
			case strings.HasPrefix(string(b), `{"busy"`):
				f.refused.Add(1)
			default:
				f.answered.Add(1)
			}
		}
		conn.Close()
	}
}

func (f *flood) stop() {
	f.stopOnce.Do(func() { close(f.stopped) })
	f.wg.Wait()
}

// TestFaultStatusFlood floods the status socket of a daemon following
// 10,000 sessions with a thousand clients, idle, slow and eager: a live
// change still reaches its bottle while they go on, `bottled status`
// still gets the daemon's answer, every client that waits for an answer
// gets one (the status, or that the daemon is busy), and the daemon holds
// no more connections than it answers at once.
func TestFaultStatusFlood(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	id, path := manySessions(t, claude, 10000)
	d := startDaemon(t, claude, data, "--rescan", "10m")
	pid := d.cmd.Process.Pid
	before := memoryKB(t, pid, "VmHWM")
	idle, err := sockets(pid)
	if err != nil {
		t.Skipf("no /proc to count the daemon's sockets: %v", err)
	}

	const clients = 1000
	f := startFlood(filepath.Join(data, watch.SocketFile), clients)
	defer f.stop()
	var most atomic.Int64 // sockets the daemon held at once
	f.wg.Go(func() {
		for f.on() {
			if n, err := sockets(pid); err == nil {
				most.Store(max(most.Load(), int64(n)))
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	eventually(t, "every client has connected", func() bool { return f.connected.Load() > int64(clients) })

	out, err := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "status", "--json").Output()
	var rep struct {
		Daemon      *watch.Status
		DaemonError string
	}
	if err != nil || json.Unmarshal(out, &rep) != nil || rep.Daemon == nil {
		t.Errorf("bottled status during the flood: %v, daemon error %q", err, rep.DaemonError)
	}
	changed := time.Now()
	synth.Append(t, path, userRec(id, "u2", "a1", "FLOOD-LIVE a change while the socket is flooded"))
	d.waitContains(id, "FLOOD-LIVE")
	t.Logf("change to bottle: %v", time.Since(changed))
	f.stop()
	grew := memoryKB(t, pid, "VmHWM") - before
	t.Logf("%d connections; eager clients got %d answers, %d refusals and %d nothing; the daemon held %d sockets at most (%d before); its peak memory grew by %d MB (the catch-up's included)",
		f.connected.Load(), f.answered.Load(), f.refused.Load(), f.unanswered.Load(), most.Load(), idle, grew>>10)
	if n := f.unanswered.Load(); n > 0 {
		t.Errorf("%d waits for an answer ended in nothing", n)
	}
	// Each connection answered holds a socket (and a goroutine, and the
	// status it is given): their number is what bounds the daemon's
	// memory, whatever the number of clients. One more is the one
	// waiting for its turn.
	if n := most.Load() - int64(idle); n > watch.StatusConns+1 {
		t.Errorf("the daemon held %d more sockets during the flood; it answers at most %d connections at once", n, watch.StatusConns)
	}
}

// sockets counts the sockets a process has open.
func sockets(pid int) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(link, "socket:") {
			n++
		}
	}
	return n, nil
}

// TestFaultStatusOfAStoppedDaemon runs `bottled status` beside a daemon
// that is stopped (SIGSTOP): it says the daemon runs, with its pid, but did
// not answer, never that no daemon runs, and it answers from the disk
// within its own deadline. Continued, the daemon answers again.
func TestFaultStatusOfAStoppedDaemon(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "5709ed00-0000-4000-8000-000000000001"
	synth.Append(t, transcriptIn(t, claude, "-p", id), userRec(id, "u1", "", "STOPPED a prompt"))
	d := startDaemon(t, claude, data)
	d.waitContains(id, "STOPPED a prompt")
	pid := d.cmd.Process.Pid
	if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer d.cmd.Process.Signal(syscall.SIGCONT)
	// Status waits a fraction of its 3 s for the answer: the wait is the
	// same code, and the test does not sit out the whole of it.
	out, err := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "status", "--daemon-wait", "300ms").Output()
	line, _, _ := strings.Cut(string(out), "\n")
	if err != nil || !strings.Contains(line, fmt.Sprintf("running (pid %d) but did not answer status", pid)) {
		t.Errorf("status beside a stopped daemon: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "1 fresh") {
		t.Errorf("status did not check the bottles on disk:\n%s", out)
	}
	d.cmd.Process.Signal(syscall.SIGCONT)
	eventually(t, "the daemon answers again", func() bool {
		_, err := d.status()
		return err == nil
	})
}
