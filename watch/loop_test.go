package watch

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestLoopWaitsForAFreeWorker runs the loop in fake time with a session
// due that it cannot start yet: its only worker is busy, or the database
// watcher's first check is not over (nothing starts before it). The loop
// must wait for the event that lets it start (the worker's result, the
// check's end) and not wake meanwhile: a deadline already past, set
// again and again, is a busy wait. The loop reads the clock (Config.Now)
// at every wake-up, so the clock's reads bound its wake-ups; a loop that
// spins is stopped after spinLimit of them, and the test fails instead
// of hanging. Once the event arrives, the due session is rendered.
func TestLoopWaitsForAFreeWorker(t *testing.T) {
	const spinLimit = 10_000
	for _, tc := range []struct {
		name       string
		busy       bool // a render in flight holds the only worker
		dbNotReady bool // the database watcher's first check is not over
	}{
		{"every worker busy", true, false},
		{"the database not checked yet", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var reads atomic.Int64
				now := func() time.Time {
					if reads.Add(1) > spinLimit {
						cancel()
					}
					return time.Now()
				}
				root := t.TempDir()
				d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data"),
					Workers: 1, Debounce: 250 * time.Millisecond, MaxWait: 2 * time.Second, Now: now})
				d.dbw = newDBWatch(d.dbDeps())
				if !tc.dbNotReady {
					close(d.dbw.ready)
				}
				if tc.busy && !d.sched.start("busy") {
					t.Fatal("cannot mark a render in flight")
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					d.loop(ctx)
				}()
				d.changes <- change{id: "due", at: time.Now()}
				// The session comes due 250 ms in; the worker stays busy
				// for a minute of fake time.
				time.Sleep(time.Minute)
				synctest.Wait()
				n := reads.Load()
				if n > spinLimit {
					t.Fatalf("the loop woke more than %d times in %v of fake time while the session waited (busy wait)", spinLimit, time.Minute)
				}
				// Waiting, the loop wakes only for the cache check every
				// releaseCheck, reading the clock twice each time.
				if ticks := int64(time.Minute / releaseCheck); n > 2*ticks+5 {
					t.Errorf("the loop read the clock %d times in %v of waiting; want at most %d (the cache check every %v)", n, time.Minute, 2*ticks+5, releaseCheck)
				}
				if d.sched.idle("due") || d.sched.running["due"] {
					t.Fatalf("the due session started while the loop had to wait")
				}
				if tc.busy {
					d.results <- result{id: "busy", outcome: outcomeNothing, finished: time.Now()}
				}
				if tc.dbNotReady {
					close(d.dbw.ready)
				}
				synctest.Wait()
				st := d.rec.snapshot()
				if !rendered(st, "due") {
					t.Errorf("the due session was not rendered once the worker was free: %+v", st.Recent)
				}
				cancel()
				<-done
			})
		})
	}
}

// rendered reports whether status shows a finished render of session id.
func rendered(st Status, id string) bool {
	for _, s := range st.Recent {
		if s.Session == id && !s.Rendered.IsZero() && !s.Pending {
			return true
		}
	}
	return false
}
