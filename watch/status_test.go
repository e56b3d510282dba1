package watch

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
)

// TestRecorderSessions records changes, renders and catch-up checks of
// more sessions than status lists: Recent shows the keepRecent that
// changed last, newest first, as they were last rendered, and never a
// session a catch-up only checked; a check begun before a session's last
// render does not replace what the render said; the survey sees every
// session.
func TestRecorderSessions(t *testing.T) {
	r := newRecorder(Status{})
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	id := func(i int) string { return fmt.Sprintf("5e550000-0000-4000-8000-%012d", i) }
	const n = 3 * keepRecent
	r.checked(id(n), outcomeFresh, t0)
	r.checked(id(n+1), bottles.Archived.String(), t0)

	if st := r.snapshot(); len(st.Recent) != 0 {
		// Catch-up checks only so far: nothing changed.
		t.Fatalf("Recent lists %+v before any change", st.Recent)
	}
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		r.changed(id(i), "/t/"+id(i)+".jsonl", at)
		res := result{finished: at.Add(time.Millisecond), outcome: outcomeWritten, mode: "full"}
		if i%2 == 1 {
			res = result{finished: at.Add(time.Millisecond), outcome: outcomeFailed, err: errors.New("disk full")}
		}
		r.rendered(id(i), res)
	}
	r.changed(id(n-1), "", t0.Add(time.Hour)) // pending again, and newest
	// A rescan's check begun before the failed render: it says less.
	r.checked(id(1), outcomeFresh, t0)

	st := r.snapshot()
	if len(st.Recent) != keepRecent {
		t.Fatalf("Recent lists %d sessions, want %d", len(st.Recent), keepRecent)
	}
	for k, s := range st.Recent {
		want := n - 1 - k
		if s.Session != id(want) {
			t.Fatalf("Recent[%d] is %s, want %s (newest first)", k, s.Session, id(want))
		}
		mode := "full"
		if want%2 == 1 {
			mode = "" // its only render failed
		}
		if s.Transcript != "/t/"+id(want)+".jsonl" || s.Mode != mode {
			t.Errorf("Recent[%d] = %+v", k, s)
		}
	}
	if s := st.Recent[0]; !s.Pending || s.Outcome != outcomeFailed {
		t.Errorf("the session changed after its render: %+v, want pending, outcome failed", s)
	}

	var seen map[string]*sessionRecord
	r.survey = func(s map[string]*sessionRecord) *Survey { seen = s; return &Survey{} }
	r.snapshotWithSurvey()
	if len(seen) != n+2 {
		t.Fatalf("the survey sees %d sessions, want %d", len(seen), n+2)
	}
	for _, tc := range []struct {
		id      string
		bottled bool // the session has a bottle
		fresh   string
		why     string
	}{
		{id(0), true, "fresh", ""},
		{id(0), false, "missing", "no bottle"}, // removed since
		{id(1), true, "stale", "disk full"},
		{id(1), false, "missing", "disk full"},
		{id(n - 1), true, "stale", "changes not rendered yet"},
		{id(n - 1), false, "missing", "changes not rendered yet"},
		{id(n), true, "fresh", ""},
		{id(n + 1), false, "archived", "cleared"},
		{id(n + 2), true, "stale", "not checked yet"},
		{id(n + 2), false, "missing", "no bottle"},
	} {
		f, why := seen[tc.id].freshness(tc.bottled)
		if f != tc.fresh || why != tc.why {
			t.Errorf("%s, bottled %v: %s (%s), want %s (%s)", tc.id, tc.bottled, f, why, tc.fresh, tc.why)
		}
	}
}

// TestFirstK: the k first elements, in order, of slices in every order
// (sorted either way, shuffled, with ties), as a full sort has them.
func TestFirstK(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 20, 21, 100, 1000} {
		for _, k := range []int{0, 1, 10, 20, 2000} {
			for _, order := range []string{"ascending", "descending", "shuffled", "ties"} {
				s := make([]int, n)
				for i := range s {
					switch order {
					case "ascending":
						s[i] = i
					case "descending":
						s[i] = n - i
					case "shuffled":
						s[i] = rng.IntN(n * 10)
					case "ties":
						s[i] = rng.IntN(3)
					}
				}
				want := slices.Sorted(slices.Values(s))[:min(k, n)]
				got := firstK(slices.Clone(s), k, cmp.Compare[int])
				if !slices.Equal(got, want) {
					t.Errorf("n %d, k %d, %s: %v, want %v", n, k, order, got, want)
				}
			}
		}
	}
}

// TestRecorderCatchUpRenders: a session the catch-up rendered is listed in
// Recent with its transcript and no change time (none was seen), newest
// render first among changes; one with nothing to render is empty, not
// missing; and the snapshot's lists are empty, not nil, before anything
// happened.
func TestRecorderCatchUpRenders(t *testing.T) {
	r := newRecorder(Status{})
	if st := r.snapshot(); st.Errors == nil || st.Recent == nil {
		t.Errorf("errors %#v, recent %#v before anything happened; want empty lists", st.Errors, st.Recent)
	}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const changed, caughtUp, empty = "5e550000-0000-4000-8000-000000000001", "5e550000-0000-4000-8000-000000000002", "5e550000-0000-4000-8000-000000000003"
	r.changed(changed, "/t/"+changed+".jsonl", t0)
	r.rendered(changed, result{finished: t0.Add(time.Second), outcome: outcomeWritten, mode: "full"})
	r.rendered(caughtUp, result{transcript: "/t/" + caughtUp + ".jsonl", finished: t0.Add(2 * time.Second), outcome: outcomeWritten, mode: "full", catchUp: true})
	r.rendered(empty, result{transcript: "/t/" + empty + ".jsonl", finished: t0.Add(-time.Second), outcome: outcomeNothing, catchUp: true})
	st := r.snapshot()
	if len(st.Recent) != 3 || st.Recent[0].Session != caughtUp || st.Recent[1].Session != changed {
		t.Fatalf("Recent = %+v; want the catch-up's render, then the change, then the empty session", st.Recent)
	}
	if s := st.Recent[0]; s.Transcript != "/t/"+caughtUp+".jsonl" || !s.Changed.IsZero() {
		t.Errorf("the catch-up's render is listed as %+v; want its transcript, no change time", s)
	}
	var seen map[string]*sessionRecord
	r.survey = func(s map[string]*sessionRecord) *Survey { seen = s; return &Survey{} }
	r.snapshotWithSurvey()
	if f, why := seen[empty].freshness(false); f != FreshnessEmpty || why != "" {
		t.Errorf("a session with nothing to render is %s (%s), want empty", f, why)
	}
}
