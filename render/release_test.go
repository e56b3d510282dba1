package render

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/sources"
)

// releaseInput is a session of n turns, each answer long enough that the
// bottle is many kilobytes.
func releaseInput(id string, n int) Input {
	sp := &sources.Spine{SessionID: id}
	for i := range n {
		sp.Entries = append(sp.Entries,
			sources.Entry{Kind: sources.EntryUser, Time: goldenNow, Text: fmt.Sprintf("RELEASE-P%d do it", i)},
			sources.Entry{Kind: sources.EntryAssistant, Time: goldenNow, Text: fmt.Sprintf("RELEASE-A%d ", i) + strings.Repeat("done ", 200)})
	}
	return Input{SessionID: id, Spine: sp, Now: goldenNow}
}

// TestReleasedBytesReused renders a bottle, gives its bytes back, and
// renders others, smaller and larger: each is byte for byte the bottle a
// render with nothing given back makes (the old bytes left in the buffer
// show nowhere), and a smaller one is written into the bytes given back.
func TestReleasedBytesReused(t *testing.T) {
	big, small, bigger := releaseInput("big", 40), releaseInput("small", 3), releaseInput("bigger", 80)
	render := func(in Input) *Bottle {
		t.Helper()
		b, err := Render(in)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := map[string][]byte{}
	for _, in := range []Input{big, small, bigger} {
		want[in.SessionID] = render(in).Bytes // never released
	}
	for _, in := range []Input{big, small, bigger, small} {
		render(big).Release()
		b := render(in)
		if !bytes.Equal(b.Bytes, want[in.SessionID]) {
			t.Fatalf("%s rendered into bytes given back differs: %s", in.SessionID, firstDiff(want[in.SessionID], b.Bytes))
		}
		b.Release()
		if b.Bytes != nil {
			t.Fatal("a released bottle keeps its bytes")
		}
	}
	if testbin.Race {
		return // the race detector drops some of what a sync.Pool is given
	}
	// A goroutine moved to another processor between the two calls misses
	// what its first processor keeps: a few tries.
	reused := func(before, after Input) bool {
		for range 10 {
			first := render(before)
			at := &first.Bytes[0]
			first.Release()
			b := render(after)
			again := &b.Bytes[0]
			b.Release()
			if again == at {
				return true
			}
		}
		return false
	}
	if !reused(big, small) {
		t.Error("a smaller bottle was never rendered into the bytes the one before gave back")
	}
	// A session that grows: once its bottle outgrew the bytes given back,
	// the new ones leave room for its next appends. (Two collections
	// empty the pool of what the renders above gave back.)
	runtime.GC()
	runtime.GC()
	render(releaseInput("big", 40)).Release()
	last := render(releaseInput("big", 41)) // outgrew them
	at, kept := &last.Bytes[0], 0
	last.Release()
	for n := 42; n < 46; n++ {
		b := render(releaseInput("big", n))
		if &b.Bytes[0] == at {
			kept++
		}
		at = &b.Bytes[0]
		b.Release()
	}
	if kept < 3 {
		t.Errorf("%d of the next 4 bottles of a growing session were rendered into the bytes the one before gave back, want all", kept)
	}
}
