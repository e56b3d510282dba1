package render

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/sources"
)

// benchTranscriptSize is the size of the generated transcript: large
// sessions reach hundreds of megabytes, and 100 MB makes per-byte costs
// dominate per-call ones.
const benchTranscriptSize = 100 << 20

var (
	benchOnce  sync.Once
	benchPath  string
	benchStats synth.Stats
	benchErr   error
)

// benchTranscript writes the generated transcript once per test binary run.
func benchTranscript(b *testing.B) (string, synth.Stats) {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bottled-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchPath = filepath.Join(dir, "bench.jsonl")
		benchStats, benchErr = synth.File(benchPath, "bench", benchTranscriptSize, 1)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath, benchStats
}

// BenchmarkReadFile is the baseline: reading the transcript's bytes.
func BenchmarkReadFile(b *testing.B) {
	path, st := benchTranscript(b)
	b.SetBytes(st.Bytes)
	buf := make([]byte, 1<<20)
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{bufio.NewReaderSize(f, 1<<20)}, buf); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkFullRender is a one-shot render: parse, spine, bottle bytes.
func BenchmarkFullRender(b *testing.B) {
	path, st := benchTranscript(b)
	b.SetBytes(st.Bytes)
	for b.Loop() {
		tr, err := sources.ReadTranscript("bench", path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(Input{SessionID: "bench", Spine: sources.BuildSpine("bench", []*sources.Transcript{tr}), Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.TextBytes)/float64(st.Bytes)*100, "%text")
}

// BenchmarkStdlibDecode is a point of comparison: decoding every line of
// the same transcript into generic values with encoding/json, as a renderer
// that does not skip what it does not need would.
func BenchmarkStdlibDecode(b *testing.B) {
	path, st := benchTranscript(b)
	b.SetBytes(st.Bytes)
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}

// BenchmarkRenderSpine renders the same spine (built once) without a
// cache ("plain"), with an empty one, as a session's first render in the
// daemon does ("fill"), and with the cache that render left ("warm"):
// what filling the cache costs a full render, and what a render that
// copies every turn still does; and a warm render followed by a plain one
// ("warm+plain"), as a daemon interleaves them.
func BenchmarkRenderSpine(b *testing.B) {
	path, _ := benchTranscript(b)
	tr, err := sources.ReadTranscript("bench", path)
	if err != nil {
		b.Fatal(err)
	}
	sp := sources.BuildSpine("bench", []*sources.Transcript{tr})
	in := Input{SessionID: "bench", Spine: sp, Now: time.Now()}
	warm := &Cache{}
	for _, c := range []struct {
		name  string
		cache func() *Cache
	}{{"plain", func() *Cache { return nil }}, {"fill", func() *Cache { return &Cache{} }}, {"warm", func() *Cache { return warm }}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				in.Cache = c.cache()
				if _, err := Render(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The daemon gives each bottle's bytes back once it is written and
	// indexed (Bottle.Release): against "warm", with -benchmem, the
	// bottle's bytes are not allocated again.
	b.Run("warm+released", func(b *testing.B) {
		in.Cache = warm
		for b.Loop() {
			bt, err := Render(in)
			if err != nil {
				b.Fatal(err)
			}
			bt.Release()
		}
	})
	// A daemon renders live sessions through their caches and catch-up's
	// without: a plain render after a cached one must still find a big
	// body buffer in the pool.
	b.Run("warm+plain", func(b *testing.B) {
		for b.Loop() {
			for _, c := range []*Cache{warm, nil} {
				in.Cache = c
				if _, err := Render(in); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
