package watch_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/watch"
)

// These tests attack the daemon the way a user's machine does: they drive
// the real binary with real files and databases written by the real
// claude-mem, and check that no bottle loses what it showed, stays stale,
// or keeps what its sources no longer hold.

// TestFaultRacingWritersNeverGoBack runs, at once, the daemon, a session
// appending turns, claude-mem writing observations, `bottled render` and
// the SessionStart hook in loops, and watches the bottle: no bottle ever
// replaces one made from a later transcript or later claude-mem rows, and
// at the end the bottle shows every turn and every observation. The race
// lasts racingRounds rounds of each CLI writer, or racingFor on a machine
// too busy to get there.
func TestFaultRacingWritersNeverGoBack(t *testing.T) {
	t.Parallel()
	w := memwriter.Require(t)
	claude, data := dirs(t)
	const id = "4ace0000-0000-4000-8000-000000000001"
	path := transcriptIn(t, claude, "-home-dev-race", id)
	// A long history makes a one-shot render read the transcript well
	// before it reads the database, which widens the window the race needs.
	if _, err := synth.File(path, id, 8<<20, 1); err != nil {
		t.Fatal(err)
	}
	synth.Append(t, path, userRec(id, "u0", "", "RACE-P0 start"))
	db := sources.ClaudeMemFile(data)
	w.Write(t, db,
		memwriter.Op{"op": "session", "content": id, "project": "race", "prompt": "RACE-P0 start"},
		memwriter.Op{"op": "register", "content": id, "memory": "mem-" + id},
		memwriter.Op{"op": "prompt", "content": id, "number": 1, "text": "RACE-P0 start"})
	startDaemon(t, claude, data, "--debounce", "1ms", "--max-wait", "5ms")

	ctx, cancel := context.WithTimeout(context.Background(), racingFor)
	defer cancel()
	var wg sync.WaitGroup
	var turns, observations, rounds atomic.Int64
	wg.Go(func() { // the session
		parent := "u0"
		for i := 1; ctx.Err() == nil; i++ {
			u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
			synth.Append(t, path, userRec(id, u, parent, fmt.Sprintf("RACE-P%d go on", i))+assistantRec(id, a, u, "m"+a, fmt.Sprintf("RACE-A%d done", i)))
			parent = a
			turns.Store(int64(i))
			time.Sleep(3 * time.Millisecond)
		}
	})
	wg.Go(func() { // claude-mem
		for i := 1; ctx.Err() == nil; i++ {
			w.Write(t, db, memwriter.Op{"op": "observation", "content": id, "prompt_number": 1, "type": "change",
				"title": fmt.Sprintf("RACE-OBS%d noted", i), "narrative": "Noted."})
			observations.Store(int64(i))
		}
	})
	const writers = 3
	for range writers { // the CLI and the hook
		wg.Go(func() {
			for ctx.Err() == nil {
				exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "render", id).Run()
				hook := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "hook", "session-start")
				hook.Stdin = strings.NewReader(`{"session_id":"` + id + `","transcript_path":"` + path + `","source":"compact"}`)
				hook.Run()
				if rounds.Add(1) >= writers*racingRounds {
					cancel()
				}
			}
		})
	}
	var backwards []string
	wg.Go(func() { // the watcher
		var last *render.State
		for ctx.Err() == nil {
			st, err := bottles.ReadState(bottles.BottlePath(bottles.BottlesDir(data), id))
			if err != nil {
				continue
			}
			if last != nil && !st.Covers(last) && len(backwards) < 5 {
				backwards = append(backwards, fmt.Sprintf("%s then %s", describe(last), describe(st)))
			}
			last = st
		}
	})
	wg.Wait()
	t.Logf("%d rounds of the CLI writers, %d turns, %d observations", rounds.Load(), turns.Load(), observations.Load())
	for _, b := range backwards {
		t.Errorf("the bottle went back: %s", b)
	}
	// Everything written reaches the bottle.
	d := &daemon{t: t, data: data}
	d.waitContains(id, fmt.Sprintf("RACE-A%d done", turns.Load()), fmt.Sprintf("RACE-OBS%d noted", observations.Load()))
}

// racingRounds is how many rounds (a render, then a hook) each CLI writer
// of TestFaultRacingWritersNeverGoBack makes while the daemon, the session
// and claude-mem write: each round is a one-shot render of an 8 MB
// transcript racing the others. 60 rounds in all took the whole racingFor
// on two cores under a load of 28 (the race the test always had on a busy
// machine); an idle one gets through them sooner.
const (
	racingRounds = 20
	racingFor    = 12 * time.Second
)

// describe is a bottle state in a few words: offsets and memory rows.
func describe(st *render.State) string {
	var parts []string
	for _, f := range st.Transcripts {
		parts = append(parts, fmt.Sprintf("offset %d", f.Offset))
	}
	if m := st.ClaudeMem; m != nil {
		parts = append(parts, fmt.Sprintf("observation %d prompt %d", m.Observation, m.Prompt))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// TestFaultCatchUpKeepsObservations writes a session and its claude-mem
// rows, renders its bottle, then, as if the daemon were down, appends a
// turn and lets claude-mem write more rows, for this session and for one
// whose transcript is gone (its bottle reconstructed). When the daemon
// starts, both bottles show every observation, old and new: catch-up does
// not render before the database is open, and rows written while the
// daemon was down reach their bottles.
func TestFaultCatchUpKeepsObservations(t *testing.T) {
	t.Parallel()
	w := memwriter.Require(t)
	claude, data := dirs(t)
	db := sources.ClaudeMemFile(data)
	const id, gone = "ca7c0000-0000-4000-8000-00000000000a", "ca7c0000-0000-4000-8000-00000000000b"
	path := firstTurn(t, claude, "-home-dev-app", id, "CATCH-P1 profile the importer", "CATCH-A1 Profiled.")
	ops := []memwriter.Op{
		{"op": "session", "content": id, "project": "app", "prompt": "CATCH-P1 profile the importer"},
		{"op": "register", "content": id, "memory": "mem-" + id},
		{"op": "prompt", "content": id, "number": 1, "text": "CATCH-P1 profile the importer"},
		{"op": "session", "content": gone, "project": "app", "prompt": "GONE-P1 old work"},
		{"op": "register", "content": gone, "memory": "mem-" + gone},
		{"op": "prompt", "content": gone, "number": 1, "text": "GONE-P1 old work"},
	}
	for i := range 39 {
		ops = append(ops, memwriter.Op{"op": "observation", "content": id, "prompt_number": 1, "type": "discovery",
			"title": fmt.Sprintf("CATCH-OBS%02d measured", i), "narrative": "Measured."})
	}
	ops = append(ops, memwriter.Op{"op": "observation", "content": gone, "prompt_number": 1, "type": "change", "title": "GONE-OBS1 old change", "narrative": "Done."})
	w.Write(t, db, ops...)
	for _, s := range []string{id, gone} {
		runBottled(t, claude, data, "", "render", s)
	}

	// The daemon is down: the session goes on and claude-mem keeps writing.
	synth.Append(t, path, userRec(id, "u2", "a1", "CATCH-P2 now fix the slow query")+assistantRec(id, "a2", "u2", "m2", "CATCH-A2 Fixed it."))
	w.Write(t, db,
		memwriter.Op{"op": "prompt", "content": id, "number": 2, "text": "CATCH-P2 now fix the slow query"},
		memwriter.Op{"op": "observation", "content": id, "prompt_number": 2, "type": "change", "title": "CATCH-OBS-DOWN rewrote the query", "narrative": "Faster."},
		memwriter.Op{"op": "observation", "content": gone, "prompt_number": 1, "type": "change", "title": "GONE-OBS-DOWN late note", "narrative": "Late."},
		memwriter.Op{"op": "kill"})

	d := startDaemon(t, claude, data, "--rescan", "1h")
	eventually(t, "catch-up is over", func() bool {
		st, err := d.status()
		return err == nil && st.CatchUp.Over
	})
	want := []string{"CATCH-A2 Fixed it.", "CATCH-OBS-DOWN rewrote the query"}
	for i := range 39 {
		want = append(want, fmt.Sprintf("CATCH-OBS%02d measured", i))
	}
	d.waitContains(id, want...)
	d.waitContains(gone, "GONE-OBS1 old change", "GONE-OBS-DOWN late note")
}

// TestFaultLostDatabase takes claude-mem's database away under a running
// daemon, three ways: deleted, replaced by a file that is not SQLite, and
// replaced by a SQLite database of another schema. Then both sessions gain
// a turn. The daemon says so once, in words, and in status; no bottle loses
// an observation: the session whose records it holds in memory is rendered
// with them, the other is kept as it is (held). When the database is back,
// both bottles are rendered again, with the rows written meanwhile.
func TestFaultLostDatabase(t *testing.T) {
	t.Parallel()
	w := memwriter.Require(t)
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, db string)
		reason string
	}{
		{"deleted", func(t *testing.T, db string) {}, "deleted"},
		{"not SQLite", func(t *testing.T, db string) {
			if err := os.WriteFile(db, []byte(strings.Repeat("this is not a database\n", 500)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a database"},
		{"another schema", func(t *testing.T, db string) {
			other, err := sql.Open("sqlite3", "file:"+db)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := other.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hello')"); err != nil {
				t.Fatal(err)
			}
		}, "sdk_sessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claude, data := dirs(t)
			db := sources.ClaudeMemFile(data)
			ids := []string{"10570000-0000-4000-8000-00000000000a", "10570000-0000-4000-8000-00000000000b"}
			var ops []memwriter.Op
			for _, id := range ids {
				firstTurn(t, claude, "-home-dev-app", id, "LOST-P1 "+id, "LOST-A1 done.")
				ops = append(ops, memwriter.Op{"op": "session", "content": id, "project": "app", "prompt": "LOST-P1 " + id},
					memwriter.Op{"op": "register", "content": id, "memory": "mem-" + id},
					memwriter.Op{"op": "prompt", "content": id, "number": 1, "text": "LOST-P1 " + id})
				for i := range 12 {
					ops = append(ops, memwriter.Op{"op": "observation", "content": id, "prompt_number": 1, "type": "change",
						"title": fmt.Sprintf("LOST-OBS%02d noted", i), "narrative": "Noted."})
				}
			}
			w.Write(t, db, ops...)
			allObs := func(extra ...string) []string {
				out := extra
				for i := range 12 {
					out = append(out, fmt.Sprintf("LOST-OBS%02d noted", i))
				}
				return out
			}
			// One session's parse state (and records) is kept, the other's
			// is evicted: the first is rendered, then the second.
			d := startDaemon(t, claude, data, "--max-cached", "1", "--rescan", "1h")
			held, cached := ids[0], ids[1]
			d.waitContains(held, allObs()...)
			d.waitContains(cached, allObs()...)
			touched := time.Now()
			synth.Append(t, filepath.Join(claude, "projects", "-home-dev-app", cached+".jsonl"), userRec(cached, "u1b", "a1", "LOST-PX touch"))
			d.waitContains(cached, "LOST-PX touch")
			d.waitSettled(cached, touched)

			// The database is kept aside, then replaced in one step (or
			// removed).
			saved := db + ".saved"
			if err := os.Link(db, saved); err != nil {
				t.Fatal(err)
			}
			os.Remove(db + "-wal")
			os.Remove(db + "-shm")
			tc.break_(t, db+".new")
			_, err := os.Stat(db + ".new")
			if err == nil {
				err = os.Rename(db+".new", db)
			} else {
				err = os.Remove(db)
			}
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, "status says the database cannot be read", func() bool {
				st, err := d.status()
				return err == nil && !st.DB.Reachable && st.DB.Error != ""
			})
			st, _ := d.status()
			if !strings.Contains(st.DB.Error, tc.reason) {
				t.Errorf("status DB error %q does not say %q", st.DB.Error, tc.reason)
			}
			changed := time.Now()
			for _, id := range ids {
				synth.Append(t, filepath.Join(claude, "projects", "-home-dev-app", id+".jsonl"),
					userRec(id, "u2", "a1", "LOST-P2 while it was gone")+assistantRec(id, "a2", "u2", "m2", "LOST-A2 went on."))
			}
			d.waitContains(cached, allObs("LOST-A2 went on.")...)
			d.waitSettled(held, changed)
			if b := d.bottle(held); !containsAll(b, allObs()...) {
				t.Errorf("the bottle of the session whose records were not in memory lost observations:\n%s", b)
			}
			st, _ = d.status()
			if st.DB.Held != 1 {
				t.Errorf("status says %d bottles held, want 1", st.DB.Held)
			}
			eventually(t, "the log says the database cannot be read", func() bool { return strings.Contains(d.stderr.String(), "level=ERROR") })
			if n := strings.Count(d.stderr.String(), "level=ERROR"); n != 1 {
				t.Errorf("%d error lines in the log, want exactly one saying the database cannot be read", n)
			}
			if !strings.Contains(d.stderr.String(), tc.reason) {
				t.Errorf("the log does not say why (%q)", tc.reason)
			}

			// The database comes back, with rows written meanwhile.
			os.Remove(db + "-wal")
			os.Remove(db + "-shm")
			if err := os.Rename(saved, db); err != nil {
				t.Fatal(err)
			}
			var more []memwriter.Op
			for _, id := range ids {
				more = append(more, memwriter.Op{"op": "observation", "content": id, "prompt_number": 2, "type": "change",
					"title": "LOST-OBS-BACK noted", "narrative": "Back."})
			}
			w.Write(t, db, more...)
			for _, id := range ids {
				d.waitContains(id, allObs("LOST-A2 went on.", "LOST-OBS-BACK noted")...)
			}
			eventually(t, "status says the database is readable", func() bool {
				st, err := d.status()
				return err == nil && st.DB.Reachable && st.DB.Held == 0
			})
		})
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestFaultFailedRendersAreRetried makes renders fail three ways: the disk
// is full, the transcript cannot be read, the bottles directory cannot be
// made. Once the fault is gone, the bottle catches up with the transcript
// by itself: nothing else changes, so only a retry can do it.
func TestFaultFailedRendersAreRetried(t *testing.T) {
	requireNamespaces(t)
	t.Parallel()
	const id = "4e740000-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name string
		// start starts the daemon and returns where its view of the data
		// directory is seen from outside ("" if the same).
		start        func(t *testing.T, claude, data string) (root string)
		break_, fix_ func(t *testing.T, claude, data string)
	}{
		{"disk full",
			func(t *testing.T, claude, data string) string {
				d := startDaemonCmd(t, claude, data, inNamespace("mount -t tmpfs -o size=512k tmpfs "+data), "--rescan", "1h")
				// The search index is opened in the background at start:
				// the disk is filled once it is, so that no file of it
				// comes or goes after.
				eventually(t, "the search index is opened", func() bool {
					return strings.Contains(d.stderr.String(), "search index ")
				})
				return strings.TrimSuffix(d.data, data)
			},
			func(t *testing.T, claude, data string) {
				f, err := os.Create(filepath.Join(data, "filler"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				for chunk := 64 << 10; chunk > 0; chunk /= 4 { // to the last byte
					for {
						if _, err := f.Write(make([]byte, chunk)); err != nil {
							break
						}
					}
				}
			},
			func(t *testing.T, claude, data string) { os.Remove(filepath.Join(data, "filler")) }},
		{"transcript unreadable",
			func(t *testing.T, claude, data string) string {
				startDaemonCmd(t, claude, data, asUser, "--rescan", "1h")
				return ""
			},
			func(t *testing.T, claude, data string) { chmodTranscript(t, claude, id, 0) },
			func(t *testing.T, claude, data string) { chmodTranscript(t, claude, id, 0o600) }},
		{"bottles directory cannot be made",
			func(t *testing.T, claude, data string) string {
				startDaemonCmd(t, claude, data, asUser, "--rescan", "1h")
				return ""
			},
			func(t *testing.T, claude, data string) {
				if err := os.RemoveAll(bottles.BottlesDir(data)); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(data, 0o500); err != nil {
					t.Fatal(err)
				}
			},
			func(t *testing.T, claude, data string) { os.Chmod(data, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claude, data := dirs(t)
			path := transcriptIn(t, claude, "-home-dev-app", id)
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			synth.Append(t, path, userRec(id, "u1", "", "RETRY-P1 deploy it")+assistantRec(id, "a1", "u1", "m1", "RETRY-A1 Deployed."))
			root := tc.start(t, claude, data)
			seen := &daemon{t: t, data: root + data} // the data directory as the daemon sees it
			seen.waitContains(id, "RETRY-A1 Deployed.")

			tc.break_(t, claude, root+data)
			synth.Append(t, path, userRec(id, "u2", "a1", "RETRY-P2 roll it back")+assistantRec(id, "a2", "u2", "m2", "RETRY-A2 Rolled back."))
			eventually(t, "a render fails", func() bool {
				st, err := seen.status()
				return err == nil && st.Renders.Failed > 0
			})
			tc.fix_(t, claude, root+data)
			seen.waitContains(id, "RETRY-A2 Rolled back.")
		})
	}
}

func chmodTranscript(t *testing.T, claude, id string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(claude, "projects", "-home-dev-app", id+".jsonl"), mode); err != nil {
		t.Fatal(err)
	}
}

// secretSession writes session id's transcript: a first prompt that gives
// secret (word+"-P1 the key is "+secret), then answers (word+"-A0" on) that
// make at least after bytes. It returns the transcript's path and where
// the secret is in it.
func secretSession(t *testing.T, claude, id, word, secret string, after int) (path string, at int64) {
	t.Helper()
	path = transcriptIn(t, claude, "-home-dev-app", id)
	head := userRec(id, "u1", "", word+"-P1 the key is "+secret+" keep it safe")
	var sb strings.Builder
	sb.WriteString(head)
	for i, parent := 0, "u1"; i == 0 || sb.Len() < len(head)+after; i++ {
		a := fmt.Sprintf("a%d", i)
		sb.WriteString(assistantRec(id, a, parent, "m"+a, fmt.Sprintf("%s-A%d %s", word, i, strings.Repeat(fmt.Sprintf("word%d ", i), 100))))
		parent = a
	}
	synth.Append(t, path, sb.String())
	return path, int64(strings.Index(head, secret))
}

// TestFaultInPlaceRedaction overwrites private text inside a transcript in
// place (same length, 80 KB before the end), as a user redacting a secret
// would: every path that reads the transcript notices, and the secret
// leaves the bottle, and with a daemon running, the search index's files.
func TestFaultInPlaceRedaction(t *testing.T) {
	const secret, blank = "REDACTME-4f7c1e9a0b", "[redacted-by-user0]"
	if len(secret) != len(blank) {
		t.Fatal("the redaction must keep the length")
	}
	t.Parallel()
	// write makes a transcript whose first prompt holds the secret, 80 KB
	// before the end, and returns where the secret is.
	write := func(t *testing.T, claude, id string) (string, int64) {
		return secretSession(t, claude, id, "REDACT", secret, 80<<10)
	}
	// rendered is write in fresh directories, then the bottle rendered by
	// the render command.
	rendered := func(t *testing.T, id string) (claude, data, path string, at int64) {
		t.Helper()
		claude, data = dirs(t)
		path, at = write(t, claude, id)
		runBottled(t, claude, data, "", "render", id)
		return claude, data, path, at
	}
	redact := func(t *testing.T, path string, at int64) { overwrite(t, path, at, blank) }
	noSecret := func(b string) bool { return strings.Contains(b, "REDACT-P1") && !strings.Contains(b, secret) }
	indexed := func(t *testing.T, data string) {
		t.Helper()
		eventually(t, "the index holds the secret", func() bool { return indexHolds(t, data, secret) })
	}
	// gone waits until the bottle is as ok wants it (the secret gone), then
	// until the index's files no longer hold the secret.
	gone := func(t *testing.T, d *daemon, id string, ok func(string) bool) {
		t.Helper()
		d.waitBottle(id, "the secret leaves the bottle", ok)
		eventually(t, "the secret leaves the index's files", func() bool { return !indexHolds(t, d.data, secret) })
	}

	t.Run("daemon, written in place", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		const id = "4ed0c700-0000-4000-8000-000000000001"
		path, at := write(t, claude, id)
		d := startDaemon(t, claude, data, "--rescan", "1h") // events only
		d.waitContains(id, secret)
		indexed(t, data)
		fileClockTick(t, path)
		redact(t, path, at)
		gone(t, d, id, noSecret)
	})
	// With an append after the redaction, the transcript grew: a render
	// reads only what was appended, and the rescan must find the rest once
	// the transcript is quiet (it rescans five times a second and checks a
	// transcript once quiet for 100 ms). Stopped meanwhile, the daemon sees
	// both writes as one change, as when it is busy, and looks once the
	// transcript's time is old enough to be trusted (sources.Settled), as
	// after a debounce of 250 ms.
	for _, tc := range []struct {
		name, id string
		stopped  bool
	}{
		{"daemon, written in place with an append", "4ed0c700-0000-4000-8000-000000000002", false},
		{"daemon, written in place with an append while it was stopped", "4ed0c700-0000-4000-8000-000000000006", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claude, data := dirs(t)
			path, at := write(t, claude, tc.id)
			d := startDaemon(t, claude, data, "--check-quiet", "100ms")
			d.waitContains(tc.id, secret)
			indexed(t, data)
			if tc.stopped {
				if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
			}
			redact(t, path, at)
			synth.Append(t, path, userRec(tc.id, "u9", "a0", "REDACT-P9 and one more thing"))
			if tc.stopped {
				past := time.Now().Add(-time.Second)
				if err := os.Chtimes(path, past, past); err != nil {
					t.Fatal(err)
				}
				if err := d.cmd.Process.Signal(syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
			}
			gone(t, d, tc.id, func(b string) bool { return noSecret(b) && strings.Contains(b, "REDACT-P9") })
		})
	}
	t.Run("daemon started after it", func(t *testing.T) {
		t.Parallel()
		const id = "4ed0c700-0000-4000-8000-000000000004"
		claude, data, path, at := rendered(t, id)
		runBottled(t, claude, data, "", "index") // the search index is built from that bottle
		d := &daemon{t: t, data: data}
		if !strings.Contains(d.bottle(id), secret) || !indexHolds(t, data, secret) {
			t.Fatal("the bottle and the index do not hold the secret to begin with")
		}
		fileClockTick(t, path)
		redact(t, path, at)
		d = startDaemon(t, claude, data, "--rescan", "1h") // its catch-up only
		d.logged("search index ready", 1)
		gone(t, d, id, noSecret)
	})
	t.Run("daemon that never read the transcript", func(t *testing.T) {
		// The daemon finds the bottle fresh at start, so it holds no
		// parse state for the session (as after an eviction) when the
		// redaction comes: only the bottle can tell it was a rewrite.
		t.Parallel()
		const id = "4ed0c700-0000-4000-8000-000000000005"
		claude, data, path, at := rendered(t, id)
		// Another tick of the file clock; then a daemon that follows
		// events only.
		fileClockTick(t, path)
		d := startDaemon(t, claude, data, "--rescan", "1h")
		indexed(t, data)
		redact(t, path, at)
		gone(t, d, id, noSecret)
	})
	t.Run("no daemon: hook or render command, then a search", func(t *testing.T) {
		t.Parallel()
		for i, writer := range []string{"hook", "render"} {
			id := fmt.Sprintf("4ed0c700-0000-4000-8000-00000000001%d", i)
			claude, data, path, at := rendered(t, id)
			cli := func(stdin string, args ...string) { runBottled(t, claude, data, stdin, args...) }
			// Other sessions in the same index segment: FTS5 rewrites by
			// itself a segment that has more than a tenth of its rows
			// deleted, which would hide a missing purge.
			for j := range 30 {
				other := fmt.Sprintf("4ed0c700-0000-4000-8000-%012d", 200+100*i+j)
				at := time.Now()
				b, err := render.Render(render.Input{SessionID: other, Now: at, Location: time.Local, Spine: &sources.Spine{
					SessionID: other, CWD: "/home/dev/app", Started: at, Entries: []sources.Entry{
						{Kind: sources.EntryUser, Text: fmt.Sprintf("OTHER-%d a question", j), Time: at},
						{Kind: sources.EntryAssistant, Text: "an answer", Time: at},
					}}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := bottles.Open(data, nil, nil).Write(b); err != nil {
					t.Fatal(err)
				}
			}
			cli("", "index")
			if !indexHolds(t, data, secret) {
				t.Fatalf("%s: the index does not hold the secret to begin with", writer)
			}
			fileClockTick(t, path)
			redact(t, path, at)
			if writer == "hook" {
				cli(`{"session_id":"`+id+`","transcript_path":"`+path+`","source":"compact"}`, "hook", "session-start")
			} else {
				cli("", "render", id)
			}
			if b := (&daemon{t: t, data: data}).bottle(id); !noSecret(b) {
				t.Fatalf("%s: the bottle still shows the secret", writer)
			}
			// A search brings the index up to date first, and purges it,
			// as the marker the writer left asks.
			cli("", "search", "--all", "REDACT")
			if indexHolds(t, data, secret) {
				t.Errorf("%s, then a search: the index's files still hold the secret", writer)
			}
		}
	})
	t.Run("hook and render command", func(t *testing.T) {
		t.Parallel()
		const id = "4ed0c700-0000-4000-8000-000000000003"
		claude, data, path, at := rendered(t, id)
		cli := func(stdin string, args ...string) string { return runBottled(t, claude, data, stdin, args...) }
		d := &daemon{t: t, data: data}
		if !strings.Contains(d.bottle(id), secret) {
			t.Fatal("the bottle does not show the secret to begin with")
		}
		fileClockTick(t, path)
		redact(t, path, at)
		cli(`{"session_id":"`+id+`","transcript_path":"`+path+`","source":"compact"}`, "hook", "session-start")
		if b := d.bottle(id); !noSecret(b) {
			t.Errorf("after the hook, the bottle still shows the redacted secret")
		}
		// Put the secret back in the bottle (an earlier render), then
		// the render command.
		cli("", "render", id)
		overwrite(t, path, at, secret)
		os.Remove(bottles.BottlePath(bottles.BottlesDir(data), id))
		cli("", "render", id)
		fileClockTick(t, path)
		redact(t, path, at)
		cli("", "render", id)
		if b := d.bottle(id); !noSecret(b) {
			t.Errorf("after bottled render, the bottle still shows the redacted secret")
		}
	})
}

// TestFaultInotifyLimit runs the daemon where only three directories can
// be watched (the per-namespace inotify limit, so the machine's is left
// alone): it says so once, in words, with the way to raise it, lists the
// directories it could not watch in status, and still brings changes in
// them to their bottles, at the rescan.
func TestFaultInotifyLimit(t *testing.T) {
	requireNamespaces(t)
	t.Parallel()
	claude, data := dirs(t)
	ids, paths := promptedSessions(t, claude, "1e070000-0000-4000-8000-00000000000%d", 5, "LIMIT-P1 go")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	d := startDaemonCmd(t, claude, data, inNamespace("echo 3 > /proc/sys/user/max_inotify_watches"), "--rescan", "300ms")
	for _, id := range ids {
		d.waitContains(id, "LIMIT-P1 go")
	}
	// A status answer may be a snapshot made up to twice statusReuse ago,
	// before the scan that met the limit: wait for one made after it.
	var unwatched []string
	eventually(t, "status lists the 4 project directories beyond the limit as unwatched", func() bool {
		st, err := d.status()
		if err != nil {
			return false
		}
		unwatched = st.Unwatched
		return len(unwatched) == 4
	})
	for _, dir := range unwatched {
		if filepath.Dir(dir) != filepath.Join(claude, "projects") {
			t.Errorf("status lists %q as unwatched, want only project directories", dir)
		}
	}
	// Changes in every directory still arrive, through the rescan.
	for i, id := range ids {
		synth.Append(t, paths[i], userRec(id, "u2", "u1", "LIMIT-P2 still followed"))
	}
	for _, id := range ids {
		d.waitContains(id, "LIMIT-P2 still followed")
	}
	d.waitRescans(3)
	log := d.stderr.String()
	if n := strings.Count(log, "no space left on device"); n > 0 {
		t.Errorf("the log says %d times %q, which reads like a full disk", n, "no space left on device")
	}
	if n := linesWith(log, "max_user_watches"); n != 1 {
		t.Errorf("%d log lines name the inotify watch limit, want one:\n%s", n, log)
	}
	if !strings.Contains(log, "sysctl") {
		t.Errorf("the log does not say how to raise the limit")
	}
}

// linesWith counts the lines of s that contain sub.
func linesWith(s, sub string) int {
	n := 0
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

// TestFaultNoFileWatcher runs the daemon where no inotify instance can be
// made: it says so, keeps running and finds changes at the rescan.
func TestFaultNoFileWatcher(t *testing.T) {
	requireNamespaces(t)
	t.Parallel()
	claude, data := dirs(t)
	const id = "1e070000-0000-4000-8000-0000000000f1"
	path := transcriptIn(t, claude, "-home-dev-p", id)
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	synth.Append(t, path, userRec(id, "u1", "", "NOWATCH-P1 go"))
	d := startDaemonCmd(t, claude, data, inNamespace("echo 0 > /proc/sys/user/max_inotify_instances"), "--rescan", "300ms")
	d.waitContains(id, "NOWATCH-P1 go")
	synth.Append(t, path, userRec(id, "u2", "u1", "NOWATCH-P2 still followed"))
	d.waitContains(id, "NOWATCH-P2 still followed")
	if n := linesWith(d.stderr.String(), "max_user_instances"); n != 1 {
		t.Errorf("%d log lines name the inotify instance limit, want one", n)
	}
}

// TestFaultSymlinks starts the daemon on a project directory that is a
// symlink to a directory elsewhere and on a transcript that is a symlink
// to a file elsewhere: both are watched (with the rescan out of the way,
// only a watch brings the change), whether the links were there at start
// or made later.
func TestFaultSymlinks(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	elsewhere := filepath.Join(filepath.Dir(claude), "elsewhere")
	projects := filepath.Join(claude, "projects")
	for _, dir := range []string{filepath.Join(elsewhere, "proj"), filepath.Join(elsewhere, "files"), filepath.Join(projects, "-real")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	const inDir, asFile, later = "5e1f0000-0000-4000-8000-00000000000a", "5e1f0000-0000-4000-8000-00000000000b", "5e1f0000-0000-4000-8000-00000000000c"
	// A project directory that is a symlink, and a transcript that is one.
	synth.Append(t, filepath.Join(elsewhere, "proj", inDir+".jsonl"), userRec(inDir, "u1", "", "LINK-P1 in a linked dir"))
	if err := os.Symlink(filepath.Join(elsewhere, "proj"), filepath.Join(projects, "-linked")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(elsewhere, "files", "kept-elsewhere.jsonl")
	synth.Append(t, target, userRec(asFile, "u1", "", "LINK-P1 a linked file"))
	if err := os.Symlink(target, filepath.Join(projects, "-real", asFile+".jsonl")); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, claude, data, "--rescan", "1h")
	d.waitContains(inDir, "LINK-P1 in a linked dir")
	d.waitContains(asFile, "LINK-P1 a linked file")
	synth.Append(t, filepath.Join(elsewhere, "proj", inDir+".jsonl"), userRec(inDir, "u2", "u1", "LINK-P2 seen through the link"))
	synth.Append(t, target, userRec(asFile, "u2", "u1", "LINK-P2 seen through the link"))
	d.waitContains(inDir, "LINK-P2 seen through the link")
	d.waitContains(asFile, "LINK-P2 seen through the link")

	// A transcript symlink made while the daemon runs.
	laterTarget := filepath.Join(elsewhere, "files", "later.jsonl")
	synth.Append(t, laterTarget, userRec(later, "u1", "", "LINK-LATER-P1 go"))
	if err := os.Symlink(laterTarget, filepath.Join(projects, "-real", later+".jsonl")); err != nil {
		t.Fatal(err)
	}
	d.waitContains(later, "LINK-LATER-P1 go")
	synth.Append(t, laterTarget, userRec(later, "u2", "u1", "LINK-LATER-P2 seen through the link"))
	d.waitContains(later, "LINK-LATER-P2 seen through the link")
}

// deleteDataDir deletes a running daemon's data directory, as rm -r does,
// again if the daemon made a file in it meanwhile (its rescan makes the
// socket again) and the directory could not go.
func deleteDataDir(t *testing.T, data string) {
	t.Helper()
	eventually(t, "the data directory is deleted", func() bool {
		err := os.RemoveAll(data)
		if err != nil && !errors.Is(err, syscall.ENOTEMPTY) {
			t.Fatal(err)
		}
		return err == nil
	})
}

// TestFaultDataDirDeleted deletes the data directory under a running
// daemon: it notices, makes its lock and socket again (status finds it,
// a second daemon refuses to start), and renders the bottles again. If a
// second daemon starts in the moment between, one of the two stops,
// saying why: never two daemons on one data directory.
func TestFaultDataDirDeleted(t *testing.T) {
	t.Parallel()
	t.Run("recreated", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		const id = "de1e0000-0000-4000-8000-000000000001"
		path := transcriptIn(t, claude, "-p", id)
		synth.Append(t, path, userRec(id, "u1", "", "DELETED-P1 go"))
		// The rescan renders the lost bottle again once its transcript
		// has been quiet for 100 ms.
		d := startDaemon(t, claude, data, "--check-quiet", "100ms")
		d.waitContains(id, "DELETED-P1 go")
		waitAtRest(t, d, id)
		deleteDataDir(t, data)
		eventually(t, "the daemon answers on its socket again", func() bool {
			_, err := d.status()
			return err == nil
		})
		second := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "run")
		if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), "another bottled daemon is running") {
			t.Errorf("a second daemon: %v %s; want it refused", err, out)
		}
		d.waitContains(id, "DELETED-P1 go")
		if code := d.stop(); code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", code)
		}
	})
	t.Run("raced", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		first := startDaemon(t, claude, data)
		waitAtRest(t, first)
		deleteDataDir(t, data)
		second := launchDaemon(t, claude, data, nil)
		// One of them stops, saying another daemon runs (the second at
		// start if the first made its lock again before, else the first
		// when it finds the second's lock); the other keeps the directory.
		var stopped, kept *daemon
		eventually(t, "one of the two daemons stops", func() bool {
			for _, pair := range [][2]*daemon{{first, second}, {second, first}} {
				select {
				case err := <-pair[0].exited:
					pair[0].exited <- err // for the cleanup
					stopped, kept = pair[0], pair[1]
					return true
				default:
				}
			}
			return false
		})
		if !strings.Contains(stopped.stderr.String(), "another bottled daemon") {
			t.Errorf("a daemon stopped without saying it was because of another:\n%s", stopped.stderr.String())
		}
		eventually(t, "the other answers on the directory's socket", func() bool {
			st, err := kept.status()
			return err == nil && st.PID == kept.cmd.Process.Pid
		})
		select {
		case err := <-kept.exited:
			t.Errorf("both daemons stopped; the second: %v\n%s", err, kept.stderr.String())
		default:
		}
	})
}

// waitAtRest waits until the daemon writes nothing in its data directory:
// its search index is ready and the sessions given are settled (rendered
// and indexed). Deleting the directory earlier races the daemon making
// its index: rm -rf then fails ("directory not empty"), which is not what
// the tests of a deletion are about.
func waitAtRest(t *testing.T, d *daemon, ids ...string) {
	t.Helper()
	eventually(t, "the search index is ready", func() bool {
		st, err := d.status()
		return err == nil && st.Search.State == watch.SearchReady && st.CatchUp.Over
	})
	for _, id := range ids {
		d.waitSettled(id, time.Time{})
	}
}

// TestFaultSIGHUP sends SIGHUP to a daemon in the middle of a catch-up (its
// renders wait to put their bottles in place while a writer holds the
// bottles' lock): it keeps running, takes each SIGHUP as a cue to check
// everything again, and leaves nothing behind when it stops. Temporary
// files a killed hook or render command left are removed by the running
// daemon at the check a SIGHUP asks for (it rescans only hourly
// otherwise).
func TestFaultSIGHUP(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	for i := range 6 {
		id := fmt.Sprintf("5160b000-0000-4000-8000-%012d", i)
		firstTurn(t, claude, "-p", id, "SIGHUP a prompt", "SIGHUP an answer")
	}
	d, release := busyDaemon(t, claude, data, func(waiting int) bool { return waiting > 0 }, "--rescan", "1h")
	const hup = "SIGHUP: checking every bottle"
	for i := range 3 {
		d.cmd.Process.Signal(syscall.SIGHUP)
		d.logged(hup, i+1)
	}
	// The signals did not end the catch-up they came in.
	if st, err := d.status(); err != nil || st.CatchUp.Over {
		t.Fatalf("catch-up over (status err %v) after SIGHUP, with every render still waiting", err)
	}
	release()
	eventually(t, "catch-up is over", func() bool {
		st, err := d.status()
		return err == nil && st.CatchUp.Over
	})
	select {
	case err := <-d.exited:
		t.Fatalf("the daemon exited on SIGHUP: %v", err)
	default:
	}

	// A temporary file as a killed writer leaves it, a few minutes old.
	left := filepath.Join(bottles.BottlesDir(data), ".tmp-5160b000-0000-4000-8000-000000000000-1234.md")
	if err := os.WriteFile(left, []byte("half a bottle"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-5 * time.Minute)
	os.Chtimes(left, old, old)
	d.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "the leftover temporary file is removed", func() bool {
		_, err := os.Stat(left)
		return os.IsNotExist(err)
	})
	if code := d.stop(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if n := temporaries(data); n > 0 {
		t.Errorf("%d temporary files left", n)
	}
	if _, err := os.Stat(filepath.Join(data, watch.SocketFile)); !os.IsNotExist(err) {
		t.Errorf("socket left behind (stat err %v)", err)
	}
}

// TestFaultStatusAsksTheDaemon runs `bottled status` beside a daemon: the
// bottles' freshness comes from the daemon, which knows it, not from
// reading every transcript again; without the daemon, from the disk.
func TestFaultStatusAsksTheDaemon(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	ids, _ := promptedSessions(t, claude, "57a70000-0000-4000-8000-00000000000%d", 3, "STATUS-P1 go")
	d := startDaemon(t, claude, data)
	for _, id := range ids {
		d.waitContains(id, "STATUS-P1 go")
	}
	var sv watch.Survey
	eventually(t, "status shows the daemon's knowledge", func() bool {
		sv = diskSurvey(t, claude, data)
		return sv.Source == "daemon" && sv.Transcripts == 3 && sv.Fresh == 3
	})
	if len(sv.Sessions) != 3 || sv.Sessions[0].Freshness != "fresh" {
		t.Errorf("sessions = %+v", sv.Sessions)
	}
	d.stop()
	if sv = diskSurvey(t, claude, data); sv.Source != "disk" || sv.Fresh != 3 {
		t.Errorf("without the daemon: %+v; want the disk's survey", sv)
	}
}

// indexHolds reports whether a file of the search index in dataDir holds
// word (not only whether a search finds it: FTS5 keeps a deleted row's
// words in its files until its segments are merged).
func indexHolds(t testing.TB, dataDir, word string) bool {
	t.Helper()
	dir := index.Dir(dataDir)
	entries, _ := os.ReadDir(dir)
	random := strings.ToLower(randomPart(word))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), word) || random != "" && strings.Contains(strings.ToLower(string(b)), random) {
			return true
		}
	}
	return false
}

// randomPart is the part of a test's secret that only the secret holds:
// the secrets are a label the bottle keeps after their redaction
// ("PURGEKILL-P1" finds it) and a random word, "PURGEKILL-9c2e71d5a3".
// The index's tokenizer keeps that word apart, folded to lower case, so
// an index whose files hold it still holds the secret, whatever form of
// the whole secret it dropped.
func randomPart(secret string) string {
	words := strings.FieldsFunc(secret, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) < 2 || len(words[len(words)-1]) < 8 {
		return ""
	}
	return words[len(words)-1]
}

// waitIndexed waits until the daemon's search index is ready and a file of
// it holds word.
func (d *daemon) waitIndexed(word string) {
	d.t.Helper()
	eventually(d.t, "the index is ready, with "+word, func() bool {
		st, err := d.status()
		return err == nil && st.Search.State == watch.SearchReady && indexHolds(d.t, d.data, word)
	})
}

// overwrite writes text over the bytes of the file at path from offset
// at, in place, as a user redacting a transcript with an editor that
// keeps the file does.
func overwrite(t *testing.T, path string, at int64, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(text), at); err != nil {
		t.Fatal(err)
	}
}

// waitPurged waits until gone holds (what a redaction took out of the
// bottles is out of the search index's files too), then until the purge
// marker is gone: the purge the redaction asked for is done.
func waitPurged(t *testing.T, data, what string, gone func() bool) {
	t.Helper()
	eventually(t, what, gone)
	eventually(t, "the purge marker goes", func() bool {
		_, err := os.Lstat(bottles.Open(data, nil, nil).PurgeMarker())
		return errors.Is(err, fs.ErrNotExist)
	})
}

// fileClockTick waits until a file written now gets a later modification
// time than the file at path has, so that a change made next is told from
// the write before by its time (file times move with the kernel's clock
// tick, a few milliseconds, and coarser on some file systems).
func fileClockTick(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "clock")
	eventually(t, "the file clock moves past "+filepath.Base(path)+"'s time", func() bool {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := os.Stat(probe)
		return err == nil && p.ModTime().After(info.ModTime())
	})
}
