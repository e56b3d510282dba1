package watch

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// BenchmarkStatusBuild measures building the daemon's status for 20,000
// sessions, each changed and rendered once, with as many transcripts known
// and bottles on disk: the whole build (status, survey and JSON), which the
// status server does at most once per statusReuse, and how long it holds
// the recorder's lock (the loop and the render workers take it) and the
// file watcher's (its event reading takes it).
//
//	go test -run '^$' -bench StatusBuild ./watch
func BenchmarkStatusBuild(b *testing.B) {
	const sessions = 20000
	dir := b.TempDir()
	d := &Daemon{store: bottles.Open(dir, nil, nil), rec: newRecorder(Status{}), observers: map[string]bool{}}
	fw := &fsWatch{seen: map[string]fileStamp{}}
	if err := os.MkdirAll(d.store.Dir, 0o700); err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range sessions {
		id := fmt.Sprintf("b0170000-0000-4000-8000-%012d", i)
		path := filepath.Join(dir, "projects", fmt.Sprintf("-home-dev-p%02d", i%30), id+".jsonl")
		at := t0.Add(time.Duration(i) * time.Second)
		fw.seen[path] = fileStamp{size: 4096, mod: at}
		d.rec.changed(id, path, at)
		d.rec.rendered(id, result{since: at, finished: at.Add(300 * time.Millisecond), outcome: outcomeWritten, mode: "full"})
		if err := os.WriteFile(filepath.Join(d.store.Dir, id+".md"), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	d.rec.survey = func(s map[string]*sessionRecord) *Survey { return d.survey(fw, s) }
	srv := newStatusServer(d.rec.snapshotWithSurvey, time.Now, slog.New(slog.DiscardHandler))
	var size int
	cpu0 := testbin.CPUTime(b)
	for b.Loop() {
		size = len(srv.cache.build())
	}
	b.ReportMetric(float64((testbin.CPUTime(b)-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
	held := func(f func()) float64 {
		start := time.Now()
		for range 20 {
			f()
		}
		return float64(time.Since(start).Microseconds()) / 20 / 1000
	}
	b.ReportMetric(held(func() { d.rec.copyLocked() }), "recorder-lock-ms")
	b.ReportMetric(held(func() { fw.transcripts() }), "watcher-lock-ms")
	b.ReportMetric(float64(size)/1024, "status-KB")
}
