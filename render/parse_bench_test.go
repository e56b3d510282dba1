package render

import (
	"testing"
	"time"

	"github.com/bottled-dev/bottled/sources"
)

// BenchmarkParse reads back the bottle of the generated 100 MB transcript
// (2.6 MB): "full" with Parse, as a search index's build does, and
// "after-append" with Reparse, from the parse of the same bottle a turn
// shorter, as the index does after an append.
func BenchmarkParse(b *testing.B) {
	shorter, bottle := benchBottles(b)
	b.Run("full", func(b *testing.B) {
		b.SetBytes(int64(len(bottle)))
		for b.Loop() {
			if _, err := Parse(bottle, time.UTC); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("after-append", func(b *testing.B) {
		b.SetBytes(int64(len(bottle)))
		for b.Loop() {
			b.StopTimer()
			prev, _, err := Reparse(shorter, time.UTC, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, kept, err := Reparse(bottle, time.UTC, prev); err != nil || kept == 0 {
				b.Fatal(kept, err)
			}
		}
	})
}

// benchBottles renders the generated transcript's bottle, and the bottle
// of the same without its last turn.
func benchBottles(b *testing.B) (shorter, bottle []byte) {
	b.Helper()
	path, _ := benchTranscript(b)
	tr, err := sources.ReadTranscript("bench", path)
	if err != nil {
		b.Fatal(err)
	}
	sp := sources.BuildSpine("bench", []*sources.Transcript{tr})
	full, err := Render(Input{SessionID: "bench", Spine: sp, Now: goldenNow})
	if err != nil {
		b.Fatal(err)
	}
	cut := *sp
	for cut.Entries = sp.Entries[:len(sp.Entries)-1]; cut.Entries[len(cut.Entries)-1].Kind != sources.EntryUser; {
		cut.Entries = cut.Entries[:len(cut.Entries)-1]
	}
	cut.Entries = cut.Entries[:len(cut.Entries)-1]
	short, err := Render(Input{SessionID: "bench", Spine: &cut, Now: goldenNow})
	if err != nil {
		b.Fatal(err)
	}
	return short.Bytes, full.Bytes
}
