package watch_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bottled-dev/bottled/bottles"
)

// TestFaultRenderKilledAfterRename runs `bottled render` over a bottle,
// and a search index, that hold a secret the user's new redaction pattern
// matches, and kills it (kill -9) the moment its new bottle is renamed
// into place. The bottle on disk is the redacted one; the index still has
// the secret in its files, and only a purge marker left before the rename
// tells the next reader of the index (a search) to purge it.
func TestFaultRenderKilledAfterRename(t *testing.T) {
	t.Parallel()
	// The index keeps the secret's words, which the tokenizer splits at
	// the dash: its file is searched for the one that tells.
	const word = "5b7d20e4c1f0"
	const secret = "ASKRENDER-" + word
	claude, data := dirs(t)
	const id = "a5c3e1f0-0000-4000-8000-000000000001"
	firstTurn(t, claude, "-home-dev-app", id, "ASKRENDER-P1 the key is "+secret+" keep it safe", "ASKRENDER-A1 noted")
	runBottled(t, claude, data, "", "render", id)
	runBottled(t, claude, data, "", "index")
	if !indexHolds(t, data, word) {
		t.Fatal("the index does not hold the secret to begin with")
	}

	if err := os.WriteFile(bottles.RulesFile(data), []byte("Askrender key: ASKRENDER-[0-9a-f]{12}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := bottles.Open(data, nil, nil)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(store.Dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "render", id)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The directory's events come in the order of the writes: the marker
	// must come before the bottle (killed in between, a render that left
	// it after would leave none).
	deadline := time.After(time.Minute)
	marked := false
	for renamed := false; !renamed; {
		select {
		case ev := <-w.Events:
			marked = marked || ev.Name == store.PurgeMarker() && ev.Has(fsnotify.Create)
			renamed = ev.Name == store.Path(id) && ev.Has(fsnotify.Create)
		case err := <-w.Errors:
			t.Fatal(err)
		case <-deadline:
			t.Fatal("render wrote no bottle within a minute")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !marked {
		t.Error("the redacted bottle was in place before the purge marker was left")
	}
	bottle, err := os.ReadFile(store.Path(id))
	if err != nil || strings.Contains(string(bottle), secret) || !strings.Contains(string(bottle), "ASKRENDER-P1") {
		t.Fatalf("the bottle on disk is not the redacted one (err %v):\n%s", err, bottle)
	}

	if out := runBottled(t, claude, data, "", "search", "--all", "ASKRENDER-P1"); !strings.Contains(out, id[:8]) {
		t.Errorf("search finds nothing:\n%s", out)
	}
	if indexHolds(t, data, word) {
		t.Error("the secret the new rules redact is still in the index's files")
	}
	if _, err := os.Lstat(store.PurgeMarker()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the purge marker is still there after the search purged (err %v)", err)
	}
}

// TestFaultResealKilledBeforeIndexed changes the redaction rules under a
// daemon whose search index holds a secret of two bottles no source can
// make again (a cleared session's archived bottle, and a live one whose
// transcript is gone): the daemon redacts both in place, and is killed
// (kill -9) while it waits to index the second (another process holds
// the index's write lock). Both bottles are redacted and made by the
// rules now, so the restarted daemon has nothing to redact again: only a
// purge marker left before the first was replaced tells it that the
// secret must leave the index's files.
func TestFaultResealKilledBeforeIndexed(t *testing.T) {
	t.Parallel()
	const word = "9c4e1b7a2d60"
	const secret = "ASKRESEAL-" + word
	claude, data := dirs(t)
	const cleared, orphan = "a5c3e1f0-0000-4000-8000-000000000002", "a5c3e1f0-0000-4000-8000-000000000003"
	paths := map[string]string{}
	for _, id := range []string{cleared, orphan} {
		paths[id] = firstTurn(t, claude, "-home-dev-app", id, "ASKRESEAL-P1 the key is "+secret+" keep it safe", "ASKRESEAL-A1 noted")
	}
	d := startDaemon(t, claude, data, "--rescan", "1h")
	d.waitContains(cleared, secret)
	d.waitContains(orphan, secret)
	store := bottles.Open(data, nil, nil)
	clearSession(t, claude, data, cleared, paths[cleared])
	for _, path := range paths {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	d.waitIndexed(word)
	archived := store.ArchivedPath(cleared)
	if archived == "" {
		t.Fatal("no archived bottle")
	}

	release := holdIndexWrites(t, data)
	if err := os.WriteFile(bottles.RulesFile(data), []byte("Askreseal key: ASKRESEAL-[0-9a-f]{12}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Signal(syscall.SIGHUP)
	redacted := func(path string) func() bool {
		return func() bool {
			b, err := os.ReadFile(path)
			return err == nil && strings.Contains(string(b), "ASKRESEAL-P1") && !strings.Contains(string(b), secret)
		}
	}
	eventually(t, "the archived bottle is redacted in place", redacted(archived))
	eventually(t, "the orphaned bottle is redacted in place", redacted(store.Path(orphan)))
	d.kill()
	release()

	startDaemon(t, claude, data, "--rescan", "1h")
	waitPurged(t, data, "the secret leaves the index's files", func() bool { return !indexHolds(t, data, word) })
}
