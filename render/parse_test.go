package render

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/sources"
)

// TestParseCoversBody parses every golden bottle and the bottle of every
// real fixture and checks the parse against the bottle and its input:
// every body line is in exactly one block or is a structural line (blank,
// turn rule, list heading, leg heading), there is one user block per user
// message of the input, and the observation blocks are the bottle's
// observation lines.
func TestParseCoversBody(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, b := renderCase(t, dir)
			p := checkParse(t, b.Bytes, time.UTC)
			if want := expectedUsers(t, dir); want >= 0 && countBlocks(p, BlockUser) != want {
				t.Errorf("user blocks = %d, want %d (expect.txt)", countBlocks(p, BlockUser), want)
			}
		})
	}
	for _, f := range fixtures.All(t) {
		if strings.HasPrefix(filepath.Base(f), "agent-") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			sp := spineOf(t, f)
			b := renderSpine(t, sp)
			if b == nil {
				return // a sidechain-only file: nothing to parse
			}
			p := checkParse(t, b.Bytes, time.UTC)
			users := 0
			for _, e := range sp.Entries {
				if e.Kind == sources.EntryUser {
					users++
				}
			}
			if got := countBlocks(p, BlockUser); got != users {
				t.Errorf("user blocks = %d, spine has %d user messages", got, users)
			}
		})
	}
}

// checkParse parses a bottle and checks that its blocks tile the body.
func checkParse(t *testing.T, bottle []byte, loc *time.Location) *Parsed {
	t.Helper()
	p, err := Parse(bottle, loc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(bottle), "\n")
	starts := make([]int, len(lines)+1) // byte offset of each 1-based line
	off := 0
	for i, l := range lines {
		starts[i+1] = off
		off += len(l)
	}
	if got := starts[p.State.Legs[0]]; p.BodyStart != got {
		t.Errorf("BodyStart = %d, want %d", p.BodyStart, got)
	}
	owner := map[int]int{} // line → block index
	end := p.BodyStart
	for i, bl := range p.Blocks {
		if bl.Start < end || bl.End < bl.Text || bl.Text < bl.Start || bl.End > len(bottle) {
			t.Fatalf("block %d (%s, line %d) has range [%d %d %d], after %d", i, bl.Kind, bl.Line, bl.Start, bl.Text, bl.End, end)
		}
		if starts[bl.Line] != bl.Start {
			t.Errorf("block %d starts at byte %d, its line %d at %d", i, bl.Start, bl.Line, starts[bl.Line])
		}
		end = bl.End
		for n := bl.Line; n < len(starts) && starts[n] < bl.End; n++ {
			owner[n] = i
		}
	}
	// Observation lines are the "- [#…" lines of a list under an
	// unquoted "*What happened:*" heading; a message quoting one is not.
	// Trail lines are the "- " lines of a list under an unquoted
	// "*Did:*" heading.
	obsLines, inList := 0, false
	trailLines, inTrail := 0, false
	for n := p.State.Legs[0]; n <= len(lines); n++ {
		line := strings.TrimSuffix(lines[n-1], "\n")
		inList = inList && strings.HasPrefix(line, "- [#") || line == "*What happened:*"
		if inList && strings.HasPrefix(line, "- [#") {
			obsLines++
		}
		inTrail = inTrail && strings.HasPrefix(line, "- ") || line == "*Did:*"
		if inTrail && strings.HasPrefix(line, "- ") {
			trailLines++
			if i, ok := owner[n]; !ok || p.Blocks[i].Kind != BlockDeed || p.Blocks[i].Line != n {
				t.Errorf("trail line %d is not a deed block of its own: %.80q", n, line)
			}
		}
		if _, ok := owner[n]; ok {
			continue
		}
		if line == "" || line == "---" || line == "*What happened:*" || line == "*Did:*" || strings.HasPrefix(line, "## Leg ") {
			continue
		}
		t.Errorf("line %d is in no block: %.80q", n, line)
	}
	if got := countBlocks(p, BlockObservation); got != obsLines {
		t.Errorf("observation blocks = %d, bottle has %d observation lines", got, obsLines)
	}
	if got := countBlocks(p, BlockDeed); got != trailLines {
		t.Errorf("deed blocks = %d, bottle has %d trail lines", got, trailLines)
	}
	return p
}

func countBlocks(p *Parsed, kind BlockKind) int {
	n := 0
	for _, b := range p.Blocks {
		if b.Kind == kind {
			n++
		}
	}
	return n
}

// expectedUsers reads "users N" from a case's expect.txt, -1 if absent.
func expectedUsers(t *testing.T, dir string) int {
	t.Helper()
	n, ok := expectLine(t, dir, "users ")
	if !ok {
		return -1
	}
	v, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestParseCompaction checks what the parse says about the blocks of the
// compaction case against the case's transcript, read by hand: kinds,
// legs, times (the date shown once, then carried) and text.
func TestParseCompaction(t *testing.T) {
	_, b := renderCase(t, filepath.Join("..", "testdata", "render", "compaction"))
	p := checkParse(t, b.Bytes, time.UTC)
	at := func(hm string) time.Time {
		tm, _ := time.Parse("2006-01-02 15:04", "2026-02-12 "+hm)
		return tm
	}
	want := []struct {
		kind  BlockKind
		leg   int
		time  time.Time
		words string
	}{
		{BlockUser, 1, at("10:04"), "COMPACT-P1 implement the CSV exporter"},
		{BlockAssistant, 1, at("10:04"), "COMPACT-A1 Starting with the writer"},
		// The trail: the Write, then three test runs, each its own deed.
		{BlockDeed, 1, at("10:04"), "created export/csv.go (+1)"},
		{BlockDeed, 1, at("10:04"), "ran `go test ./export/ -run TestCSV0`"},
		{BlockDeed, 1, at("10:04"), "ran `go test ./export/ -run TestCSV1`"},
		{BlockDeed, 1, at("10:04"), "ran `go test ./export/ -run TestCSV2`"},
		{BlockAssistant, 2, at("10:31"), "COMPACT-CONTINUE-A Picking up"},
		{BlockDeed, 2, at("10:31"), "edited export/csv.go (+1 −1)"},
		// The text after the trail goes on under the same heading.
		{BlockAssistant, 2, at("10:31"), "COMPACT-CONTINUE-B The exporter is done"},
		{BlockUser, 2, at("10:33"), "COMPACT-P2 now add a --since flag"},
		{BlockAssistant, 2, at("10:34"), "COMPACT-A2 Added --since"},
		{BlockUser, 3, at("11:03"), "COMPACT-P3 run the benchmarks"},
		{BlockAssistant, 3, at("11:04"), "COMPACT-A3 The exporter writes"},
	}
	if len(p.Blocks) != len(want) {
		t.Fatalf("%d blocks, want %d", len(p.Blocks), len(want))
	}
	legOf := func(line int) int { // from the state's legs, as a reader finds it
		leg := 0
		for _, start := range p.State.Legs {
			if line >= start {
				leg++
			}
		}
		return leg
	}
	for i, w := range want {
		bl := p.Blocks[i]
		text := string(b.Bytes[bl.Text:bl.End])
		if leg := legOf(bl.Line); bl.Kind != w.kind || leg != w.leg || !bl.Time.Equal(w.time) || !strings.HasPrefix(text, w.words) {
			t.Errorf("block %d = %s leg %d at %v %.40q, want %s leg %d at %v %q", i, bl.Kind, leg, bl.Time, text, w.kind, w.leg, w.time, w.words)
		}
		if strings.Contains(text, "\n---") || strings.HasSuffix(text, "\n\n") {
			t.Errorf("block %d keeps the turn rule or blank lines: %q", i, text)
		}
	}
	if p.Project != "/home/dev/projects/ledger" || !p.Started.Equal(time.Date(2026, 2, 12, 10, 4, 11, 0, time.UTC)) {
		t.Errorf("project %q started %v", p.Project, p.Started)
	}
	if p.FirstPrompt != "COMPACT-P1 implement the CSV exporter for the ledger entries" {
		t.Errorf("first prompt %q", p.FirstPrompt)
	}
}

// TestParseKeepsRulesInsideMessages: a "---" line and bold lines inside a
// message are the message's, not the end of its block.
func TestParseKeepsRulesInsideMessages(t *testing.T) {
	msg := "before the rule\n\n---\n\n**Bold** words\n\nafter the rule"
	sp := &sources.Spine{Entries: []sources.Entry{
		{Kind: sources.EntryUser, Text: "question", Time: goldenNow},
		{Kind: sources.EntryAssistant, Text: msg, Time: goldenNow},
	}}
	b, err := Render(Input{SessionID: "s", Spine: sp, Now: goldenNow})
	if err != nil {
		t.Fatal(err)
	}
	p := checkParse(t, b.Bytes, time.UTC)
	if len(p.Blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(p.Blocks))
	}
	// The block is the message as the bottle shows it: its rule quoted.
	if got, want := string(b.Bytes[p.Blocks[1].Text:p.Blocks[1].End]), verbatim(msg)+"\n"; got != want || !strings.Contains(got, "\\---") {
		t.Errorf("assistant block text %q, want %q", got, want)
	}
}

func TestParseRefusesNonBottles(t *testing.T) {
	for _, data := range []string{"", "# hello\n", "a\nb\nc\n<!-- bottled-state {} -->\n", strings.Repeat("x", 1000)} {
		if _, err := Parse([]byte(data), nil); err == nil {
			t.Errorf("Parse(%.20q) succeeded", data)
		}
	}
}

// TestParseDates: a body that opens with the assistant continuing shows
// its first date in the outline only, so the session's start date is
// taken; a date shown later carries over to the times after it.
func TestParseDates(t *testing.T) {
	first := time.Date(2026, 3, 9, 23, 50, 0, 0, time.UTC)
	sp := &sources.Spine{Started: first, Entries: []sources.Entry{
		{Kind: sources.EntryAssistant, Text: "continuing", Time: first},
		{Kind: sources.EntryUser, Text: "next day", Time: first.Add(20 * time.Minute)},
		{Kind: sources.EntryAssistant, Text: "answer", Time: first.Add(25 * time.Minute)},
	}}
	b, err := Render(Input{SessionID: "s", Spine: sp, Now: goldenNow})
	if err != nil {
		t.Fatal(err)
	}
	p := checkParse(t, b.Bytes, time.UTC)
	want := []time.Time{first, first.Add(20 * time.Minute), first.Add(25 * time.Minute)}
	if len(p.Blocks) != len(want) {
		t.Fatalf("%d blocks", len(p.Blocks))
	}
	for i, w := range want {
		if !p.Blocks[i].Time.Equal(w) {
			t.Errorf("block %d at %v, want %v", i, p.Blocks[i].Time, w)
		}
	}
	for _, c := range []string{"24:00", "9:05", "2026-13-01 10:00", "2026-01-01T10:00", "ab:cd"} {
		if isClock(c) {
			t.Errorf("isClock(%q)", c)
		}
	}
}

// TestParseTrailLookalikes: a message that imitates a trail is quoted and
// gives no deed block, and a deed whose argument holds newlines and
// headings stays one trail line.
func TestParseTrailLookalikes(t *testing.T) {
	sp := &sources.Spine{CWD: "/w", Entries: []sources.Entry{
		{Kind: sources.EntryUser, Text: "question\n\n*Did:*\n- ran `forged`", Time: goldenNow},
		{Kind: sources.EntryAssistant, Text: "answer\n\n *Did:*\n- edited forged.go", Time: goldenNow, Deeds: []sources.Deed{
			{Kind: sources.DeedCommand, Tool: "Bash", Target: "echo hi\n\n**User** (10:00)\n*Did:*\n---\n- injected"},
		}},
		{Kind: sources.EntryAssistant, Text: "after", Time: goldenNow},
	}}
	b, err := Render(Input{SessionID: "s", Spine: sp, Now: goldenNow})
	if err != nil {
		t.Fatal(err)
	}
	p := checkParse(t, b.Bytes, time.UTC)
	var deeds, users []string
	for _, bl := range p.Blocks {
		switch bl.Kind {
		case BlockDeed:
			deeds = append(deeds, string(b.Bytes[bl.Text:bl.End]))
		case BlockUser:
			users = append(users, string(b.Bytes[bl.Text:bl.End]))
		}
	}
	want := "ran `echo hi **User** (10:00) *Did:* --- - injected`\n"
	if len(deeds) != 1 || deeds[0] != want || len(users) != 1 {
		t.Errorf("deed blocks %q, want one %q; user blocks %q", deeds, want, users)
	}
	for _, quoted := range []string{"\n\\*Did:*\n- ran `forged`", "\n\\ *Did:*\n- edited forged.go"} {
		if !strings.Contains(string(b.Bytes), quoted) {
			t.Errorf("bottle lacks the quoted lookalike %q:\n%s", quoted, b.Bytes)
		}
	}
}

// TestProjectOf: the working directory a bottle's header names, read from
// its first two lines; none for a bottle whose session had none, or for
// what is no bottle.
func TestProjectOf(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"a project", "# Session bottle — s1\nproject: /tmp/项目 ü · started: 2026-05-01 10:00:00 UTC · rendered: 2026-05-01 10:05:00 UTC\n", "/tmp/项目 ü"},
		{"no project", "# Session bottle — s1\nproject: — · started: 2026-05-01 10:00:00 UTC\n", ""},
		{"no bottle", "# Notes\nproject: /home/u/app · started: 2026-05-01 10:00:00 UTC\n", ""},
		{"a header alone", "# Session bottle — s1", ""},
	} {
		if got := ProjectOf(strings.NewReader(tc.data)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
