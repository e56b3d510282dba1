package bottles

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// TestArchiveOrder: a session's newest archive is the one archived last,
// whatever the clock said each time: a /clear run while the clock was
// years ahead does not make its archive win over a later one. Archives
// named before archives were numbered come first, by time.
func TestArchiveOrder(t *testing.T) {
	const id = "s1"
	ahead := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	right := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		legacy []string    // archives of an older bottled already there
		clocks []time.Time // then archived at these times, in order
		want   string      // the newest
	}{
		{"one", nil, []time.Time{right}, "20261130T120000Z-s1.1.md"},
		{"clock ahead, then right", nil, []time.Time{ahead, right}, "20261130T120000Z-s1.2.md"},
		{"three, the clock going back and forth", nil, []time.Time{right, ahead, right.Add(-time.Hour)}, "20261130T110000Z-s1.3.md"},
		{"twice in one second", nil, []time.Time{right, right}, "20261130T120000Z-s1.2.md"},
		{"older bottled's archives, by time", []string{"20990101T000000Z-s1.md", "20260101T000000Z-s1.md"}, nil, "20990101T000000Z-s1.md"},
		{"older bottled's archive stamped ahead, then one now", []string{"20990101T000000Z-s1.md"}, []time.Time{right}, "20261130T120000Z-s1.1.md"},
		{"another session's higher number", []string{"20260101T000000Z-s2.7.md", "20260101T000000Z-s1-x.9.md"}, []time.Time{right}, "20261130T120000Z-s1.1.md"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bottles")
			if err := safefile.MkdirPrivate(dir); err != nil {
				t.Fatal(err)
			}
			if err := safefile.MkdirPrivate(ArchiveDir(dir)); err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.legacy {
				if err := os.WriteFile(filepath.Join(ArchiveDir(dir), name), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, at := range tc.clocks {
				// (Resumed in between: a bottle is there to archive.)
				if err := os.WriteFile(BottlePath(dir, id), bottleAt(t, id, 100, nil, render.ModeFull).Bytes, 0o600); err != nil {
					t.Fatal(err)
				}
				if p, err := storeAt(dir, at).Archive(id); err != nil || p == "" {
					t.Fatalf("Archive = %q, %v", p, err)
				}
			}
			if got := filepath.Base(archivedPath(dir, id)); got != tc.want {
				t.Errorf("newest archive = %s, want %s", got, tc.want)
			}
			if n, _ := os.ReadDir(ArchiveDir(dir)); len(n) != len(tc.legacy)+len(tc.clocks) {
				t.Errorf("%d archives, want %d: one overwrote another", len(n), len(tc.legacy)+len(tc.clocks))
			}
		})
	}
}

func TestArchivedSession(t *testing.T) {
	for name, want := range map[string]string{
		"20261130T120000Z-s1.1.md":     "s1",
		"20261130T120000Z-a-b_c.12.md": "a-b_c",
		"20261130T120000Z-s1.md":       "s1",
		"20261130T120000Z-s1.0.md":     "",
		"20261130T120000Z-s1.x.md":     "",
		"20261130T120000Z-.1.md":       "",
		"s1.md":                        "",
		"20261130T120000Z_s1.md":       "",
		"20261130T120000Z-s1.1.md.tmp": "",
	} {
		got, ok := ArchivedSession(name)
		if got != want || ok != (want != "") {
			t.Errorf("ArchivedSession(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
