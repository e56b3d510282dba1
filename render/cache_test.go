package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// TestCacheEqualsRenderAtEverySplit grows a copy of every real transcript
// line by line and renders it with the session's cache after each line
// (in a transcript of more than cacheSplits lines, after every n-th line,
// n the number of lines over cacheSplits, and after the last one: every
// render costs the whole prefix) and without one: the bottles must be
// byte for byte the same. Along the way the redaction rules change at a
// third of the lines and change back at two thirds, and the time zone
// changes at each quarter, which must drop what the cache holds.
func TestCacheEqualsRenderAtEverySplit(t *testing.T) {
	ruleSets := cacheTestRules(t)
	zones := []*time.Location{time.UTC, time.FixedZone("X", 5*3600+1800)}
	for _, f := range fixtures.All(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			tr := sources.NewTranscript("s", path)
			cache := &Cache{}
			lines := bytes.SplitAfter(data, []byte("\n"))
			step := max(1, len(lines)/cacheSplits)
			for n := 0; n < len(lines); n += step {
				upTo := min(n+step, len(lines))
				growfile.Append(t, path, bytes.Join(lines[n:upTo], nil))
				if _, err := tr.Update(); err != nil {
					t.Fatal(err)
				}
				in := Input{SessionID: "s", Spine: sources.BuildSpine("s", []*sources.Transcript{tr}), Now: goldenNow,
					Rules: ruleSets[3*n/len(lines)%len(ruleSets)], Location: zones[4*n/len(lines)%len(zones)]}
				checkCached(t, in, cache, fmt.Sprintf("after line %d", upTo))
			}
		})
	}
}

// cacheSplits is how many split points of a transcript
// TestCacheEqualsRenderAtEverySplit renders at, at most.
const cacheSplits = 100

// checkCached renders in with cache and without, and fails unless both
// give the same bottle.
func checkCached(t *testing.T, in Input, cache *Cache, when string) *Bottle {
	t.Helper()
	want, werr := Render(in)
	in.Cache = cache
	got, gerr := Render(in)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: render with the cache: %v, without: %v", when, gerr, werr)
	}
	if werr != nil {
		return nil
	}
	if !bytes.Equal(got.Bytes, want.Bytes) {
		t.Fatalf("%s: the bottle rendered with the cache differs from the one without: %s", when, firstDiff(want.Bytes, got.Bytes))
	}
	if !reflect.DeepEqual(got.State, want.State) {
		t.Fatalf("%s: state with the cache %+v, without %+v", when, got.State, want.State)
	}
	if size, held := cache.Size(), heldBy(cache); size != held {
		t.Fatalf("%s: the cache says it holds %d bytes, its turns hold %d", when, size, held)
	}
	want.Release() // the next renders write into its bytes, as a daemon's do
	return got
}

// heldBy is what the turns of c hold, each measured as it is now.
func heldBy(c *Cache) int64 {
	var n int64
	for i := range c.turns {
		n += c.turns[i].size()
	}
	return n
}

// cacheTestRules are the built-in rules and rules that also redact a
// common word, so that a turn kept from the other rules shows.
func cacheTestRules(t *testing.T) []*redact.Rules {
	t.Helper()
	user, err := redact.Parse([]byte("common word: the\n"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := redact.Builtin().With(user)
	if err != nil {
		t.Fatal(err)
	}
	return []*redact.Rules{redact.Builtin(), more}
}

// TestCachePrivateTagClosedLater renders, with a cache, an assistant
// message whose text blocks arrive in separate records: the first opens a
// <private> tag that only the third closes, and the user's next message
// follows. After every record the bottle is the one rendered without a
// cache, and once the tag is closed the private words are in neither.
func TestCachePrivateTagClosedLater(t *testing.T) {
	const secret = "hunter2-open-sesame"
	records := []string{
		userLine("u1", "", "first question"),
		assistantLine("a1", "u1", "m1", "an answer <private>"+secret),
		assistantLine("a2", "a1", "m1", "still "+secret),
		assistantLine("a3", "a2", "m1", secret+"</private> and the rest"),
		userLine("u2", "a3", "second question"),
		assistantLine("a4", "u2", "m2", "second answer"),
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tr := sources.NewTranscript("s", path)
	cache := &Cache{}
	for n, rec := range records {
		growfile.Append(t, path, []byte(rec+"\n"))
		if _, err := tr.Update(); err != nil {
			t.Fatal(err)
		}
		in := Input{SessionID: "s", Spine: sources.BuildSpine("s", []*sources.Transcript{tr}), Now: goldenNow}
		b := checkCached(t, in, cache, fmt.Sprintf("after record %d", n+1))
		if n >= 3 && strings.Contains(string(b.Bytes), secret) {
			t.Fatalf("after record %d: the bottle shows what the <private> tag holds:\n%s", n+1, b.Bytes)
		}
	}
}

// TestCacheObservationsLate renders the golden case whose observations
// belong to several turns with a cache filled before claude-mem recorded
// any, then with one more at a time: each must land under its turn as
// in a render without the cache.
func TestCacheObservationsLate(t *testing.T) {
	in := loadCase(t, filepath.Join("..", "testdata", "render", "memory-placement"))
	if in.ClaudeMem == nil || len(in.ClaudeMem.Observations) < 2 {
		t.Fatal("the case has fewer than two observations")
	}
	all := in.ClaudeMem.Observations
	cache := &Cache{}
	for n := 0; n <= len(all); n++ {
		m := *in.ClaudeMem
		m.Observations = all[:n]
		in.ClaudeMem = &m
		checkCached(t, in, cache, fmt.Sprintf("with %d observations", n))
	}
	// Backwards too: an observation gone from a turn renders it again.
	for n := len(all); n >= 0; n-- {
		m := *in.ClaudeMem
		m.Observations = all[:n]
		in.ClaudeMem = &m
		checkCached(t, in, cache, fmt.Sprintf("back to %d observations", n))
	}
}

// TestSameEntrySeesEveryField keeps the cache's comparison of entries
// whole: an entry that differs from another in any one field of
// sources.Entry (a field entryScalars lacks, or scalarsOf does not copy,
// included) is not the same entry.
func TestSameEntrySeesEveryField(t *testing.T) {
	var zero sources.Entry
	typ := reflect.TypeFor[sources.Entry]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var e sources.Entry
		v := reflect.ValueOf(&e).Elem().Field(i)
		switch {
		case f.Type == reflect.TypeFor[time.Time]():
			v.Set(reflect.ValueOf(goldenNow))
		case f.Type.Kind() == reflect.Bool:
			v.SetBool(true)
		case v.CanInt():
			v.SetInt(1)
		case v.CanUint():
			v.SetUint(1)
		case f.Type.Kind() == reflect.String:
			v.SetString("x")
		case f.Type.Kind() == reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 1, 1))
		default:
			t.Fatalf("sources.Entry.%s is a %v, which this test cannot set: teach it", f.Name, f.Type)
		}
		if sameEntry(&zero, &e) {
			t.Errorf("an entry whose %s differs is the same to the render cache: compare it in sameEntry", f.Name)
		}
		if c := cloneEntry(&e); !sameEntry(&c, &e) {
			t.Errorf("an entry with %s set is not the same as its copy", f.Name)
		}
	}
}

func userLine(uuid, parent, text string) string {
	return fmt.Sprintf(`{"parentUuid":%s,"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":"2026-03-02T10:00:00.000Z","sessionId":"s"}`, parentJSON(parent), text, uuid)
}

func assistantLine(uuid, parent, msg, text string) string {
	return fmt.Sprintf(`{"parentUuid":%s,"type":"assistant","message":{"id":%q,"role":"assistant","content":[{"type":"text","text":%q}]},"uuid":%q,"timestamp":"2026-03-02T10:00:01.000Z","sessionId":"s"}`, parentJSON(parent), msg, text, uuid)
}

func parentJSON(p string) string {
	if p == "" {
		return "null"
	}
	return fmt.Sprintf("%q", p)
}

// TestCacheDateShownBefore renders, with a cache, two spines whose second
// turn is the same but whose first turn ends on another day: the second
// turn's times show the date or not by what was shown before it, so it
// must not be copied from the first render.
func TestCacheDateShownBefore(t *testing.T) {
	day1 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	spine := func(firstAnswer time.Time) *sources.Spine {
		return &sources.Spine{SessionID: "s", Started: day1, Entries: []sources.Entry{
			{Kind: sources.EntryUser, Time: day1, Text: "first question"},
			{Kind: sources.EntryAssistant, Time: firstAnswer, Text: "first answer"},
			{Kind: sources.EntryUser, Time: day2, Text: "second question"},
			{Kind: sources.EntryAssistant, Time: day2, Text: "second answer"},
		}}
	}
	cache := &Cache{}
	for i, at := range []time.Time{day1, day2, day1} {
		checkCached(t, Input{SessionID: "s", Spine: spine(at), Now: goldenNow}, cache, fmt.Sprintf("spine %d", i+1))
	}
}

// TestCacheSizeCoversHeap fills a cache with a session of many short
// turns, each with a few tool calls, and measures the heap the cache
// holds beyond the spine: Cache.Size, which counts against the daemon's
// --cache-mb, must not be below it by more than a margin for the
// runtime's rounding (it is meant to err on the high side). The test is
// not parallel, so that the package's parallel tests wait while it
// measures.
func TestCacheSizeCoversHeap(t *testing.T) {
	var es []sources.Entry
	at := goldenNow.Add(-1000 * time.Hour)
	for i := range 5000 {
		es = append(es, sources.Entry{Kind: sources.EntryUser, Time: at, Text: "ok"})
		for k := range 3 {
			es = append(es, sources.Entry{Kind: sources.EntryAssistant, Time: at, Text: "done",
				ToolUseIDs: []string{fmt.Sprint("toolu_", i, k)}, Deeds: []sources.Deed{{Kind: sources.DeedCommand, Tool: "Bash", Target: "ls"}}})
		}
		at = at.Add(time.Minute)
	}
	in := Input{SessionID: "s", Spine: &sources.Spine{SessionID: "s", Entries: es}, Now: goldenNow}
	before := heapInUse()
	in.Cache = &Cache{}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	held := heapInUse() - before
	runtime.KeepAlive(in)
	if size := in.Cache.Size(); float64(held) > 1.2*float64(size) {
		t.Fatalf("the cache holds %d bytes of heap and says it holds %d (%.1f×)", held, size, float64(held)/float64(size))
	}
}

// heapInUse is the bytes of live heap objects, after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestCacheLongOutline renders, with a cache, a session whose outline
// leaves turns out (outlineMax), turn by turn, then with one of the first
// turns, which the outline lists, and one it leaves out rewritten: the
// labels the outline keeps from a render to the next must be those of
// the turns as they are now.
func TestCacheLongOutline(t *testing.T) {
	at := goldenNow.Add(-300 * time.Hour)
	var es []sources.Entry
	for i := range outlineMax + 40 {
		if i == outlineMax/2 {
			es = append(es, sources.Entry{Kind: sources.EntryCompaction, Time: at, Trigger: "auto"})
		}
		es = append(es, sources.Entry{Kind: sources.EntryUser, Time: at, Text: fmt.Sprintf("question %d", i)},
			sources.Entry{Kind: sources.EntryAssistant, Time: at.Add(time.Minute), Text: fmt.Sprintf("answer %d", i)})
		at = at.Add(3 * time.Hour)
	}
	cache := &Cache{}
	spine := func(n int) Input {
		return Input{SessionID: "s", Spine: &sources.Spine{SessionID: "s", Entries: slices.Clone(es[:n])}, Now: goldenNow}
	}
	for n := len(es) - 60; n <= len(es); n++ {
		checkCached(t, spine(n), cache, fmt.Sprintf("%d entries", n))
	}
	for _, i := range []int{2, 2*outlineFirst + 2} { // a listed turn's user message, an unlisted one's
		es[i].Text = "rewritten " + es[i].Text
		b := checkCached(t, spine(len(es)), cache, fmt.Sprintf("entry %d rewritten", i))
		if listed := strings.Contains(string(b.Bytes), "· rewritten "+strings.TrimPrefix(es[i].Text, "rewritten ")+"\n"); listed != (i == 2) {
			t.Fatalf("entry %d rewritten: the outline lists it: %v", i, listed)
		}
	}
}
