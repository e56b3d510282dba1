package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// benchSize is the transcript the incremental benchmark appends to: a
// long session's worth.
const benchSize = 100 << 20

// benchSession writes a generated transcript of benchSize into a fresh
// Claude directory and returns a daemon (not running) that knows it.
func benchSession(b *testing.B) (*Daemon, string, string) {
	b.Helper()
	root := b.TempDir()
	d := New(Config{ClaudeDir: filepath.Join(root, "claude"), DataDir: filepath.Join(root, "data")})
	const id = "bench"
	path := filepath.Join(root, "claude", "projects", "p", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := synth.Transcript(f, id, benchSize, 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	d.paths[id] = path
	return d, id, path
}

// appendTurn is one ~2 KB append: a prompt and its answer.
func appendTurn(b *testing.B, path, id string, n int) {
	b.Helper()
	text := fmt.Sprintf("appended prompt %d %0900d", n, n)
	line := fmt.Sprintf(`{"parentUuid":null,"type":"user","message":{"role":"user","content":%q},"uuid":"bench-u-%d","timestamp":"2026-03-02T10:00:00.000Z","sessionId":%q}`+"\n", text, n, id) +
		fmt.Sprintf(`{"parentUuid":"bench-u-%d","type":"assistant","message":{"id":"bench-m-%d","role":"assistant","content":[{"type":"text","text":%q}]},"uuid":"bench-a-%d","timestamp":"2026-03-02T10:00:01.000Z","sessionId":%q}`+"\n", n, n, text, n, id)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	f.WriteString(line)
	f.Close()
}

// BenchmarkRender100MB compares, in one run, a render of a 100 MB
// transcript without parse state (the first render of a session, or a
// one-shot render) with the daemon's common case: one ~2 KB append to the
// same transcript, rendered from the kept parse state. "append" includes
// writing the bottle as the daemon does (write, rename; the syncs come a
// moment later, for all the bottles written meanwhile, see bottles.Batch);
// "append-cpu" stops at the rendered bytes, to separate the two costs;
// "append-indexed" times the search index's update beside the append.
func BenchmarkRender100MB(b *testing.B) {
	d, id, path := benchSession(b)
	n := 0
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			if res := d.renderSession(context.Background(), &session{id: id}, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
		}
	})
	s := &session{id: id}
	if res := d.renderSession(context.Background(), s, false); res.err != nil {
		b.Fatal(res.err)
	}
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			if res := d.renderSession(context.Background(), s, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
		}
	})
	// The search index's update after each append, timed apart from the
	// append itself in the same iteration, so that both see the same
	// bottle: index-ms against append-ms.
	b.Run("append-indexed", func(b *testing.B) {
		ix, err := index.Open(context.Background(), d.cfg.DataDir, index.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer ix.Close()
		var appendNs, indexNs time.Duration
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			start := time.Now()
			if res := d.renderSession(context.Background(), s, false); res.err != nil || res.outcome != outcomeWritten {
				b.Fatal(res.err, res.outcome)
			}
			mid := time.Now()
			data, err := os.ReadFile(bottles.BottlePath(d.store.Dir, id))
			if err != nil {
				b.Fatal(err)
			}
			mid2 := time.Now()
			if err := ix.Put(context.Background(), id+".md", data); err != nil {
				b.Fatal(err)
			}
			appendNs += mid.Sub(start)
			indexNs += time.Since(mid2)
		}
		b.ReportMetric(float64(appendNs.Microseconds())/1e3/float64(b.N), "append-ms")
		b.ReportMetric(float64(indexNs.Microseconds())/1e3/float64(b.N), "index-ms")
		b.ReportMetric(float64(indexNs)/float64(appendNs), "index/append")
		if info, err := os.Stat(bottles.BottlePath(d.store.Dir, id)); err == nil {
			b.ReportMetric(float64(info.Size())/1e6, "bottle-MB")
		}
	})
	b.Run("append-cpu", func(b *testing.B) {
		t := s.chain[len(s.chain)-1]
		for b.Loop() {
			appendTurn(b, path, id, n)
			n++
			if _, err := t.Update(); err != nil {
				b.Fatal(err)
			}
			in := render.Input{SessionID: id, Spine: sources.BuildSpine(id, s.chain), Now: time.Now()}
			if _, err := render.Render(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
