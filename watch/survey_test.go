package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/sources"
)

// TestBottlesWithoutTranscript puts beside the bottles what is not one (a
// note, a temporary file, a directory, the archive): the disk survey
// counts, and the catch-up lists, the same bottles without transcript,
// newest first.
func TestBottlesWithoutTranscript(t *testing.T) {
	root := t.TempDir()
	claude, data := filepath.Join(root, "claude"), filepath.Join(root, "data")
	bottlesDir := bottles.BottlesDir(data)
	const live, older, newer = "b0771e00-0000-4000-8000-000000000001", "b0771e00-0000-4000-8000-000000000002", "b0771e00-0000-4000-8000-000000000003"
	path := filepath.Join(claude, "projects", "-p", live+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := os.WriteFile(path, []byte(synth.Rec{Session: live, UUID: "u1", At: at, CWD: "/p"}.User("SURVEY-P1 hello")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{bottles.ArchiveDir(bottlesDir), filepath.Join(bottlesDir, "x.md")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{live + ".md", older + ".md", newer + ".md", "my notes.md", ".tmp-" + live + "-1.md", "v1.2.md"} {
		p := filepath.Join(bottlesDir, name)
		if err := os.WriteFile(p, []byte("# Session bottle\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mod := at.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}

	sv, err := TakeSurvey(context.Background(), claude, data)
	if err != nil {
		t.Fatal(err)
	}
	if sv.Transcripts != 1 || sv.Orphans != 2 {
		t.Errorf("survey: %d transcripts, %d bottles without transcript; want 1 and 2", sv.Transcripts, sv.Orphans)
	}
	if got, want := orphanBottles(bottlesDir, map[string]bool{sources.SessionOf(path): true}), []string{newer, older}; !slices.Equal(got, want) {
		t.Errorf("catch-up lists the bottles without transcript %q, want %q", got, want)
	}
}

// TestDaemonSurveyFollowsClear: a session rendered by the daemon, then
// cleared with /clear (the hook archives its bottle, no file event tells
// the daemon): once its rescan checked the bottle, the daemon's status
// counts the session archived, as the disk survey does, not fresh.
func TestDaemonSurveyFollowsClear(t *testing.T) {
	clock := &testClock{}
	d := testDaemon(t, Config{Now: clock.now, CheckQuiet: time.Second})
	const a, b = "c1ea0000-0000-4000-8000-00000000000a", "c1ea0000-0000-4000-8000-00000000000b"
	base := time.Now().Truncate(time.Second)
	pa, pb := writeTranscript(t, d, a, "CLEAR-A1"), writeTranscript(t, d, b, "CLEAR-B1")
	setMod(t, base, pa, pb)
	clock.set(base.Add(time.Minute))
	f := newWatchState(d.fsDeps(nil))
	d.catchUp(f.initialScan())
	renderNow(t, d, a)
	renderNow(t, d, b)
	d.rec.survey = func(s map[string]*sessionRecord) *Survey { return d.survey(f, s) }
	rescan(f)

	if _, err := d.store.Archive(a); err != nil { // as the session-end hook does on /clear
		t.Fatal(err)
	}
	clock.set(time.Now().Add(time.Minute)) // the bottles directory settled
	rescan(f)
	if got := takeChanges(d); len(got) != 0 {
		t.Fatalf("the rescan reported %+v; a cleared session's archived bottle needs no render", got)
	}
	disk, err := TakeSurvey(t.Context(), d.cfg.ClaudeDir, d.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	daemon := d.rec.snapshotWithSurvey().Bottles
	for _, sv := range []*Survey{disk, daemon} {
		if sv.Archived != 1 || sv.Fresh != 1 || sv.Stale+sv.Missing != 0 {
			t.Errorf("%s: %d archived, %d fresh, %d stale, %d missing; want the cleared session archived, the other fresh",
				sv.Source, sv.Archived, sv.Fresh, sv.Stale, sv.Missing)
		}
		for _, s := range sv.Sessions {
			if s.Session == a && (s.Freshness != FreshnessArchived || s.Why != "cleared") {
				t.Errorf("%s lists the cleared session as %s (%s), want archived (cleared)", sv.Source, s.Freshness, s.Why)
			}
		}
	}
}

// surveyStates is what a survey lists of each session: its state and why.
func surveyStates(sv *Survey) map[string]string {
	m := map[string]string{}
	for _, s := range sv.Sessions {
		m[s.Session] = s.Freshness + " (" + s.Why + ")"
	}
	return m
}

// TestDaemonSurveyMissing: the daemon and the disk survey use the same
// word for the same state of a session's bottle: missing when there is
// none (a session not rendered yet, as during the start-up catch-up; a
// bottle removed since it was written), stale when there is one older
// than its transcript.
func TestDaemonSurveyMissing(t *testing.T) {
	clock := &testClock{}
	d := testDaemon(t, Config{Now: clock.now, CheckQuiet: time.Second})
	const fresh, pending, unrendered, removed = "0155e000-0000-4000-8000-00000000000f", "0155e000-0000-4000-8000-00000000000a",
		"0155e000-0000-4000-8000-00000000000b", "0155e000-0000-4000-8000-00000000000c"
	base := time.Now().Truncate(time.Second)
	var paths []string
	for _, id := range []string{fresh, pending, unrendered, removed} {
		paths = append(paths, writeTranscript(t, d, id, "MISSING-1 "+id))
	}
	setMod(t, base, paths...)
	clock.set(base.Add(time.Minute))
	f := newWatchState(d.fsDeps(nil))
	d.catchUp(f.initialScan())
	for _, id := range []string{fresh, pending, removed} {
		renderNow(t, d, id)
	}
	p := writeTranscript(t, d, pending, "MISSING-2")
	d.rec.changed(pending, p, clock.now())
	if err := os.Remove(d.store.Path(removed)); err != nil {
		t.Fatal(err)
	}
	daemon, disk := bothSurveys(t, d, f)
	for _, sv := range []*Survey{daemon, disk} {
		if sv.Fresh != 1 || sv.Stale != 1 || sv.Missing != 2 {
			t.Errorf("%s: %d fresh, %d stale, %d missing; want 1, 1 and 2 (the unrendered session's and the removed bottle)",
				sv.Source, sv.Fresh, sv.Stale, sv.Missing)
		}
	}
	states := surveyStates(daemon)
	for id, want := range map[string]string{
		fresh: "fresh ()", pending: "stale (changes not rendered yet)", unrendered: "missing (no bottle)", removed: "missing (no bottle)",
	} {
		if states[id] != want {
			t.Errorf("the daemon lists %s as %s, want %s", id, states[id], want)
		}
	}
	if got, want := surveyStates(disk)[unrendered], "missing (no bottle)"; got != want {
		t.Errorf("the disk survey lists %s as %s, want %s", unrendered, got, want)
	}
}

// TestSurveyUnreadableTranscript: a transcript that cannot be opened
// (mode 000) is missing when it has no bottle, stale when it has one, in
// the daemon's status and on disk, and both say why in the same words.
// Root opens any file: run as another user.
func TestSurveyUnreadableTranscript(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs as root, which opens a mode 000 file: run as another user to test an unreadable transcript")
	}
	clock := &testClock{}
	d := testDaemon(t, Config{Now: clock.now, CheckQuiet: time.Second})
	const readable, unreadable, bottled = "0bad0000-0000-4000-8000-00000000000a", "0bad0000-0000-4000-8000-00000000000b", "0bad0000-0000-4000-8000-00000000000c"
	base := time.Now().Truncate(time.Second)
	pr, pu, pb := writeTranscript(t, d, readable, "UNREADABLE-A"), writeTranscript(t, d, unreadable, "UNREADABLE-B"), writeTranscript(t, d, bottled, "UNREADABLE-C")
	setMod(t, base, pr, pu, pb)
	clock.set(base.Add(time.Minute))
	f := newWatchState(d.fsDeps(nil))
	d.catchUp(f.initialScan())
	renderNow(t, d, readable)
	renderNow(t, d, bottled)
	p := writeTranscript(t, d, bottled, "UNREADABLE-C2")
	for _, p := range []string{pu, p} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{unreadable, bottled} {
		res := d.renderSession(t.Context(), &session{id: id}, false)
		if res.err == nil {
			t.Fatalf("the render of %s, a mode 000 transcript, did not fail", id)
		}
		res.id = id
		d.finish(res)
	}
	daemon, disk := bothSurveys(t, d, f)
	for _, sv := range []*Survey{daemon, disk} {
		if sv.Fresh != 1 || sv.Stale != 1 || sv.Missing != 1 {
			t.Errorf("%s: %d fresh, %d stale, %d missing; want 1 of each", sv.Source, sv.Fresh, sv.Stale, sv.Missing)
		}
		states := surveyStates(sv)
		for id, want := range map[string]string{
			unreadable: "missing (open transcript: open " + pu + ": permission denied)",
			bottled:    "stale (open transcript: open " + pb + ": permission denied)",
		} {
			if states[id] != want {
				t.Errorf("%s lists %s as %s, want %s", sv.Source, id, states[id], want)
			}
		}
	}
}

// TestSurveyUnreadableDirectory: a project directory whose transcripts
// cannot be listed or read is not left out of the disk survey in silence:
// the survey names it and says why. A symbolic link to itself cannot be
// read even by root; the modes only by another user.
func TestSurveyUnreadableDirectory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		asRoot bool // root cannot read it either
		make   func(t *testing.T, dir string)
		want   string
	}{
		{"a symbolic link to itself", true, linkToItself, "too many levels of symbolic links"},
		{"mode 000", false, func(t *testing.T, dir string) { chmodDir(t, dir, 0) }, "permission denied"},
		{"mode 400 (listed, not searched)", false, func(t *testing.T, dir string) { chmodDir(t, dir, 0o400) }, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.asRoot && os.Geteuid() == 0 {
				t.Skip("runs as root, which reads a directory whatever its mode: run as another user to test " + tc.name)
			}
			root := t.TempDir()
			claude, data := filepath.Join(root, "claude"), filepath.Join(root, "data")
			at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			for _, p := range []string{"-ok", "-bad"} {
				id := "0d1e0000-0000-4000-8000-00000000000" + map[string]string{"-ok": "1", "-bad": "2"}[p]
				path := filepath.Join(claude, "projects", p, id+".jsonl")
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(synth.Rec{Session: id, UUID: "u1", At: at, CWD: "/p"}.User("UNREAD-DIR hello")), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			bad := filepath.Join(claude, "projects", "-bad")
			if tc.asRoot {
				if err := os.RemoveAll(bad); err != nil {
					t.Fatal(err)
				}
			}
			tc.make(t, bad)
			sv, err := TakeSurvey(t.Context(), claude, data)
			if err != nil {
				t.Fatal(err)
			}
			want := []DirError{{Path: bad, Error: tc.want}}
			if sv.Transcripts != 1 || !slices.Equal(sv.UnreadableDirs, want) {
				t.Errorf("%d transcripts, unreadable directories %+v; want 1 and %+v", sv.Transcripts, sv.UnreadableDirs, want)
			}
		})
	}
}

// linkToItself makes dir a symbolic link to itself, which no one can
// read or watch, root included.
func linkToItself(t *testing.T, dir string) {
	t.Helper()
	if err := os.Symlink(filepath.Base(dir), dir); err != nil {
		t.Fatal(err)
	}
}

// chmodDir sets a directory's mode, and gives it back its owner's at the
// end of the test, so that it can be removed.
func chmodDir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
}

// TestUnwatchedSaysWhy: a directory the file watcher cannot watch is
// listed in status with the watcher's reason, not a guess.
func TestUnwatchedSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		asRoot bool
		make   func(t *testing.T, dir string)
		want   string
	}{
		{"a symbolic link to itself", true, linkToItself, "too many levels of symbolic links"},
		{"mode 000", false, func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			chmodDir(t, dir, 0)
		}, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.asRoot && os.Geteuid() == 0 {
				t.Skip("runs as root, which watches a directory whatever its mode: run as another user to test " + tc.name)
			}
			d := testDaemon(t, Config{})
			f := newFSWatch(d.fsDeps(nil))
			t.Cleanup(f.close)
			if f.w == nil {
				t.Skip("no inotify instance to be had (fs.inotify.max_user_instances reached)")
			}
			dir := filepath.Join(d.cfg.ClaudeDir, "projects", "-bad")
			if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
				t.Fatal(err)
			}
			tc.make(t, dir)
			f.add(dir)
			f.status()
			st := d.rec.snapshot()
			if !slices.Equal(st.Unwatched, []string{dir}) || st.UnwatchedWhy[dir] != tc.want {
				t.Errorf("unwatched %q, why %q; want %s: %s", st.Unwatched, st.UnwatchedWhy, dir, tc.want)
			}
		})
	}
}

// bothSurveys are the survey of the daemon d's status, made with the
// watch state f, and the one taken from disk alone, which must agree.
func bothSurveys(t *testing.T, d *Daemon, f *fsWatch) (daemon, disk *Survey) {
	t.Helper()
	d.rec.survey = func(s map[string]*sessionRecord) *Survey { return d.survey(f, s) }
	daemon = d.rec.snapshotWithSurvey().Bottles
	disk, err := TakeSurvey(t.Context(), d.cfg.ClaudeDir, d.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return daemon, disk
}
