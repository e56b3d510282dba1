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
