package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

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
// show nowhere). That the bytes are reused is a matter of speed, which a
// sync.Pool does not promise (a collection empties it): the render
// benchmarks show it, in bytes allocated per render.
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
}
