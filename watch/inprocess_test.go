package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/sources"
)

// These tests drive the daemon's parts in process, as its goroutines do,
// on real files: the loop (scheduling, renders, retries) runs in a
// testing/synctest bubble, where its timers are fake and a test moves time
// itself; the file watcher's and the database watcher's steps are called
// by the test. None waits for real time to pass.

// testDaemon returns a daemon on new directories, not running; cfg gives
// its timings (the directories are set here).
func testDaemon(t *testing.T, cfg Config) *Daemon {
	t.Helper()
	root := t.TempDir()
	cfg.ClaudeDir, cfg.DataDir = filepath.Join(root, "claude"), filepath.Join(root, "data")
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// writeTranscript appends a turn to session id's transcript (made in a
// project directory of the daemon's Claude dir) and returns its path.
func writeTranscript(t *testing.T, d *Daemon, id, prompt string) string {
	t.Helper()
	path := filepath.Join(d.cfg.ClaudeDir, "projects", "-home-dev-app", id+".jsonl")
	r := synth.Rec{Session: id, UUID: "u-" + prompt, At: time.Now(), CWD: "/home/dev/app"}
	synth.Append(t, path, r.User(prompt))
	return path
}

// runLoop runs the daemon's loop, with the database watcher's first check
// over (there is no database), until the test ends.
func runLoop(t *testing.T, d *Daemon) {
	t.Helper()
	d.dbw = newDBWatch(d.dbDeps())
	close(d.dbw.ready)
	runUntilEnd(t, d.loop, d.drain)
}

// runIndexKeeper runs the daemon's index keeper until the test ends, then
// closes the index.
func runIndexKeeper(t *testing.T, d *Daemon) {
	t.Helper()
	runUntilEnd(t, d.keepIndex, d.closeIndex)
}

// runUntilEnd runs run in a goroutine until the test ends: then it cancels
// run's context, waits for run to return, and calls after, if not nil.
func runUntilEnd(t *testing.T, run func(context.Context), after func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if after != nil {
			after()
		}
	})
}

// renderedAt returns when status shows session id's last render finished,
// and how many renders the daemon has counted.
func renderedAt(d *Daemon, id string) (time.Time, int) {
	st := d.rec.snapshot()
	n := st.Renders.Written + st.Renders.Unchanged + st.Renders.Failed
	for _, s := range st.Recent {
		if s.Session == id {
			return s.Rendered, n
		}
	}
	return time.Time{}, n
}

func bottleOf(d *Daemon, id string) string {
	b, _ := os.ReadFile(d.store.Path(id))
	return string(b)
}

// TestLoopDebounce follows the trailing debounce: each change restarts
// the quiet period, and the render starts when it is over, not before,
// with every change in it.
func TestLoopDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const debounce = 250 * time.Millisecond
		d := testDaemon(t, Config{Debounce: debounce, MaxWait: time.Hour, Workers: 1})
		runLoop(t, d)
		const id = "de000000-0000-4000-8000-000000000001"
		path := writeTranscript(t, d, id, "DEBOUNCE-P1")
		t0 := time.Now()
		d.changes <- change{id: id, path: path, at: time.Now()}
		time.Sleep(200 * time.Millisecond)
		writeTranscript(t, d, id, "DEBOUNCE-P2")
		d.changes <- change{id: id, path: path, at: time.Now()}
		// The quiet period counts from the second change.
		time.Sleep(debounce - time.Millisecond)
		synctest.Wait()
		if _, n := renderedAt(d, id); n != 0 || bottleOf(d, id) != "" {
			t.Fatalf("rendered %v after the last change, before the debounce (%v) was over", time.Since(t0)-200*time.Millisecond, debounce)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		at, n := renderedAt(d, id)
		if n != 1 {
			t.Fatalf("%d renders once the debounce was over, want 1", n)
		}
		if want := t0.Add(200*time.Millisecond + debounce); !at.Equal(want) {
			t.Errorf("rendered at %v, want %v (the debounce after the last change)", at.Sub(t0), want.Sub(t0))
		}
		if b := bottleOf(d, id); !strings.Contains(b, "DEBOUNCE-P1") || !strings.Contains(b, "DEBOUNCE-P2") {
			t.Errorf("the bottle does not show both changes:\n%s", b)
		}
	})
}

// TestLoopMaxWait writes to a session without pause, more often than the
// debounce: it is still rendered every max wait, counted from the first
// change of each burst (the first change after the last render began).
func TestLoopMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const debounce, maxWait = 250 * time.Millisecond, 2 * time.Second
		// Changes every 70 ms never coincide with a deadline (a change at
		// the very time a render starts could be the render's or the next).
		const every, writing = 70 * time.Millisecond, 5 * time.Second
		d := testDaemon(t, Config{Debounce: debounce, MaxWait: maxWait, Workers: 1})
		runLoop(t, d)
		const id = "de000000-0000-4000-8000-000000000002"
		var want, got []time.Duration
		first := time.Duration(-1) // the current burst's first change
		t0 := time.Now()
		for c := time.Duration(0); c < writing; c += every {
			if first >= 0 && first+maxWait <= c {
				want = append(want, first+maxWait)
				first = -1
			}
			if first < 0 {
				first = c
			}
			time.Sleep(time.Until(t0.Add(c)))
			path := writeTranscript(t, d, id, fmt.Sprintf("MAXWAIT-P%d", c/every))
			d.changes <- change{id: id, path: path, at: time.Now()}
			synctest.Wait()
			if at, n := renderedAt(d, id); n > len(got) {
				got = append(got, at.Sub(t0))
			}
		}
		t.Logf("renders at %v", got)
		if !slices.Equal(got, want) {
			t.Errorf("renders at %v while the session changed every %v, want %v (every max wait of %v)", got, every, want, maxWait)
		}
	})
}

// TestLoopRetriesWithBackoff makes every render of a session fail (a file
// stands where the bottles directory goes) and follows the retries: the
// first after RetryMin, each wait twice the last, up to RetryMax (a retry
// is a change like any other, rendered after the debounce); a
// rescan's finding meanwhile does not bring a retry forward; once the
// fault is gone, the next retry writes the bottle, and the retries stop.
func TestLoopRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const debounce = 250 * time.Millisecond
		d := testDaemon(t, Config{Debounce: debounce, Workers: 1, RetryMin: time.Second, RetryMax: 4 * time.Second})
		if err := os.WriteFile(d.store.Dir, []byte("in the way"), 0o600); err != nil {
			t.Fatal(err)
		}
		runLoop(t, d)
		const id = "de000000-0000-4000-8000-000000000003"
		path := writeTranscript(t, d, id, "RETRY-P1")
		t0 := time.Now()
		d.changes <- change{id: id, path: path, at: t0}
		// Renders at 250 ms, then 1 s, 2 s, 4 s and 4 s (the ceiling) after
		// each failure, plus the debounce.
		var want []time.Duration
		for at, wait := debounce, time.Second; len(want) < 5; at, wait = at+wait+debounce, min(2*wait, 4*time.Second) {
			want = append(want, at)
		}
		failures := func() int { return d.rec.snapshot().Renders.Failed }
		for i, at := range want {
			time.Sleep(time.Until(t0.Add(at)) - time.Millisecond)
			synctest.Wait()
			if n := failures(); n != i {
				t.Fatalf("%d failed renders %v in, want %d (renders at %v)", n, time.Since(t0), i, want)
			}
			time.Sleep(time.Millisecond)
			synctest.Wait()
			if n := failures(); n != i+1 {
				t.Fatalf("%d failed renders %v in, want %d (renders at %v)", n, time.Since(t0), i+1, want)
			}
			if i == 1 { // waiting, it is found stale by a rescan: it keeps its turn
				d.changes <- change{id: id, path: path, at: time.Now(), rescan: true}
			}
		}
		if err := os.Remove(d.store.Dir); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4*time.Second + debounce)
		synctest.Wait()
		if b := bottleOf(d, id); !strings.Contains(b, "RETRY-P1") {
			t.Fatalf("no bottle %v after the fault was gone (retries every 4 s)", 4*time.Second+debounce)
		}
		st := d.rec.snapshot()
		time.Sleep(time.Hour)
		synctest.Wait()
		if after := d.rec.snapshot(); after.Renders != st.Renders {
			t.Errorf("renders went on once one succeeded: %+v, then %+v", st.Renders, after.Renders)
		}
	})
}

// testClock is a clock a test sets, for the steps it calls itself.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// takeChanges returns the changes sent to the loop so far.
func takeChanges(d *Daemon) []change {
	var out []change
	for {
		select {
		case c := <-d.changes:
			out = append(out, c)
		default:
			return out
		}
	}
}

// renderNow renders session id's bottle as the loop's render does, and
// takes its result as the loop does; it fails the test if it fails.
func renderNow(t *testing.T, d *Daemon, id string) {
	t.Helper()
	res := d.renderSession(t.Context(), &session{id: id}, false)
	if res.err != nil {
		t.Fatalf("render %s: %v", id, res.err)
	}
	res.id = id
	d.finish(res)
}

// rescan runs one rescan of f and waits for its checks of the bottles.
func rescan(f *fsWatch) {
	f.rescanAll(context.Background())
	f.checks.Wait()
}

// setMod sets the modification time of the files at paths.
func setMod(t *testing.T, at time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRescan calls the file watcher's rescan itself, on a watcher without
// file events, with the clock set by the test (and the transcripts' times
// with it): the rescan reports transcripts changed since it last saw
// them; it checks a bottle against its sources only once its transcript
// has been quiet for CheckQuiet, and reports it if it is stale (removed,
// or an older bottle put back); once it found every bottle fresh, it does
// not check them again while no file changes; and a session with nothing
// to render (the one /clear opens) is not reported again and again, and
// status counts it empty, not missing.
func TestRescan(t *testing.T) {
	clock := &testClock{}
	const quiet = 5 * time.Second
	d := testDaemon(t, Config{Now: clock.now, CheckQuiet: quiet})
	const a, b, empty = "5e5c0000-0000-4000-8000-00000000000a", "5e5c0000-0000-4000-8000-00000000000b", "5e5c0000-0000-4000-8000-00000000000c"
	// The clock runs ahead of the files written now (the bottles directory
	// among them), so that they are settled (sources.Settled) when read.
	base := time.Now().Truncate(time.Second)
	pa := writeTranscript(t, d, a, "RESCAN-A1")
	pb := writeTranscript(t, d, b, "RESCAN-B1")
	pe := filepath.Join(filepath.Dir(pa), empty+".jsonl")
	if err := os.WriteFile(pe, []byte(synth.Rec{Session: empty, At: base, CWD: "/home/dev/app"}.Cleared("c")), 0o600); err != nil {
		t.Fatal(err)
	}
	setMod(t, base, pa, pb, pe)
	clock.set(base.Add(time.Minute))
	checks := 0
	deps := d.fsDeps(nil)
	deps.checkFresh = func(ctx context.Context, id, path string, ts fileStamp, tailFirst bool) (string, bool) {
		checks++
		return d.checkFresh(ctx, id, path, ts, tailFirst)
	}
	f := newWatchState(deps)
	if got := len(d.catchUp(f.initialScan())); got != 3 {
		t.Fatalf("the initial scan found %d sessions, want 3", got)
	}
	for _, id := range []string{a, b, empty} {
		renderNow(t, d, id)
	}
	old := bottleOf(d, b)
	// Appended with no event to say so: the rescan sees the new size.
	writeTranscript(t, d, b, "RESCAN-B2")
	setMod(t, base.Add(time.Second), pb)
	rescan(f)
	if got := takeChanges(d); len(got) != 1 || got[0].id != b || got[0].rescan {
		t.Fatalf("a rescan after an append without an event reported %+v, want a change to %s", got, b)
	}
	renderNow(t, d, b)

	// Every bottle is current (the empty session has none and needs none).
	for range 3 {
		rescan(f)
		if got := takeChanges(d); len(got) != 0 {
			t.Fatalf("a rescan of current bottles reported %+v", got)
		}
	}
	before := checks
	rescan(f)
	if got := takeChanges(d); checks != before || len(got) != 0 {
		t.Fatalf("a rescan with no file changed since the last checked %d bottles (want none) and reported %+v", checks-before, got)
	}
	d.rec.survey = func(s map[string]*sessionRecord) *Survey { return d.survey(f, s) }
	if sv := d.rec.snapshotWithSurvey().Bottles; sv.Transcripts != 3 || sv.Empty != 1 || sv.Missing != 0 || sv.Fresh != 2 {
		t.Errorf("status counts %d transcripts, %d fresh, %d empty, %d missing; want 3, 2 fresh, the cleared one empty, none missing",
			sv.Transcripts, sv.Fresh, sv.Empty, sv.Missing)
	}

	// A bottle removed, and an older one put in place of another, just
	// after their transcripts were written to: not checked until quiet.
	if err := os.Remove(d.store.Path(a)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.store.Path(b), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	writeTranscript(t, d, a, "RESCAN-A2")
	writeTranscript(t, d, b, "RESCAN-B3")
	written := base.Add(2 * time.Minute)
	setMod(t, written, pa, pb)
	clock.set(written)
	rescan(f)
	if got := takeChanges(d); len(got) != 2 || got[0].rescan || got[1].rescan {
		t.Fatalf("a rescan after two appends reported %+v, want their two changes", got)
	}
	clock.set(written.Add(quiet - time.Millisecond))
	before = checks
	rescan(f)
	if got := takeChanges(d); len(got) != 0 || checks != before {
		t.Fatalf("a rescan %v after the last writes checked %d bottles and reported %+v; want none checked before %v of quiet",
			quiet-time.Millisecond, checks-before, got, quiet)
	}
	clock.set(written.Add(quiet))
	rescan(f)
	got := map[string]bool{}
	for _, c := range takeChanges(d) {
		if !c.rescan {
			t.Errorf("a change the rescan found in a bottle is not marked as the rescan's: %+v", c)
		}
		got[c.id] = true
	}
	if !got[a] || !got[b] || len(got) != 2 {
		t.Errorf("once quiet, the rescan found %v stale; want the removed bottle of %s and the old one of %s", got, a, b)
	}
}

// TestDBPoll runs the database watcher in fake time beside claude-mem's
// database, written by the real claude-mem: rows written with no file
// event to say so reach the loop at the next poll, not before; a poke (a
// file event on the database or its WAL) makes it look at once; and rows
// already there when it started are the catch-up's, not news.
func TestDBPoll(t *testing.T) {
	t.Parallel()
	w := memwriter.Require(t)
	const poll = 30 * time.Second
	const id = "db000000-0000-4000-8000-000000000001"
	synctest.Test(t, func(t *testing.T) {
		d := testDaemon(t, Config{DBPoll: poll})
		db := sources.ClaudeMemFile(d.cfg.DataDir)
		w.Write(t, db,
			memwriter.Op{"op": "session", "content": id, "project": "app", "prompt": "DB-P1"},
			memwriter.Op{"op": "register", "content": id, "memory": "mem-" + id},
			memwriter.Op{"op": "prompt", "content": id, "number": 1, "text": "DB-P1"})
		dbw := newDBWatch(d.dbDeps())
		runUntilEnd(t, dbw.run, dbw.close)
		<-dbw.ready
		if d.db.Load() == nil {
			t.Fatalf("the database is not open after the first check: %+v", d.rec.snapshot().DB)
		}
		if got := takeChanges(d); len(got) != 0 {
			t.Errorf("the first check reported rows that were there before it: %+v", got)
		}
		t0 := time.Now()
		observe := func(title string) {
			w.Write(t, db, memwriter.Op{"op": "observation", "content": id, "prompt_number": 1, "type": "change", "title": title, "narrative": "Noted."})
		}
		observe("DB-OBS1")
		time.Sleep(poll - time.Millisecond)
		synctest.Wait()
		if got := takeChanges(d); len(got) != 0 {
			t.Fatalf("a row reached the loop %v in, before the poll every %v: %+v", time.Since(t0), poll, got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := takeChanges(d); len(got) != 1 || got[0].id != id {
			t.Fatalf("at the poll, the loop got %+v, want one change to %s", got, id)
		}
		observe("DB-OBS2")
		signal(d.dbPokes)
		synctest.Wait()
		if got := takeChanges(d); len(got) != 1 || got[0].id != id {
			t.Fatalf("after a poke, the loop got %+v, want one change to %s at once", got, id)
		}
		if st := d.rec.snapshot().DB; !st.Reachable || st.Error != "" {
			t.Errorf("status of the database: %+v", st)
		}
	})
}

// TestIndexKeeper runs the search index keeper in fake time where the
// index cannot be made (a file stands where its directory goes): it says
// so in status, with when it tries again, and tries again with the
// retries' backoff (1 s, then 2 s); once the fault is gone, the next try
// opens the index, with no render to prompt it. Asked to (a render found
// the index must be built again), it opens it again at once.
func TestIndexKeeper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := testDaemon(t, Config{RetryMin: time.Second, RetryMax: time.Minute})
		if err := os.WriteFile(index.Dir(d.cfg.DataDir), []byte("in the way"), 0o600); err != nil {
			t.Fatal(err)
		}
		runIndexKeeper(t, d)
		t0 := time.Now()
		search := func() Search { return d.rec.snapshot().Search }
		synctest.Wait()
		for i, wait := range []time.Duration{time.Second, 2 * time.Second} {
			s := search()
			if s.State != SearchUnavailable || !strings.Contains(s.Error, "not a directory") || !s.Retry.Equal(time.Now().Add(wait)) {
				t.Fatalf("status %v in, after %d failures to make the index: %+v; want unavailable, retried in %v", time.Since(t0), i+1, s, wait)
			}
			if i == 1 {
				if err := os.Remove(index.Dir(d.cfg.DataDir)); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(wait - time.Millisecond)
			synctest.Wait()
			if s := search(); s.State != SearchUnavailable || d.index.Load() != nil {
				t.Fatalf("%v in, before the retry due at %v: %+v", time.Since(t0), s.Retry.Sub(t0), s)
			}
			time.Sleep(time.Millisecond)
			synctest.Wait()
		}
		first := d.index.Load()
		if s := search(); s.State != SearchReady || first == nil {
			t.Fatalf("%v in, once the fault was gone: %+v; want the index ready", time.Since(t0), s)
		}
		signal(d.reopenIndex)
		synctest.Wait()
		if again := d.index.Load(); again == nil || again == first || search().State != SearchReady {
			t.Errorf("asked to open the index again, the keeper has %p (had %p), status %+v", again, first, search())
		}
	})
}

// TestSyncQuiet runs the syncer in fake time: the bottles written are
// synced together once none has been written for SyncQuiet, not before
// (a bottle written again meanwhile waits with the others: the one it
// replaced need never reach the disk), under one marker (which says a
// crash of the machine may damage them), which goes right after the sync;
// the next write makes a marker again.
func TestSyncQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const quiet = 30 * time.Second
		d := testDaemon(t, Config{SyncQuiet: quiet})
		runUntilEnd(t, d.syncBottles, nil)
		const a, b = "5c000000-0000-4000-8000-00000000000a", "5c000000-0000-4000-8000-00000000000b"
		marker := d.store.UnsyncedMarker()
		writeTranscript(t, d, a, "SYNC-A1")
		writeTranscript(t, d, b, "SYNC-B1")
		d.catchUp([]dated{{id: a, path: filepath.Join(d.cfg.ClaudeDir, "projects", "-home-dev-app", a+".jsonl")},
			{id: b, path: filepath.Join(d.cfg.ClaudeDir, "projects", "-home-dev-app", b+".jsonl")}})
		renderNow(t, d, a)
		first, err := os.ReadFile(marker)
		if err != nil {
			t.Skipf("no batch marker on this system (%v): bottles are synced as they are written", err)
		}
		state := func(when string, pending int, wantMarker []byte) {
			t.Helper()
			synctest.Wait()
			if n := d.batch.Pending(); n != pending {
				t.Fatalf("%s: %d bottles wait for a sync, want %d", when, n, pending)
			}
			got, err := os.ReadFile(marker)
			switch {
			case wantMarker == nil && !os.IsNotExist(err):
				t.Fatalf("%s: the batch's marker is there (%q, %v), want it gone", when, got, err)
			case wantMarker != nil && string(got) != string(wantMarker):
				t.Fatalf("%s: the batch's marker is %q (%v), want the first one, %q", when, got, err, wantMarker)
			}
		}
		time.Sleep(quiet / 2)
		renderNow(t, d, b)
		time.Sleep(quiet / 2)
		writeTranscript(t, d, a, "SYNC-A2")
		renderNow(t, d, a) // a again, quiet after its first write
		state("a bottle written again before the batch was quiet", 2, first)
		time.Sleep(quiet - time.Millisecond)
		state(fmt.Sprintf("%v after the last write", quiet-time.Millisecond), 2, first)
		time.Sleep(time.Millisecond)
		state(fmt.Sprintf("%v after the last write", quiet), 0, nil)
		// The next write makes a marker again.
		writeTranscript(t, d, b, "SYNC-B2")
		renderNow(t, d, b)
		second, err := os.ReadFile(marker)
		if err != nil {
			t.Fatalf("a bottle written after the marker went, and no marker: %v", err)
		}
		state("a bottle written after the sync", 1, second)
	})
}

// sessionWithSubagents returns a daemon on a test clock, not running, with
// a turn of session id in its transcript and the session's subagents
// directory, where side questions go.
func sessionWithSubagents(t *testing.T, id string) (d *Daemon, clock *testClock, path, subagents string) {
	t.Helper()
	clock = &testClock{}
	d = testDaemon(t, Config{Now: clock.now})
	path = writeTranscript(t, d, id, "IDLE-P1")
	subagents = sources.SubagentsDir(path)
	if err := os.MkdirAll(subagents, 0o700); err != nil {
		t.Fatal(err)
	}
	return d, clock, path, subagents
}

// writeAside writes a side question of session id, stamped at, to its
// subagents directory, as the subagent agent (16 hex digits), and returns
// its path.
func writeAside(t *testing.T, subagents, id, agent string, at time.Time) string {
	t.Helper()
	path := filepath.Join(subagents, "agent-aside_question-"+agent+".jsonl")
	if err := os.WriteFile(path, []byte(synth.Rec{Session: id, UUID: "q", At: at, CWD: "/home/dev/app"}.User("IDLE-Q1")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSessionWatchesDropWhenIdle writes to a session with a subagents
// directory: the file watcher watches its two directories, for its side
// questions; once the session has been left alone for sessionWatchIdle,
// the rescan removes those watches, which every session written to while
// the daemon runs would otherwise keep for good. A side question asked
// later is found by the rescan, which watches the directories again.
func TestSessionWatchesDropWhenIdle(t *testing.T) {
	const id = "1d1e0000-0000-4000-8000-000000000001"
	d, clock, path, subagents := sessionWithSubagents(t, id)
	f := newFSWatch(d.fsDeps(nil))
	defer f.close()
	if f.w == nil {
		t.Skip("no inotify instance left")
	}
	base := time.Now().Truncate(time.Second)
	clock.set(base)
	f.initialScan()
	writeTranscript(t, d, id, "IDLE-P2")
	setMod(t, base, path)
	f.handle(t.Context(), fsnotify.Event{Name: path, Op: fsnotify.Write})
	watching := func() []string {
		return slices.DeleteFunc(f.w.WatchList(), func(dir string) bool { return dir != subagents && dir != filepath.Dir(subagents) })
	}
	if got := watching(); len(got) != 2 {
		t.Fatalf("a session written to: its directories watched are %v, want both", got)
	}
	clock.set(base.Add(sessionWatchIdle - time.Second))
	rescan(f)
	if got := watching(); len(got) != 2 {
		t.Fatalf("a rescan before the session was idle for %v dropped watches: %v left", sessionWatchIdle, got)
	}
	clock.set(base.Add(sessionWatchIdle))
	rescan(f)
	if got := watching(); len(got) != 0 || len(f.sessionDirs) != 0 {
		t.Fatalf("a rescan once the session was idle for %v left %v watched (%v)", sessionWatchIdle, got, f.sessionDirs)
	}
	writeAside(t, subagents, id, "1111111111111111", base)
	takeChanges(d)
	rescan(f)
	if got := watching(); len(got) != 2 {
		t.Fatalf("a rescan that found a side question: its session's directories watched are %v, want both", got)
	}
	if got := takeChanges(d); len(got) != 1 || got[0].id != id {
		t.Fatalf("a rescan that found a side question reported %+v, want a change to %s", got, id)
	}
}

// TestSessionWatchesFailedDropWhenIdle is TestSessionWatchesDropWhenIdle
// for a watcher without inotify (as when the limits are reached): the
// session's directories, listed as unwatched once a rescan found a side
// question, leave that list once the session is idle, and status with it.
func TestSessionWatchesFailedDropWhenIdle(t *testing.T) {
	const id = "1d1e0000-0000-4000-8000-000000000002"
	d, clock, path, subagents := sessionWithSubagents(t, id)
	f := newWatchState(d.fsDeps(nil))
	base := time.Now().Truncate(time.Second)
	clock.set(base)
	f.initialScan()
	aside := writeAside(t, subagents, id, "2222222222222222", base)
	setMod(t, base, path, aside)
	rescan(f)
	if _, ok := f.unwatched[subagents]; !ok {
		t.Fatalf("a rescan that found a side question without a watcher: unwatched %v, want its directories", f.unwatched)
	}
	clock.set(base.Add(sessionWatchIdle))
	rescan(f)
	for dir := range f.unwatched {
		if strings.HasPrefix(dir, filepath.Dir(subagents)) {
			t.Fatalf("a rescan once the session was idle for %v left %s among the unwatched directories", sessionWatchIdle, dir)
		}
	}
}
