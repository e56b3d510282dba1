package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/watch"
)

// TestUnwatchedLines: the daemon's directories it could not watch are
// said with the watcher's reason, grouped by it (the inotify limit is
// named only when it is the reason), and still counted when an older
// daemon gives none.
func TestUnwatchedLines(t *testing.T) {
	const rescan = ": changes there wait for the rescan"
	for _, tc := range []struct {
		name string
		st   watch.Status
		want []string
	}{
		{"none", watch.Status{}, nil},
		{"permission denied", watch.Status{Unwatched: []string{"/c/projects/-q"}, UnwatchedWhy: map[string]string{"/c/projects/-q": "permission denied"}},
			[]string{"/c/projects/-q not watched: permission denied (tried again at every rescan)"}},
		{"the inotify limit", watch.Status{Unwatched: []string{"/a", "/b"}, UnwatchedWhy: map[string]string{"/a": watch.WhyWatchLimit, "/b": watch.WhyWatchLimit}},
			[]string{"2 directories not watched: " + watch.WhyWatchLimit + " (the daemon's log says how to raise it)" + rescan}},
		{"mixed", watch.Status{Unwatched: []string{"/a", "/b", "/c", "/q"}, UnwatchedWhy: map[string]string{"/a": watch.WhyWatchLimit, "/b": watch.WhyWatchLimit, "/c": "permission denied", "/q": "permission denied"}},
			[]string{"2 directories not watched: " + watch.WhyWatchLimit + " (the daemon's log says how to raise it)" + rescan,
				"2 directories not watched: permission denied (tried again at every rescan; bottled status --json lists them)"}},
		{"an older daemon", watch.Status{Unwatched: []string{"/a"}}, []string{"1 directory not watched (see the daemon's log)" + rescan}},
	} {
		if got := unwatchedLines(&tc.st, &watch.Survey{}, "bottled status --json"); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestStatusUnreadableDirectory: a project directory that cannot be read
// (a symbolic link to itself: root cannot read it either) is named by
// status read from disk, with why, rather than left out in silence.
func TestStatusUnreadableDirectory(t *testing.T) {
	e := newEnv(t, true)
	loop := filepath.Join(e.claude, "projects", "-loop")
	if err := os.Symlink("-loop", loop); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(t, "status")
	if code != 0 {
		t.Fatalf("status: code %d, stderr %q", code, errOut)
	}
	want := loop + " cannot be read (too many levels of symbolic links): its transcripts are not counted"
	if !strings.Contains(out, "(of 1 transcript)") || !strings.Contains(out, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	rep, _ := statusJSON(t, e.flags())
	dirs, _ := rep["disk"].(map[string]any)["unreadableDirs"].([]any)
	if len(dirs) != 1 || dirs[0].(map[string]any)["path"] != loop {
		t.Errorf("disk.unreadableDirs = %v, want %s", dirs, loop)
	}
}

// TestStatusNamesEachDirOnce: a project directory that the running daemon
// cannot watch and that the disk survey (status --all) cannot read, for
// the same reason, is named once, where its transcripts are not counted;
// one that only one of them names is named by it.
func TestStatusNamesEachDirOnce(t *testing.T) {
	const both, unwatched, unreadable = "/c/projects/-both", "/c/projects/-unwatched", "/c/projects/-unreadable"
	rep := statusReport{
		Daemon: &watch.Status{Unwatched: []string{both, unwatched}, UnwatchedWhy: map[string]string{both: "permission denied", unwatched: watch.WhyWatchLimit}},
		Disk:   &watch.Survey{Sessions: []watch.SessionCheck{}, UnreadableDirs: []watch.DirError{{Path: both, Error: "permission denied"}, {Path: unreadable, Error: "permission denied"}}},
	}
	var out strings.Builder
	printStatus(&out, dirs{}, &rep, 0, time.Now())
	for dir, said := range map[string]string{
		both:       both + " cannot be read (permission denied): its transcripts are not counted",
		unwatched:  unwatched + " not watched: " + watch.WhyWatchLimit,
		unreadable: unreadable + " cannot be read (permission denied): its transcripts are not counted",
	} {
		if n := strings.Count(out.String(), dir); n != 1 || !strings.Contains(out.String(), said) {
			t.Errorf("status names %s %d times, want once, as %q:\n%s", dir, n, said, out.String())
		}
	}
}
