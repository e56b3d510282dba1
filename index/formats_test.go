package index

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestOtherFormatsLeftAlone: an index of another format (an older
// bottled's, in the directory indexes of format 4 and before used, the
// previous format's own, or a newer one's) is neither opened nor built
// over nor cleaned by this one, whose own directory it never was;
// RemoveOtherFormats, the daemon's start-up, removes them and only them.
func TestOtherFormatsLeftAlone(t *testing.T) {
	data := t.TempDir()
	s := talk{ID: "s-formats", CWD: "/home/u/app", Start: day, Turns: [][2]string{{"index formats", "Each in its own directory."}}}
	writeBottles(t, data, s.Bottle(t, testNow))
	others := map[string]string{
		filepath.Join(data, legacyDir, "current"):                        "3\n",
		filepath.Join(data, legacyDir, "3.db"):                           "an older bottled's index",
		filepath.Join(data, legacyDir, "lock"):                           "",
		filepath.Join(data, dirPrefix+strconv.Itoa(Format-1), "current"): "2\n",
		filepath.Join(data, dirPrefix+strconv.Itoa(Format-1), "2.db"):    "the index of the bottled before this one",
		filepath.Join(data, dirPrefix+strconv.Itoa(Format+1), "current"): "1\n",
		filepath.Join(data, dirPrefix+strconv.Itoa(Format+1), "1.db"):    "a newer bottled's index",
	}
	for path, content := range others {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ix := openIndex(t, data)
	if hits := search(t, ix, "formats", Scope{Limit: MaxLimit}); len(hits) != 1 {
		t.Fatalf("search in a fresh index of this format: %d hits, want 1", len(hits))
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	for path, content := range others {
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Errorf("%s: %q, %v after this format's build; want it untouched", path, got, err)
		}
	}
	if err := RemoveOtherFormats(data); err != nil {
		t.Fatal(err)
	}
	for path := range others {
		if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after RemoveOtherFormats (%v)", filepath.Dir(path), err)
		}
	}
	if _, err := os.Stat(filepath.Join(Dir(data), "current")); err != nil {
		t.Errorf("RemoveOtherFormats removed this format's index: %v", err)
	}
}
