package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestScheduler steps the scheduler through scripts of changes, renders
// and clock readings, with time given explicitly (t0 plus milliseconds).
//
// Script lines:
//
//	<ms> mark <id>        a change to a session
//	<ms> due <limit> <ids> the sessions that start, comma-separated ("-" for none)
//	<ms> done <id>        a render finished
//	<ms> next <ms|->      the next deadline
func TestScheduler(t *testing.T) {
	tests := []struct{ name, script string }{
		{"trailing: each change restarts the quiet period", `
			0 mark a
			200 mark a
			449 due 9 -
			449 next 450
			450 due 9 a`},
		{"max wait: a session written without pause is still rendered", `
			0 mark a
			200 mark a
			400 mark a
			600 mark a
			800 mark a
			1000 mark a
			1200 mark a
			1400 mark a
			1600 mark a
			1800 mark a
			1999 due 9 -
			2000 next 2000
			2000 due 9 a`},
		{"one at a time: a change during a render waits for it", `
			0 mark a
			250 due 9 a
			300 mark a
			550 due 9 -
			550 next -
			600 done a
			600 next 550
			600 due 9 a`},
		{"the last change before quiet is always rendered", `
			0 mark a
			250 due 9 a
			260 mark a
			270 mark a
			900 done a
			900 due 9 a
			950 done a
			950 next -
			5000 due 9 -`},
		{"bounded: earliest deadline first, limit respected", `
			0 mark b
			10 mark a
			20 mark c
			300 due 2 b,a
			300 due 2 c`},
		{"independent sessions do not delay each other", `
			0 mark a
			100 mark b
			200 mark b
			250 due 9 a
			450 due 9 b`},
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms string) time.Time {
		var n int
		fmt.Sscan(ms, &n)
		return t0.Add(time.Duration(n) * time.Millisecond)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(250*time.Millisecond, 2*time.Second)
			for _, line := range strings.Split(strings.TrimSpace(tc.script), "\n") {
				f := strings.Fields(line)
				now := at(f[0])
				switch f[1] {
				case "mark":
					s.mark(f[2], now)
				case "done":
					s.done(f[2])
				case "due":
					var limit int
					fmt.Sscan(f[2], &limit)
					var ids []string
					for _, st := range s.due(now, limit) {
						ids = append(ids, st.id)
					}
					got := strings.Join(ids, ",")
					if got == "" {
						got = "-"
					}
					if got != f[3] {
						t.Fatalf("%s: due = %s, want %s", strings.TrimSpace(line), got, f[3])
					}
				case "next":
					next, ok := s.next()
					got := "-"
					if ok {
						got = fmt.Sprint(next.Sub(t0).Milliseconds())
					}
					if got != f[2] {
						t.Fatalf("%s: next = %s, want %s", strings.TrimSpace(line), got, f[2])
					}
				default:
					t.Fatalf("bad script line %q", line)
				}
			}
		})
	}
}

func TestSchedulerStartedSince(t *testing.T) {
	t0 := time.Now()
	s := newScheduler(100*time.Millisecond, time.Second)
	s.mark("a", t0)
	s.mark("a", t0.Add(50*time.Millisecond))
	got := s.due(t0.Add(time.Second), 1)
	if len(got) != 1 || !got[0].since.Equal(t0) {
		t.Fatalf("due = %+v, want a since the first change", got)
	}
	if s.start("a") {
		t.Errorf("start of a running session succeeded")
	}
	s.done("a")
	if !s.start("a") || !s.idle("b") || s.idle("a") {
		t.Errorf("start/idle bookkeeping wrong")
	}
}
