package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
)

// reparseBottles are the bottles Reparse is checked on: every golden
// case's and every real fixture's, rendered from the first k messages of
// their spine for growing k, as a session grows.
func reparseBottles(t *testing.T) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	grow := func(name string, in Input) {
		sp := in.Spine
		step := max(len(sp.Entries)/12, 1)
		for k := 1; ; k = min(k+step, len(sp.Entries)) {
			cut := *sp
			cut.Entries = sp.Entries[:k]
			in.Spine = &cut
			if b, err := Render(in); err == nil {
				out[name] = append(out[name], b.Bytes)
			}
			if k == len(sp.Entries) {
				break
			}
		}
	}
	for _, dir := range goldenCases(t) {
		in := loadCase(t, dir)
		if in.Spine == nil || len(in.Spine.Entries) == 0 {
			continue
		}
		grow(filepath.Base(dir), in)
	}
	for _, f := range fixtures.All(t) {
		if strings.HasPrefix(filepath.Base(f), "agent-") {
			continue
		}
		if sp := spineOf(t, f); len(sp.Entries) > 0 {
			grow(filepath.Base(f), Input{SessionID: "s", Spine: sp, Now: goldenNow})
		}
	}
	return out
}

// marked is the parse of data Reparse makes without an earlier one,
// checked against Parse: the same but for the marks.
func marked(t *testing.T, what string, data []byte, loc *time.Location) *Parsed {
	t.Helper()
	p, kept, err := Reparse(data, loc, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want, err := Parse(data, loc)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	unmarked := *p
	unmarked.marks = nil
	if kept != 0 || !reflect.DeepEqual(&unmarked, want) {
		t.Fatalf("%s: Reparse without an earlier parse differs from Parse (%d blocks taken):\n%s", what, kept, parseDiff(&unmarked, want))
	}
	return p
}

// checkReparse reparses data after the reparse of old and compares it
// with the parse of data alone: the same, marks included. It returns the
// reparse and what it took.
func checkReparse(t *testing.T, what string, old, data []byte, loc *time.Location) (*Parsed, int) {
	t.Helper()
	want := marked(t, what, data, loc)
	prev := marked(t, what, old, loc)
	before := slices.Clone(prev.Blocks)
	oldBody := old[prev.BodyStart:]
	got, kept, err := Reparse(data, loc, prev)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: Reparse differs from Parse (%d blocks taken):\n%s", what, kept, parseDiff(got, want))
	}
	// What it says it took is what the earlier parse had: the same
	// blocks, of the same bytes, in the part of the body both share.
	same := commonPrefix(oldBody, data[got.BodyStart:])
	for i := range kept {
		was, now := before[i], got.Blocks[i]
		if was.Kind != now.Kind || !was.Time.Equal(now.Time) || now.End-got.BodyStart > same ||
			!bytes.Equal(old[was.Start:was.End], data[now.Start:now.End]) ||
			was.Text-was.Start != now.Text-now.Start {
			t.Fatalf("%s: block %d of %d taken is not the one the earlier parse had: %+v, was %+v", what, i, kept, now, was)
		}
	}
	return got, kept
}

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

// parseDiff describes the first difference between two parses.
func parseDiff(got, want *Parsed) string {
	for i := range min(len(got.Blocks), len(want.Blocks)) {
		if got.Blocks[i] != want.Blocks[i] {
			return fmt.Sprintf("block %d: %+v, want %+v", i, got.Blocks[i], want.Blocks[i])
		}
	}
	if len(got.Blocks) != len(want.Blocks) {
		return fmt.Sprintf("%d blocks, want %d", len(got.Blocks), len(want.Blocks))
	}
	if !reflect.DeepEqual(got.marks, want.marks) {
		return fmt.Sprintf("marks %+v, want %+v", got.marks, want.marks)
	}
	g, w := *got, *want
	g.Blocks, w.Blocks, g.marks, w.marks = nil, nil, nil, nil
	return fmt.Sprintf("outside the blocks: %+v, want %+v", g, w)
}

// TestReparseEqualsParse: a bottle read after the one it replaces, from
// the earlier parse, is read exactly as Parse reads it, whatever changed
// between the two: the session grew (the blocks before the new turns are
// taken, not read again), a message in the middle changed, the header
// moved the body, the session's start or the zone changed (nothing is
// taken).
func TestReparseEqualsParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 6))
	taken, grown := 0, 0
	for name, seq := range reparseBottles(t) {
		for i := 1; i < len(seq); i++ {
			_, kept := checkReparse(t, name+" grown", seq[i-1], seq[i], time.UTC)
			taken += kept
			grown++
			// Read the other way: the session cut back (a rewind).
			checkReparse(t, name+" cut", seq[i], seq[i-1], time.UTC)
		}
		last := seq[len(seq)-1]
		p, err := Parse(last, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			checkReparse(t, name+" edited", last, mutateBody(rng, last, p.BodyStart), time.UTC)
		}
		// The same bytes: the blocks before the last mark are taken.
		if _, kept := checkReparse(t, name+" same", last, last, time.UTC); len(last)-p.BodyStart > 2*markEvery && kept == 0 {
			t.Errorf("%s: the same bottle again took none of its %d blocks", name, len(p.Blocks))
		}
		// Another start of the session, another zone: nothing is taken.
		started := bytes.Replace(last, []byte(" · started: 20"), []byte(" · started: 19"), 1)
		if bytes.Equal(started, last) {
			t.Fatalf("%s: no start to change in the header", name)
		}
		if _, kept := checkReparse(t, name+" started", last, started, time.UTC); kept != 0 {
			t.Errorf("%s: another start took %d blocks", name, kept)
		}
		zone := time.FixedZone("X", 5*3600)
		prev := marked(t, name, last, time.UTC)
		got, kept, err := Reparse(last, zone, prev)
		if want := marked(t, name, last, zone); err != nil || !reflect.DeepEqual(got, want) || kept != 0 {
			t.Errorf("%s: another zone: took %d blocks, equal %v (%v)", name, kept, reflect.DeepEqual(got, want), err)
		}
		// A header line more moves the body down.
		longer := bytes.Replace(last, []byte("\n## Outline\n"), []byte("\n## Outline\n- line 1 · 10:00 · more\n"), 1)
		checkReparse(t, name+" header", last, longer, time.UTC)
	}
	if grown < 20 || taken == 0 {
		t.Fatalf("%d grown bottles, %d blocks taken: too few to test", grown, taken)
	}
}

// TestReparseChained reparses each bottle of a growing session from the
// reparse of the one before, as the search index does: the marks a
// Reparse leaves serve the next one as Parse's do.
func TestReparseChained(t *testing.T) {
	for name, seq := range reparseBottles(t) {
		p := marked(t, name, seq[0], time.UTC)
		for i := 1; i < len(seq); i++ {
			got, _, err := Reparse(seq[i], time.UTC, p)
			if err != nil {
				t.Fatal(err)
			}
			want := marked(t, name, seq[i], time.UTC)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s step %d: %s", name, i, parseDiff(got, want))
			}
			p = got
		}
	}
}

// mutateBody changes data after body at random: bytes replaced, lines
// inserted (structure among them) or removed.
func mutateBody(rng *rand.Rand, data []byte, body int) []byte {
	if body >= len(data) {
		return data
	}
	at := body + rng.IntN(len(data)-body)
	pieces := []string{"\n", "\n\n---\n\n", "**User** (10:00)\n", "*Did:*\n- ran `x`\n", "*What happened:*\n- 🔵 seen\n",
		"**Assistant** (2026-01-02 11:00)\n", "## Leg 2 — compacted (auto) at 12:00\n", "text", "\\---\n"}
	out := bytes.Clone(data[:at])
	switch rng.IntN(3) {
	case 0:
		out = append(out, pieces[rng.IntN(len(pieces))]...)
		out = append(out, data[at:]...)
	case 1:
		end := min(len(data), at+rng.IntN(400))
		out = append(out, data[end:]...)
	default:
		out = append(out, 'x')
		out = append(out, data[min(at+1, len(data)):]...)
	}
	return out
}
