package watch_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/waitfor"
	"github.com/bottled-dev/bottled/render"
)

var latencyDuration = flag.Duration("latency.duration", 60*time.Second,
	"how long BenchmarkChangeToBottle's writers append to transcripts")

// The daemon's timing in BenchmarkChangeToBottle: its defaults, passed
// explicitly so that the debounce subtracted from the figures is the one in
// force.
const (
	latDebounce = 250 * time.Millisecond
	latMaxWait  = 2 * time.Second
	latSessions = 20
)

// BenchmarkChangeToBottle measures how long a line appended to a live
// transcript takes to reach its bottle, with the real daemon (default
// debounce 250 ms, max wait 2 s) following 20 sessions that are written to
// at the same time, like Claude Code writes them: a prompt, then assistant
// text, tool_use and tool_result lines (a few hundred bytes to tens of KB),
// one line at a time 5–200 ms apart, with 0.5–5 s between turns. Every
// session starts with a history of 256 KB to 4 MB, so that renders cost
// what they cost in a long session. Each assistant text carries a unique
// marker; the benchmark watches the bottles directory with fsnotify, reads
// a bottle each time it is replaced, and notes when each marker first
// appears in it and how far into the transcript the bottle reads (the
// offset in its state line).
//
// It reports two different latencies; both are minus the debounce:
//
//   - marker-p50-ms, marker-p99-ms: bottle first containing a marker − the
//     marker's line written, − 250 ms (negative when a render forced by the
//     max wait caught the line early). This is the latency seen by someone
//     reading the bottle at a random moment, but most of it is by design: a
//     line written in the middle of a burst is only rendered once the
//     session has been quiet for the debounce or after the max wait, so the
//     figure grows with the length of bursts, not with the daemon's speed.
//   - quiet-p50-ms, quiet-p99-ms: for each bottle update that followed a
//     quiet period (no line was written to the session within the debounce
//     after the last line the bottle covers, and the max wait did not come
//     first), bottle updated − that last covered line written, − 250 ms:
//     the latency past the quiet period, what the daemon adds to the
//     debounce (event delivery, scheduling, queueing behind other sessions'
//     renders, parse, render, fsync, rename). The target "p99 ≤ 100 ms past
//     the debounce" is about this figure.
//
// deadline-p99-ms is, over every bottle update (also those forced by the
// max wait in a session that kept writing), bottle updated − the render's
// deadline, min(last covered line + debounce, first line not in the
// previous bottle + max wait). For forced renders that deadline is an
// estimate: the daemon counts the max wait from the first change it noted
// after the previous render started, which is within milliseconds of it.
//
// missing counts markers that no bottle contains 10 s after the writers
// stopped: a lost write, which fails the benchmark. Timings are only
// reported; machines are noisy. Run it with
//
//	go test -run '^$' -bench ChangeToBottle -benchtime 1x ./watch [-latency.duration 60s]
func BenchmarkChangeToBottle(b *testing.B) {
	root := b.TempDir()
	claude, data := filepath.Join(root, "claude"), filepath.Join(root, "mem")
	sessions := make([]*latSession, latSessions)
	byID := map[string]*latSession{}
	for i := range sessions {
		id := fmt.Sprintf("1a7e0000-0000-4000-8000-%012d", i)
		s := &latSession{
			idx: i, id: id, path: filepath.Join(claude, "projects", fmt.Sprintf("-home-dev-app%02d", i%7), id+".jsonl"),
			conv: newConvo(id, uint64(i)+1),
		}
		s.seedHistory(b, 256<<10<<(i%5))
		sessions[i], byID[id] = s, s
	}
	bottlesDir := bottles.BottlesDir(data)
	if err := os.MkdirAll(bottlesDir, 0o700); err != nil {
		b.Fatal(err)
	}

	d := startDaemon(b, claude, data, "--verbose",
		"--debounce", latDebounce.String(), "--max-wait", latMaxWait.String(), "--rescan", "30s")
	waitfor.Within(b, 2*time.Minute, "catch-up is over", func() bool {
		st, err := d.status()
		return err == nil && st.CatchUp.Over
	})
	for _, s := range sessions {
		st, err := bottles.ReadState(bottles.BottlePath(bottlesDir, s.id))
		if err != nil || len(st.Transcripts) == 0 || st.Transcripts[len(st.Transcripts)-1].Offset != s.size {
			b.Fatalf("after catch-up, bottle of %s: state %+v, err %v; want it to cover the %d bytes of history", s.id, st, err, s.size)
		}
		s.prevOffset = s.size
	}

	w, err := fsnotify.NewWatcher()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(bottlesDir); err != nil {
		b.Fatal(err)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Rename) {
					continue
				}
				s := byID[strings.TrimSuffix(filepath.Base(ev.Name), ".md")]
				if s == nil || filepath.Ext(ev.Name) != ".md" {
					continue // a temporary file, or the archive
				}
				content, err := os.ReadFile(ev.Name)
				if err != nil {
					continue
				}
				s.observe(content, time.Now())
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				b.Errorf("watching the bottles: %v", err)
			}
		}
	}()

	b.ResetTimer()
	start := time.Now()
	stop := start.Add(*latencyDuration)
	var writers sync.WaitGroup
	for _, s := range sessions {
		writers.Go(func() { s.write(b, stop) })
	}
	writers.Wait()
	wrote := time.Now()

	// The last lines are rendered a debounce after they were written; give
	// the daemon 10 s.
	allSeen := func() bool {
		for _, s := range sessions {
			if s.unseen() > 0 {
				return false
			}
		}
		return true
	}
	for deadline := wrote.Add(10 * time.Second); !allSeen() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	st, stErr := d.status()
	if code := d.stop(); code != 0 {
		b.Errorf("daemon exit code %d after SIGTERM, want 0", code)
	}
	w.Close()
	<-watched

	type slow struct {
		session     string
		last, seen  time.Time
		first, upto int64
	}
	var slowest []slow // the quiet updates, to show the worst
	var updated []time.Time
	for _, s := range sessions {
		for _, u := range s.updates {
			updated = append(updated, u.seen)
		}
	}
	slices.SortFunc(updated, time.Time.Compare)
	var markerLat, quietLat, deadlineLat []time.Duration
	var markers, lines, updates, quietUpdates, forced, missing, unobserved int
	var bytesWritten int64
	for _, s := range sessions {
		final, _ := os.ReadFile(bottles.BottlePath(bottlesDir, s.id))
		s.mu.Lock()
		lines += len(s.lines)
		bytesWritten += s.size - s.size0
		for _, m := range s.markers {
			markers++
			switch {
			case !m.seen.IsZero():
				markerLat = append(markerLat, m.seen.Sub(s.lines[m.line].at)-latDebounce)
			case bytes.Contains(final, []byte(m.name)):
				unobserved++ // in the bottle, but this benchmark missed the update
			default:
				missing++
				if missing <= 10 {
					b.Errorf("marker %s (line %d, ends at byte %d) is in no bottle; the bottle reads to byte %d",
						m.name, m.line, s.lines[m.line].end, stateOffset(final, s.id))
				}
			}
		}
		prev := s.size0
		for _, u := range s.updates {
			if u.offset <= prev {
				continue
			}
			k, _ := slices.BinarySearchFunc(s.lines, u.offset, func(l written, off int64) int {
				return cmp.Compare(l.end, off)
			})
			if k == len(s.lines) || s.lines[k].end != u.offset {
				b.Errorf("session %s: a bottle reads to byte %d, which ends no line written", s.id, u.offset)
				prev = u.offset
				continue
			}
			j, _ := slices.BinarySearchFunc(s.lines, prev+1, func(l written, off int64) int {
				return cmp.Compare(l.end, off)
			})
			updates++
			// The render covered lines j..k. It was due after the quiet
			// period if the session wrote nothing for a debounce after k,
			// unless the max wait, counted from j (the daemon counts from
			// the first change after the previous render started, which is
			// close), came first.
			quietAt, wait := s.lines[k].at.Add(latDebounce), s.lines[j].at.Add(latMaxWait)
			quiet := k+1 == len(s.lines) || !s.lines[k+1].at.Before(quietAt)
			if quiet && !quietAt.After(wait) {
				quietUpdates++
				quietLat = append(quietLat, u.seen.Sub(quietAt))
				slowest = append(slowest, slow{s.id, s.lines[k].at, u.seen, prev, u.offset})
				deadlineLat = append(deadlineLat, u.seen.Sub(quietAt))
			} else {
				forced++
				deadlineLat = append(deadlineLat, u.seen.Sub(wait))
			}
			prev = u.offset
		}
		s.mu.Unlock()
	}

	elapsed := wrote.Sub(start)
	b.Logf("%d sessions for %v: %d lines (%.1f MB, %.0f lines/s), %d markers; %d bottle updates seen, %d after a quiet period, %d forced by the max wait",
		latSessions, elapsed.Round(time.Millisecond), lines, float64(bytesWritten)/(1<<20), float64(lines)/elapsed.Seconds(), markers, updates, quietUpdates, forced)
	b.Logf("marker latency − debounce: %s", summary(markerLat))
	b.Logf("latency past the quiet period: %s", summary(quietLat))
	b.Logf("latency past the render deadline: %s", summary(deadlineLat))
	slices.SortFunc(slowest, func(a, b slow) int { return cmp.Compare(b.seen.Sub(b.last), a.seen.Sub(a.last)) })
	for _, w := range slowest[:min(3, len(slowest))] {
		lo, _ := slices.BinarySearchFunc(updated, w.last, time.Time.Compare)
		hi, _ := slices.BinarySearchFunc(updated, w.seen, time.Time.Compare)
		b.Logf("slowest past the quiet period: %s bytes %d..%d, last written at %s, in the bottle at %s, %v past the debounce; %d bottles replaced in between",
			w.session, w.first, w.upto, w.last.Format("15:04:05.000"), w.seen.Format("15:04:05.000"),
			(w.seen.Sub(w.last) - latDebounce).Round(100*time.Microsecond), hi-lo)
	}
	if stErr == nil {
		b.Logf("daemon status: renders written %d, unchanged %d, failed %d; its latency (first change → written) p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms",
			st.Renders.Written, st.Renders.Unchanged, st.Renders.Failed, st.Renders.P50ms, st.Renders.P90ms, st.Renders.P99ms, st.Renders.MaxMs)
		for _, e := range st.Errors {
			b.Errorf("daemon error: %s %s: %s", e.Time.Format(time.RFC3339Nano), e.Session, e.Error)
		}
	}
	if unobserved > 0 {
		b.Logf("%d markers reached their bottle without this benchmark seeing the update (not counted in the latencies)", unobserved)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(percentile(markerLat, 0.50)), "marker-p50-ms")
	b.ReportMetric(ms(percentile(markerLat, 0.99)), "marker-p99-ms")
	b.ReportMetric(ms(percentile(quietLat, 0.50)), "quiet-p50-ms")
	b.ReportMetric(ms(percentile(quietLat, 0.99)), "quiet-p99-ms")
	b.ReportMetric(ms(percentile(deadlineLat, 0.99)), "deadline-p99-ms")
	b.ReportMetric(float64(markers), "markers")
	b.ReportMetric(float64(updates), "updates")
	b.ReportMetric(float64(missing), "missing")
	if missing > 0 {
		b.Errorf("%d of %d markers never reached their bottle", missing, markers)
	}
}

// latSession is one session BenchmarkChangeToBottle writes to. Its writer
// goroutine appends lines; the bottle watcher records what it sees. mu
// guards lines, markers and the watcher's fields.
type latSession struct {
	idx        int
	id, path   string
	conv       *convo
	size0      int64 // bytes of history, before the benchmark's lines
	size       int64 // bytes written so far; the writer's
	named      int   // markers named so far; the writer's
	mu         sync.Mutex
	lines      []written
	markers    []marker
	firstUnset int      // markers before it are all seen
	updates    []update // bottle replacements, in the order seen
	prevOffset int64
}

// written is one line appended by the benchmark.
type written struct {
	end int64     // offset just past the line
	at  time.Time // just after the write returned
}

type marker struct {
	name string
	line int       // index in lines
	seen time.Time // when a bottle was first read containing it
}

type update struct {
	seen   time.Time
	offset int64 // how far into the transcript the bottle reads
}

// seedHistory writes a generated history of about size bytes.
func (s *latSession) seedHistory(b *testing.B, size int64) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := synth.Transcript(&buf, s.id, size, uint64(s.idx)+100); err != nil {
		b.Fatal(err)
	}
	// Continue the conversation from the history's last record.
	hist := buf.Bytes()
	last := hist[bytes.LastIndexByte(hist[:len(hist)-1], '\n')+1:]
	var rec struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(last, &rec); err != nil || rec.UUID == "" {
		b.Fatalf("history of %s: last record %q: %v", s.id, last, err)
	}
	s.conv.parent = rec.UUID
	if err := os.WriteFile(s.path, hist, 0o600); err != nil {
		b.Fatal(err)
	}
	s.size0, s.size = int64(len(hist)), int64(len(hist))
}

// write plays the session until stop: turns of lines 5–200 ms apart,
// 0.5–5 s between turns, starting at a random point of the first pause.
func (s *latSession) write(b *testing.B, stop time.Time) {
	rng := rand.New(rand.NewPCG(uint64(s.idx), 0x1a7e))
	sleepUntil := func(d time.Duration) bool {
		if time.Now().Add(d).After(stop) {
			return false
		}
		time.Sleep(d)
		return true
	}
	if !sleepUntil(time.Duration(rng.Int64N(int64(3 * time.Second)))) {
		return
	}
	for {
		for i, l := range s.conv.turn(liveTurn, s.nextMarker) {
			if i > 0 && !sleepUntil(5*time.Millisecond+time.Duration(rng.Int64N(int64(195*time.Millisecond)))) {
				return
			}
			s.appendLine(b, l)
		}
		if !sleepUntil(500*time.Millisecond + time.Duration(rng.Int64N(int64(4500*time.Millisecond)))) {
			return
		}
	}
}

// nextMarker names the marker of the next assistant text. Fixed width, so
// that no marker is a prefix of another.
func (s *latSession) nextMarker() string {
	s.named++
	return fmt.Sprintf("LAT-%02d-%05d", s.idx, s.named)
}

// appendLine appends one line the way Claude Code does (open, append,
// close), recording the time just after the write. The line and its
// marker are registered first, so that the watcher, which may read the
// bottle before the time is recorded, can already look for the marker.
func (s *latSession) appendLine(b *testing.B, l convLine) {
	n := int64(len(l.text))
	s.mu.Lock()
	idx := len(s.lines)
	s.lines = append(s.lines, written{end: s.size + n})
	if l.marker != "" {
		s.markers = append(s.markers, marker{name: l.marker, line: idx})
	}
	s.mu.Unlock()
	s.size += n
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(l.text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	now := time.Now()
	if err != nil {
		b.Errorf("append to %s: %v", s.path, err)
	}
	s.mu.Lock()
	s.lines[idx].at = now
	s.mu.Unlock()
}

// observe takes a bottle read at seen.
func (s *latSession) observe(content []byte, seen time.Time) {
	off := stateOffset(content, s.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if off > s.prevOffset {
		s.updates = append(s.updates, update{seen: seen, offset: off})
		s.prevOffset = off
	}
	for i := s.firstUnset; i < len(s.markers); i++ {
		if m := &s.markers[i]; m.seen.IsZero() && bytes.Contains(content, []byte(m.name)) {
			m.seen = seen
		}
	}
	for s.firstUnset < len(s.markers) && !s.markers[s.firstUnset].seen.IsZero() {
		s.firstUnset++
	}
}

func (s *latSession) unseen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.markers[s.firstUnset:] {
		if m.seen.IsZero() {
			n++
		}
	}
	return n
}

// stateOffset returns how far into the session's own transcript a bottle
// reads, from the state on its fourth line, or -1.
func stateOffset(bottle []byte, id string) int64 {
	lines := bytes.SplitN(bottle, []byte("\n"), 5)
	if len(lines) < 5 {
		return -1
	}
	body, ok := bytes.CutPrefix(lines[3], []byte("<!-- bottled-state "))
	if !ok {
		return -1
	}
	body, ok = bytes.CutSuffix(body, []byte(" -->"))
	if !ok {
		return -1
	}
	var st render.State
	if json.Unmarshal(body, &st) != nil {
		return -1
	}
	for _, f := range st.Transcripts {
		if f.Session == id {
			return f.Offset
		}
	}
	return -1
}

// convo generates a Claude Code conversation, record by record, with the
// e2e tests' record helpers: deterministic for a seed.
type convo struct {
	id     string
	rng    *rand.Rand
	parent string
	seq    int
}

func newConvo(id string, seed uint64) *convo {
	return &convo{id: id, rng: rand.New(rand.NewPCG(seed, 0xc0ffee))}
}

// turnShape sizes a turn.
type turnShape struct {
	steps      int // API messages: at most this many
	calls      int // tool calls per message: at most this many
	textWords  [2]int
	resultSize [2]int // bytes of a tool result, log-uniform between the two
}

var (
	// liveTurn is a turn of an active session: up to 5 messages, each with
	// text and up to 3 tool calls whose results run to tens of KB.
	liveTurn = turnShape{steps: 5, calls: 3, textWords: [2]int{20, 400}, resultSize: [2]int{200, 40 << 10}}
	// smallTurn keeps a whole session at a few KB.
	smallTurn = turnShape{steps: 2, calls: 1, textWords: [2]int{5, 40}, resultSize: [2]int{100, 1500}}
)

type convLine struct {
	text   string
	marker string // the marker the line's assistant text carries, if any
}

// turn returns the lines of one turn: a prompt, then messages of text (a
// marker from mark at its start, when mark is not nil) and tool calls,
// each followed by its result, the last message only text.
func (c *convo) turn(shape turnShape, mark func() string) []convLine {
	r := c.rng
	var out []convLine
	add := func(marker string, rec func(uuid string) string) {
		c.seq++
		uuid := fmt.Sprintf("%s-r%06d", c.id[:8], c.seq)
		out = append(out, convLine{text: rec(uuid), marker: marker})
		c.parent = uuid
	}
	add("", func(uuid string) string { return userRec(c.id, uuid, c.parent, c.words(8+r.IntN(50))) })
	steps := 1 + r.IntN(shape.steps)
	for st := range steps {
		msg := fmt.Sprintf("msg_%s_%06d", c.id[:8], c.seq)
		if st == steps-1 || r.IntN(2) == 0 {
			m := ""
			if mark != nil {
				m = mark()
			}
			text := strings.TrimSpace(m + " " + c.words(shape.textWords[0]+r.IntN(shape.textWords[1]-shape.textWords[0])))
			add(m, func(uuid string) string { return assistantRec(c.id, uuid, c.parent, msg, text) })
		}
		if st == steps-1 {
			break
		}
		for range 1 + r.IntN(shape.calls) {
			tool := fmt.Sprintf("toolu_%s_%06d", c.id[:8], c.seq)
			add("", func(uuid string) string { return toolUseRec(c.id, uuid, c.parent, msg, tool) })
			lo, hi := float64(shape.resultSize[0]), float64(shape.resultSize[1])
			size := int(lo * math.Pow(hi/lo, r.Float64()))
			add("", func(uuid string) string { return toolResultRec(c.id, uuid, c.parent, tool, c.output(size)) })
		}
	}
	return out
}

var benchWords = strings.Fields("the a retry loop client server config handler request response error value " +
	"test build cache index file path parser buffer stream token session render bottle state offset " +
	"queue worker timeout context deadline signal lock write read append flush sync commit schema")

func (c *convo) words(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(benchWords[c.rng.IntN(len(benchWords))])
	}
	return sb.String()
}

// output is about n bytes of command output or source, with the quotes,
// tabs and newlines that real tool results carry.
func (c *convo) output(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		w := benchWords[c.rng.IntN(len(benchWords))]
		if c.rng.IntN(2) == 0 {
			fmt.Fprintf(&sb, "=== RUN   Test%s%d\n--- PASS: Test%s%d (0.%02ds)\n", w, i, w, i, c.rng.IntN(100))
		} else {
			fmt.Fprintf(&sb, "\tif err := %s(\"%s\"); err != nil {\n\t\treturn err\n\t}\n", w, c.words(2))
		}
	}
	return sb.String()
}

func toolResultRec(id, uuid, parent, toolID, output string) string {
	return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: time.Now()}.ToolResult(toolID, output)
}

// percentile returns the nearest-rank p-quantile of ds, 0 if empty.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
}

func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	return fmt.Sprintf("n=%d min %v p50 %v p90 %v p99 %v max %v", len(ds),
		r(percentile(ds, 0)), r(percentile(ds, 0.5)), r(percentile(ds, 0.9)), r(percentile(ds, 0.99)), r(percentile(ds, 1)))
}
