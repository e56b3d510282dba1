package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// BenchmarkHookInClaudeCode reports the SessionStart:compact hook's time
// as Claude Code itself reports it in its debug log ("finished with
// status 0 (Nms)"): with the bottle fresh (the daemon rendered it), and
// stale (no daemon: the hook renders inline). Each iteration is one turn
// and one /compact of the same session.
//
//	go test ./e2e -run '^$' -bench HookInClaudeCode -benchtime 10x
func BenchmarkHookInClaudeCode(b *testing.B) {
	for _, tc := range []struct {
		name   string
		daemon bool
	}{{"fresh", true}, {"stale", false}} {
		b.Run(tc.name, func(b *testing.B) {
			w := newWorldNoDaemon(b, reply("An answer of a few words."))
			if tc.daemon {
				w.startDaemon()
			}
			id := newSessionID()
			w.claudeP("The first turn.", "--session-id", id)
			var times []int
			for i := range b.N {
				prompt := fmt.Sprintf("Turn %d.", i)
				w.claudeP(prompt, "--resume", id)
				if tc.daemon {
					w.settled(id, prompt)
				}
				r := w.claudeP("/compact", "--resume", id)
				for _, m := range hookTiming.FindAllStringSubmatch(r.debug, -1) {
					if m[1] == "compact" {
						ms, _ := strconv.Atoi(m[3])
						times = append(times, ms)
					}
				}
			}
			if len(times) != b.N {
				b.Fatalf("%d compact hook timings in %d runs", len(times), b.N)
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2]), "median-ms")
			b.ReportMetric(float64(times[len(times)-1]), "max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
