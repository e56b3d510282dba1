package render

import (
	"testing"

	"github.com/bottled-dev/bottled/internal/fixtures"
)

// BenchmarkText measures what redaction adds to every string a bottle
// shows: the cleaning and the tag stripper alone (stripped), beside shown,
// which redacts too, over every message of the real transcripts (both
// corpora), in the same run.
func BenchmarkText(b *testing.B) {
	var texts []string
	var size int64
	for _, f := range fixtures.All(b) {
		for _, e := range spineOf(b, f).Entries {
			texts = append(texts, e.Text)
			size += int64(len(e.Text))
		}
	}
	for _, bc := range []struct {
		name string
		fn   func(string) string
	}{{"stripped", stripped}, {"shown", func(s string) string { return shown(nil, s) }}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, s := range texts {
					bc.fn(s)
				}
			}
		})
	}
}
