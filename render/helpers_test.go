package render

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/bottled-dev/bottled/sources"
)

// goldenCases returns the folder of every case in testdata/render,
// failing the test when there is none.
func goldenCases(t *testing.T) []string {
	t.Helper()
	expects, err := filepath.Glob(filepath.Join("..", "testdata", "render", "*", "expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(expects) == 0 {
		t.Fatal("no cases in testdata/render")
	}
	dirs := make([]string, len(expects))
	for i, e := range expects {
		dirs[i] = filepath.Dir(e)
	}
	return dirs
}

// renderCase renders the golden case in dir (see loadCase), returning
// the input it was rendered from with the bottle.
func renderCase(t *testing.T, dir string) (Input, *Bottle) {
	t.Helper()
	in := loadCase(t, dir)
	b, err := Render(in)
	if err != nil {
		t.Fatalf("render %s: %v", filepath.Base(dir), err)
	}
	return in, b
}

// spineOf reads the transcript at path and builds its spine alone, as
// session "s".
func spineOf(tb testing.TB, path string) *sources.Spine {
	tb.Helper()
	tr, err := sources.ReadTranscript("s", path)
	if err != nil {
		tb.Fatal(err)
	}
	return sources.BuildSpine("s", []*sources.Transcript{tr})
}

// renderSpine renders the bottle of sp, session "s", at goldenNow: nil
// when there is nothing to render (ErrNothing: a subagent's file, a
// session without a message); any other error fails the test.
func renderSpine(tb testing.TB, sp *sources.Spine) *Bottle {
	tb.Helper()
	b, err := Render(Input{SessionID: "s", Spine: sp, Now: goldenNow})
	if errors.Is(err, ErrNothing) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
