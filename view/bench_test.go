package view

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/testbin"
)

var benchSessions = flag.Int("list.sessions", 5000, "sessions in BenchmarkList")

// BenchmarkList: the session list of -list.sessions sessions (in 50
// projects), served whole by the handler, from the request to the last
// byte, with the index watching the bottles as it does in the view.
// Target: ≤ 50 ms for 5,000.
func BenchmarkList(b *testing.B) {
	data := b.TempDir()
	store := bottles.Open(data, nil, nil)
	for i := range *benchSessions {
		s := talk{ID: fmt.Sprintf("bench-%05d-0000-4000-8000-000000000000", i), CWD: fmt.Sprintf("/home/u/project-%02d", i%50), Start: day.Add(time.Duration(i) * time.Minute), Turns: [][2]string{
			{fmt.Sprintf("prompt %d: make the retry loop back off and tell me why it failed before", i), "Done: it backs off now."},
			{"and the tests?", "They pass."}}}

		if _, err := store.Write(s.Bottle(b, testNow)); err != nil {
			b.Fatal(err)
		}
	}
	ix, err := index.Open(context.Background(), data, index.Options{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Watch(); err != nil {
		b.Fatal(err)
	}
	ts := &testServer{s: New(Config{Reader: bottles.Reader{DataDir: data, ClaudeDir: data, Location: time.UTC}, Token: testToken}, ix, testHost)}
	ts.h = ts.s.Handler()
	t := &testing.T{}
	ts.t = t
	timed(b, func() {
		res, body := ts.get("/")
		if res.StatusCode != http.StatusOK || strings.Count(body, `<li class="session`) != *benchSessions {
			b.Fatalf("%d, %d sessions listed", res.StatusCode, strings.Count(body, `<li class="session`))
		}
		b.ReportMetric(float64(len(body))/1e6, "MB")
	})
}

// BenchmarkSession2MB: the page of a 2 MB bottle, served whole: opened
// for the first time (its freshness checked first, as show does, and
// every message rendered), opened again (messages rendered before are
// kept), and as a live page fetches it again (read as it is). Target:
// ≤ 200 ms.
func BenchmarkSession2MB(b *testing.B) {
	data := b.TempDir()
	var turns [][2]string
	answer := strings.Repeat("The retry loop now backs off with full jitter; see `backoff.go` and the table:\n\n| attempt | wait |\n|---|---|\n| 1 | 100 ms |\n\n```go\nfor i := range n {\n\tsleep(wait(i))\n}\n```\n\n", 4)
	for size := 0; size < 2<<20; size += len(answer) + 200 {
		turns = append(turns, [2]string{fmt.Sprintf("turn %d: and now **this** part, with [a link](https://example.com/%d)?", len(turns), len(turns)), answer})
	}
	s := talk{ID: "bench-2mb-0000-4000-8000-000000000000", CWD: "/home/u/app", Start: day, Turns: turns}
	writeTalks(b, data, s)
	ix, err := index.Open(context.Background(), data, index.Options{Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ts := &testServer{t: &testing.T{}, s: New(Config{Reader: bottles.Reader{DataDir: data, ClaudeDir: data, Location: time.UTC}, Token: testToken}, ix, testHost)}
	ts.h = ts.s.Handler()
	for _, c := range []struct {
		name, path string
		cold       bool
	}{{"opened-cold", "/s/" + s.ID, true}, {"opened", "/s/" + s.ID, false}, {"live-refresh", "/s/" + s.ID + "?part=body", false}} {
		b.Run(c.name, func(b *testing.B) {
			timed(b, func() {
				if c.cold { // nothing rendered before: the first time the page is opened
					ts.s.cache = newRenderCache(renderCacheBytes)
				}
				res, body := ts.get(c.path)
				if res.StatusCode != http.StatusOK || !strings.Contains(body, "turn 1:") {
					b.Fatalf("%d", res.StatusCode)
				}
				b.ReportMetric(float64(len(body))/1e6, "MB-html")
			})
		})
	}
	cur, _ := bottles.Open(data, nil, nil).ReadCurrent(s.ID)
	b.ReportMetric(float64(len(cur.Data))/1e6, "MB-bottle")
}

// timed runs f 20 times per b.N and reports the median and the slowest in
// milliseconds, and the process's CPU time per run (on a machine busy
// with other work, wall time says more of the machine than of the view).
func timed(b *testing.B, f func()) {
	b.Helper()
	var took []time.Duration
	cpu0 := testbin.CPUTime(b)
	for b.Loop() {
		for range 20 {
			start := time.Now()
			f()
			took = append(took, time.Since(start))
		}
	}
	b.ReportMetric(float64((testbin.CPUTime(b)-cpu0).Microseconds())/1000/float64(len(took)), "cpu-ms")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}
