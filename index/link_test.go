package index

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/bottles"
)

// TestLinkedBottleNotIndexed: a symbolic link in the bottles directory
// (bottled makes none; it may point anywhere) is not followed, neither by
// the index's opening nor by a Put naming it: the bottle is taken for gone,
// and what the link points to is never found.
func TestLinkedBottleNotIndexed(t *testing.T) {
	data := t.TempDir()
	inside := talk{ID: "s-inside", CWD: "/p", Start: day, Turns: [][2]string{{"a plain question", "a plain answer"}}}
	writeBottles(t, data, inside.Bottle(t, testNow))
	outside := talk{ID: "s-linked", CWD: "/p", Start: day, Turns: [][2]string{{"where is outsideword", "outsideword is here"}}}
	target := filepath.Join(t.TempDir(), "elsewhere.md")
	if err := os.WriteFile(target, outside.Bottle(t, testNow).Bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	link := bottles.BottlePath(bottles.BottlesDir(data), outside.ID)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, data)
	if _, _, err := ix.readBottle(outside.ID+".md", nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading the link: %v; want it taken for a bottle gone", err)
	}
	if err := ix.Put(context.Background(), outside.ID+".md", outside.Bottle(t, testNow).Bytes); err != nil {
		t.Fatal(err)
	}
	if hits := search(t, ix, "outsideword", Scope{}); len(hits) != 0 {
		t.Errorf("the file a link points to was indexed: %v", sessionsOf(hits))
	}
	if hits := search(t, ix, "plain", Scope{}); len(hits) == 0 {
		t.Errorf("the bottle beside the link was not indexed")
	}
}
