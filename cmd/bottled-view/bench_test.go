package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkLiveUpdate: how long after the daemon writes a session's
// bottle its open page in Chromium shows the new turn, without a reload
// (target ≤ 500 ms), and how long after the transcript's append, which
// adds the daemon's quiet period (--debounce, 250 ms by default). The
// daemon runs with its default timings; each of 20 turns is appended to
// the transcript, the bottle's file is watched for it (read every
// millisecond) and the page's text for it.
func BenchmarkLiveUpdate(b *testing.B) {
	br := newBrowser(b)
	w := newWorld(b)
	day := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	path := w.transcript("-home-dev-app", idApp)
	w.appendTo(path, turn(idApp, "/home/dev/app", day, 1, "BENCH first prompt", "first answer")...)
	w.start("bottled", "run")
	bottle := filepath.Join(w.data, "bottles", idApp+".md")
	w.waitFor("the first bottle", func() bool { _, err := os.Stat(bottle); return err == nil })
	w.startView()
	br.do(b, "open the session", chromedp.Navigate(w.base()+"/s/"+idApp+"?token="+w.token()))
	br.wait(b, "the page", `document.body.dataset.live === "1" && document.body.innerText.includes("first answer")`, 30*time.Second)
	var toPage, fromAppend []time.Duration
	n := 1
	for b.Loop() {
		for range 20 {
			n++
			marker := fmt.Sprintf("LIVEMARK%04d", n)
			written := make(chan time.Time, 1)
			go func() { // notes when the bottle first holds the marker
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if data, err := os.ReadFile(bottle); err == nil && bytes.Contains(data, []byte(marker)) {
						written <- time.Now()
						return
					}
					time.Sleep(time.Millisecond) // the watch's resolution
				}
				written <- time.Time{}
			}()
			start := time.Now()
			w.appendTo(path, turn(idApp, "/home/dev/app", day.Add(time.Duration(n)*time.Minute), n, "prompt "+marker, "answer "+marker)...)
			br.wait(b, "the turn", `document.body.innerText.includes("answer `+marker+`")`, 30*time.Second)
			shown := time.Now()
			at := <-written
			if at.IsZero() {
				b.Fatalf("the bottle never held %s", marker)
			}
			toPage = append(toPage, shown.Sub(at))
			fromAppend = append(fromAppend, shown.Sub(start))
		}
	}
	report := func(d []time.Duration, unit string) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, unit+"-p50-ms")
		b.ReportMetric(float64(d[len(d)-1].Microseconds())/1000, unit+"-max-ms")
	}
	report(toPage, "bottle-to-page")
	report(fromAppend, "append-to-page")
}
