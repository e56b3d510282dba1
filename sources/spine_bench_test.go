package sources

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// BenchmarkSpine100MB builds the spine of a generated 100 MB transcript
// (BenchmarkRender100MB's): "full" from every record (BuildSpine, as the
// first render of a session does), "append" after each ~2 KB append of a
// prompt and its answer, by the SpineBuilder the daemon keeps. Each
// reports the CPU time of a build (cpu-ms, the append's parse left out),
// which a busy machine inflates less than wall time. "size" times the
// builder's Size after a build, which the daemon asks after each render.
func BenchmarkSpine100MB(b *testing.B) {
	var buf bytes.Buffer
	if _, err := synth.Transcript(&buf, "bench", 100<<20, 1); err != nil {
		b.Fatal(err)
	}
	tr := NewTranscript("bench", "")
	if err := tr.readFrom(&buf, int64(buf.Len())); err != nil {
		b.Fatal(err)
	}
	files := []*Transcript{tr}
	n := 0
	appendTurn := func() {
		text := fmt.Sprintf("appended prompt %d %0900d", n, n)
		u, a := fmt.Sprintf("bench-u-%d", n), fmt.Sprintf("bench-a-%d", n)
		at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
		line := synth.Rec{Session: "bench", UUID: u, At: at}.User(text) +
			synth.Rec{Session: "bench", UUID: a, Parent: u, At: at.Add(time.Second)}.Assistant("bench-m-"+a, text)
		if err := tr.readFrom(bytes.NewReader([]byte(line)), int64(len(line))); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.Run("full", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			appendTurn()
			cpu0 := testbin.CPUTime(b)
			BuildSpine("bench", files)
			cpu += testbin.CPUTime(b) - cpu0
		}
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms")
	})
	b.Run("append", func(b *testing.B) {
		var sb SpineBuilder
		sb.Build("bench", files)
		var cpu time.Duration
		for b.Loop() {
			appendTurn()
			cpu0 := testbin.CPUTime(b)
			sb.Build("bench", files)
			cpu += testbin.CPUTime(b) - cpu0
			if sb.fallback != "" {
				b.Fatalf("built in full (%s)", sb.fallback)
			}
		}
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms")
	})
	b.Run("size", func(b *testing.B) {
		var sb SpineBuilder
		sp := sb.Build("bench", files)
		var n int64
		for b.Loop() {
			n += sb.Size()
		}
		b.ReportMetric(float64(len(sp.Entries)), "entries")
		b.ReportMetric(float64(n)/1e6/float64(b.N), "MB")
	})
}
