package watch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/watch"
)

// More faults, found by a second campaign against the daemon, the hooks and
// the CLI: each test drives the real binary on real files.

// runBottledExit runs bottled and returns its combined output and exit
// code, for commands whose failure is what a test looks at.
func runBottledExit(t *testing.T, claude, data, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--claude-dir", claude, "--data-dir", data}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("bottled %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// runBottledSplit is runBottledExit with stdout and stderr apart (the
// hooks must print nothing but their JSON on stdout).
func runBottledSplit(t *testing.T, claude, data, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--claude-dir", claude, "--data-dir", data}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("bottled %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// diskSurvey is `bottled status --json`'s survey of the bottles.
func diskSurvey(t *testing.T, claude, data string) watch.Survey {
	t.Helper()
	out, err := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "status", "--json").Output()
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var rep struct{ Disk watch.Survey }
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return rep.Disk
}

// TestFaultLongStateLine: a bottle whose header or state line is longer
// than a read buffer (a working directory of 5 KB; a session continued
// over 18 transcripts, in a project directory with a long name) is a
// bottle like any other: the daemon renders it once, status calls it
// fresh, the hook points to it without rendering it again, and search
// finds it, after a rebuild of the index too.
func TestFaultLongStateLine(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const deep = "1057a7e0-0000-4000-8000-000000000001"
	cwd := "/home/dev/" + strings.Repeat("deeper/", 720)
	deepPath := transcriptIn(t, claude, "-home-dev-deep", deep)
	synth.Append(t, deepPath, synth.Rec{Session: deep, UUID: "u1", At: time.Now(), CWD: cwd}.User("LONGSTATE-DEEP where am I")+
		assistantRec(deep, "a1", "u1", "m1", "LONGSTATE-DEEP-A very deep"))
	project := "-home-dev-" + strings.Repeat("a-long-project-name-", 11)
	var chain []string
	for i := range 18 {
		chain = append(chain, fmt.Sprintf("1057a7e0-0000-4000-8000-%012d", 100+i))
	}
	for i, id := range chain {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		recs := userRec(id, u, "", fmt.Sprintf("LONGSTATE-CHAIN-P%d go on", i)) + assistantRec(id, a, u, "m"+a, fmt.Sprintf("LONGSTATE-CHAIN-A%d", i))
		if i+1 < len(chain) {
			recs += `{"type":"continued-in","sessionId":"` + id + `","continuedInSessionId":"` + chain[i+1] + `"}` + "\n"
		}
		synth.Append(t, transcriptIn(t, claude, project, id), recs)
	}
	last := chain[len(chain)-1]

	d := startDaemon(t, claude, data)
	d.waitContains(deep, "LONGSTATE-DEEP-A very deep")
	d.waitContains(last, "LONGSTATE-CHAIN-P0 go on", "LONGSTATE-CHAIN-A17")
	for _, id := range []string{deep, last} {
		d.waitSettled(id, time.Time{})
	}
	eventually(t, "the daemon calls every bottle fresh", func() bool {
		st, err := d.status()
		return err == nil && st.Bottles != nil && st.Bottles.Transcripts == 19 && st.Bottles.Fresh == 19
	})
	if code := d.stop(); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	sv := diskSurvey(t, claude, data)
	if sv.Fresh != 19 {
		t.Errorf("status on disk: %d of %d fresh, %d missing", sv.Fresh, sv.Transcripts, sv.Missing)
	}

	before := (&daemon{t: t, data: data}).bottle(deep)
	out := runBottled(t, claude, data, `{"session_id":"`+deep+`","transcript_path":"`+deepPath+`","source":"compact"}`, "hook", "session-start")
	if !strings.Contains(out, deep+".md") {
		t.Errorf("the hook gave no pointer: %s", out)
	}
	if after := (&daemon{t: t, data: data}).bottle(deep); after != before {
		t.Error("the hook rendered a fresh bottle again")
	}

	for _, rebuild := range []bool{false, true} {
		if rebuild {
			runBottled(t, claude, data, "", "index", "--rebuild")
		}
		for _, word := range []string{"LONGSTATE-DEEP-A", "LONGSTATE-CHAIN-A17"} {
			if out, code := runBottledExit(t, claude, data, "", "search", "--all", word); code != 0 {
				t.Errorf("search %s (rebuilt %v): exit %d\n%s", word, rebuild, code, out)
			}
		}
	}
}

// TestFaultLinkedDirectories: the directories bottled makes in the data
// directory (bottles/, bottles/archive/, the search index's) are never
// followed when they are symbolic links, which someone else (or a dotfiles
// tool gone wrong) made: nothing is moved or written into what they point
// to, and its mode is left alone; the hook says so on stderr and exits 0,
// the render command fails saying so, the daemon logs it once and shows it
// in status, and carries on once the link is gone. The data directory
// itself may be a link: it is the user's to place, and is followed.
func TestFaultLinkedDirectories(t *testing.T) {
	t.Parallel()
	// elsewhere is a directory outside the data directory, of mode perm.
	elsewhere := func(t *testing.T, perm fs.FileMode) string {
		dir := filepath.Join(t.TempDir(), "elsewhere")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, perm); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	untouched := func(t *testing.T, dir string, perm fs.FileMode) {
		t.Helper()
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode() & (fs.ModePerm | fs.ModeSticky); got != perm {
			t.Errorf("the linked directory's mode is %v, was %v", got, perm)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("bottled wrote into the linked directory: %s…", entries[0].Name())
		}
	}
	session := func(t *testing.T, claude, id, word string) string {
		path := firstTurn(t, claude, "-home-dev-app", id, word+" a prompt", word+" an answer")
		return path
	}

	t.Run("hook session-end, archive linked to a world-writable directory", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		const id = "11a4ed00-0000-4000-8000-000000000001"
		path := session(t, claude, id, "LINKED-ARCHIVE")
		runBottled(t, claude, data, "", "render", id)
		public := elsewhere(t, 0o777|fs.ModeSticky)
		bottlesDir := bottles.BottlesDir(data)
		if err := os.Symlink(public, bottles.ArchiveDir(bottlesDir)); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runBottledSplit(t, claude, data,
			`{"session_id":"`+id+`","transcript_path":"`+path+`","hook_event_name":"SessionEnd","reason":"clear"}`, "hook", "session-end")
		if code != 0 || stdout != "" {
			t.Errorf("hook: exit %d, stdout %q; want 0 and nothing", code, stdout)
		}
		if !strings.Contains(stderr, "symbolic link") {
			t.Errorf("the hook does not say why it did nothing: %q", stderr)
		}
		if _, err := os.Stat(bottles.BottlePath(bottlesDir, id)); err != nil {
			t.Errorf("the bottle moved: %v", err)
		}
		untouched(t, public, 0o777|fs.ModeSticky)
	})

	t.Run("render command, bottles linked to another directory", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		const id = "11a4ed00-0000-4000-8000-000000000002"
		session(t, claude, id, "LINKED-RENDER")
		shared := elsewhere(t, 0o755)
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(shared, bottles.BottlesDir(data)); err != nil {
			t.Fatal(err)
		}
		out, code := runBottledExit(t, claude, data, "", "render", id)
		if code == 0 || !strings.Contains(out, "symbolic link") || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("render: exit %d, output %q; want a one-line error naming the link", code, out)
		}
		untouched(t, shared, 0o755)
	})

	t.Run("index command, the index linked to another directory", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		const id = "11a4ed00-0000-4000-8000-000000000007"
		session(t, claude, id, "LINKED-INDEX")
		runBottled(t, claude, data, "", "render", id)
		shared := elsewhere(t, 0o755)
		if err := os.Symlink(shared, index.Dir(data)); err != nil {
			t.Fatal(err)
		}
		out, code := runBottledExit(t, claude, data, "", "index")
		if code == 0 || !strings.Contains(out, "symbolic link") {
			t.Errorf("index: exit %d, output %q; want an error naming the link", code, out)
		}
		untouched(t, shared, 0o755)
	})

	t.Run("daemon, bottles linked to another directory", func(t *testing.T) {
		t.Parallel()
		claude, data := dirs(t)
		shared := elsewhere(t, 0o755)
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		bottlesDir := bottles.BottlesDir(data)
		if err := os.Symlink(shared, bottlesDir); err != nil {
			t.Fatal(err)
		}
		ids := []string{"11a4ed00-0000-4000-8000-000000000003", "11a4ed00-0000-4000-8000-000000000004"}
		for _, id := range ids {
			session(t, claude, id, "LINKED-DAEMON")
		}
		d := startDaemon(t, claude, data)
		var st *watch.Status
		eventually(t, "status says why no bottle is written", func() bool {
			var err error
			st, err = d.status()
			return err == nil && st.Renders.Failed >= 2 && strings.Contains(st.Blocked, "symbolic link")
		})
		// The log comes through a pipe, and may trail the status.
		const blocked = "level=WARN msg=\"no bottle can be written"
		eventually(t, "the daemon says why no bottle is written", func() bool { return strings.Contains(d.stderr.String(), blocked) })
		if n := strings.Count(d.stderr.String(), blocked); n != 1 {
			t.Errorf("the daemon said %d times that it cannot write bottles, want once", n)
		}
		untouched(t, shared, 0o755)
		// Once the link is gone, the daemon makes the directory and writes.
		if err := os.Remove(bottlesDir); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			d.waitContains(id, "LINKED-DAEMON an answer")
		}
		eventually(t, "status no longer says it is blocked", func() bool {
			st, err := d.status()
			return err == nil && st.Blocked == ""
		})
	})

	t.Run("data dir a link", func(t *testing.T) {
		// (A short name: the status socket's path is bounded.)
		t.Parallel()
		claude, real := dirs(t)
		if err := os.MkdirAll(real, 0o700); err != nil {
			t.Fatal(err)
		}
		data := filepath.Join(t.TempDir(), "d")
		if err := os.Symlink(real, data); err != nil {
			t.Fatal(err)
		}
		const id, other = "11a4ed00-0000-4000-8000-000000000005", "11a4ed00-0000-4000-8000-000000000006"
		session(t, claude, id, "LINKED-DATA")
		session(t, claude, other, "LINKED-DATA-CLI")
		runBottled(t, claude, data, "", "render", other)
		d := startDaemon(t, claude, data)
		d.waitContains(id, "LINKED-DATA an answer")
		for _, s := range []string{id, other} {
			if _, err := os.Stat(bottles.BottlePath(bottles.BottlesDir(real), s)); err != nil {
				t.Errorf("the bottle is not in the directory the data directory links to: %v", err)
			}
		}
	})
}

// TestFaultClockSkewKeepsClear: a session cleared while the clock was
// wrong (years ahead) has an archive stamped in the future; resumed and
// cleared again, its newest archive is the second, whatever the stamps say:
// the daemon leaves the session cleared, and the archive a search of
// cleared sessions shows is the one with the resumed turn.
func TestFaultClockSkewKeepsClear(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "c10c5e11-0000-4000-8000-000000000001"
	path, d := watchedFirstTurn(t, claude, data, "-p", id, "SKEW-P1 first", "SKEW-A1 done")

	clearSession(t, claude, data, id, path)
	// The first /clear ran on a clock years ahead.
	archive := bottles.ArchiveDir(bottles.BottlesDir(data))
	entries, err := os.ReadDir(archive)
	if err != nil || len(entries) != 1 {
		t.Fatalf("archive after the first /clear: %v, %v", entries, err)
	}
	first := entries[0].Name()
	future := time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC)
	skewed := filepath.Join(archive, future.Format("20060102T150405Z")+first[len("20060102T150405Z"):])
	if err := os.Rename(filepath.Join(archive, first), skewed); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(skewed, future, future); err != nil {
		t.Fatal(err)
	}

	// Resumed: the live bottle is back, with the new turn.
	synth.Append(t, path, userRec(id, "u2", "a1", "SKEW-P2 resumed")+assistantRec(id, "a2", "u2", "m2", "SKEW-A2 done again"))
	d.waitContains(id, "SKEW-A2 done again")

	// Cleared again, on a right clock; Claude Code appends its SessionEnd
	// hook's record, which the daemon renders.
	clearedAsClaudeCode(t, d, id, path, "a2")
	out, code := runBottledExit(t, claude, data, "", "search", "--all", "--archived", "SKEW-A2")
	if code != 0 {
		t.Errorf("a search of cleared sessions does not find the resumed turn: exit %d\n%s", code, out)
	}
}

// TestFaultKilledDuringPurge kills the daemon (kill -9) while it purges the
// search index after a redaction, at the point where the purge has copied
// the database anew and waits to empty the WAL (a reader, here this test,
// holds an older snapshot: any process reading the index may). Restarted,
// the daemon purges again: the redacted secret leaves the index's files,
// and only then does the purge marker go.
func TestFaultKilledDuringPurge(t *testing.T) {
	t.Parallel()
	const secret = "PURGEKILL-9c2e71d5a3"
	claude, data, d, redact := secretIndexed(t, "9c2e71d5-0000-4000-8000-000000000001", "PURGEKILL", secret, 200<<10)

	// A reader holds a snapshot of the index from before the redaction.
	db := indexGeneration(t, data)
	snapshot := memwriter.Hold(t, db, []string{"BEGIN"}, "mode=ro")
	var n int
	if err := snapshot.QueryRowContext(context.Background(), "SELECT count(*) FROM bottles").Scan(&n); err != nil || n != 1 {
		t.Fatalf("reading the index: %d bottles, %v", n, err)
	}
	size := func(p string) int64 {
		info, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return info.Size()
	}
	// The WAL may hold the bottle's blocks already (indexed after the
	// build, not yet checkpointed): the purge's copy is measured past it.
	dbSize, walSize := size(db), size(db+"-wal")

	redact("[redacted-by-user01]")
	// The purge merges the index's segments and copies the database anew
	// (VACUUM), both into the WAL, which it then waits to empty. (The
	// update of the bottle's changed block adds a few pages only.)
	eventually(t, "the purge has copied the index anew", func() bool { return size(db+"-wal") > walSize+3*dbSize/2 })
	d.kill()

	startDaemon(t, claude, data, "--rescan", "1h")
	// The purge may empty the WAL now.
	if _, err := snapshot.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	snapshot.Close()
	waitPurged(t, data, "the secret leaves the index's files", func() bool { return !indexHolds(t, data, secret) })
	if hits, code := runBottledExit(t, claude, data, "", "search", "--all", "PURGEKILL-P1"); code != 0 {
		t.Errorf("search after the purge: exit %d\n%s", code, hits)
	}
}

// TestFaultKilledBeforePurgeAsked kills the daemon (kill -9) after it has
// written the bottle of a redacted transcript and before it has indexed
// it: another process holds the index's write lock, so the daemon waits
// there. The old words are still in the index's files, and the bottle on
// disk is fresh, so only a purge asked for before the bottle was written
// tells the restarted daemon to purge them.
func TestFaultKilledBeforePurgeAsked(t *testing.T) {
	t.Parallel()
	const secret = "ASKKILL-5b7d20e4c1"
	claude, data, d, redact := secretIndexed(t, "5b7d20e4-0000-4000-8000-000000000001", "ASKKILL", secret, 0)

	// Another process writes to the index: the daemon's update of the
	// bottle waits for it (the index's busy timeout).
	release := holdIndexWrites(t, data)

	redact("[redacted-by-user01]")
	d.kill()
	release()

	startDaemon(t, claude, data, "--rescan", "1h")
	waitPurged(t, data, "the secret leaves the index's files", func() bool { return !indexHolds(t, data, secret) })
}

// secretIndexed writes session id, whose first prompt (word-P1) holds
// secret, after bytes before the transcript's end (secretSession), starts
// a daemon that follows events only, and waits until its bottle and the
// search index hold the secret. redact overwrites the secret in place with
// blank and waits until the secret has left the bottle.
func secretIndexed(t *testing.T, id, word, secret string, after int) (claude, data string, d *daemon, redact func(blank string)) {
	t.Helper()
	claude, data = dirs(t)
	path, at := secretSession(t, claude, id, word, secret, after)
	d = startDaemon(t, claude, data, "--rescan", "1h")
	d.waitContains(id, secret)
	d.waitIndexed(secret)
	return claude, data, d, func(blank string) {
		t.Helper()
		overwrite(t, path, at, blank)
		d.waitBottle(id, "the secret leaves the bottle", func(b string) bool {
			return strings.Contains(b, word+"-P1") && !strings.Contains(b, secret)
		})
	}
}

// holdIndexWrites begins a write transaction on the search index in use,
// as another process writing to it would: every other writer waits for
// it (the index's busy timeout) until release, which rolls it back.
func holdIndexWrites(t *testing.T, data string) (release func()) {
	t.Helper()
	hold := memwriter.Hold(t, indexGeneration(t, data), []string{"BEGIN IMMEDIATE"})
	return func() {
		t.Helper()
		if _, err := hold.ExecContext(context.Background(), "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		hold.Close()
	}
}

// indexGeneration is the database file of the search index in use.
func indexGeneration(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(index.Dir(data), "current"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(index.Dir(data), strings.TrimSpace(string(b))+".db")
}

// TestFaultIndexDeletedUnderTheDaemon deletes the search index's directory
// under a daemon that writes nothing: at its rescan it finds the index
// gone (it does not keep serving from the files it still holds open),
// builds it again and says so in status. (An index that cannot be made,
// and the keeper's retries, are TestIndexKeeper's, in process.)
func TestFaultIndexDeletedUnderTheDaemon(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "1d3ea5ed-0000-4000-8000-000000000001"
	_, d := watchedFirstTurn(t, claude, data, "-home-dev-app", id, "INDEXGONE-P1 a prompt", "INDEXGONE-A1 an answer")
	ready := func(after time.Time) func() bool {
		return func() bool {
			st, err := d.status()
			return err == nil && st.Search.State == watch.SearchReady && st.Search.Since.After(after)
		}
	}
	eventually(t, "the index is ready", ready(time.Time{}))

	deleted := time.Now()
	if err := os.RemoveAll(index.Dir(data)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the daemon builds the index again", ready(deleted))
	if _, err := os.Stat(filepath.Join(index.Dir(data), "current")); err != nil {
		t.Errorf("status says ready, and the index is not there: %v", err)
	}
	eventually(t, "the log says the index is gone", func() bool { return strings.Contains(d.stderr.String(), "search index is gone") })
	if n := strings.Count(d.stderr.String(), "search index is gone"); n != 1 {
		t.Errorf("the daemon said %d times that the index is gone, want once", n)
	}

	if out, code := runBottledExit(t, claude, data, "", "index"); code != 0 || !strings.Contains(out, "holds     1 bottle of 1 session") {
		t.Errorf("bottled index: exit %d\n%s", code, out)
	}
}
