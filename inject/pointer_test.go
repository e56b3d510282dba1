package inject

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// longSession appends turns of long assistant prose, with a compaction
// before turn i for each i in compactAt, and returns the last uuid.
func longSession(t *testing.T, e *env, turns int, compactAt ...int) string {
	t.Helper()
	long := strings.Repeat("a long line of assistant prose that fills the bottle; ", 12)
	var sb strings.Builder
	parent := "a1"
	for i := range turns {
		if slices.Contains(compactAt, i) {
			b := fmt.Sprintf("cb%d", i)
			sb.WriteString(boundaryRec(b, parent) + summaryRec("s"+b, b))
			parent = "s" + b
		}
		u, a := fmt.Sprintf("u%d", i+2), fmt.Sprintf("a%d", i+2)
		sb.WriteString(user(u, parent, fmt.Sprintf("PLAN-P%d keep going", i)))
		sb.WriteString(assistant(a, u, "m"+a, fmt.Sprintf("PLAN-A%d %s", i, long)))
		parent = a
	}
	e.append(t, sb.String())
	return parent
}

var planStep = regexp.MustCompile(`(\d+)\. offset (\d+), limit (\d+)`)

// TestPointerReadingPlan checks the plan for bottles far bigger than one
// Read: the header and outline first, then the span the summary replaced
// (its latest part, when long) in contiguous steps that each fit one Read.
func TestPointerReadingPlan(t *testing.T) {
	tests := []struct {
		name   string
		source string
		setup  func(t *testing.T, e *env)
		// span returns the lines the plan must cover, from the state.
		span      func(st *render.State) (from, to int)
		inContext bool // the pointer says what follows the span is in context
	}{
		{"just compacted", "compact", func(t *testing.T, e *env) {
			last := longSession(t, e, 1500, 700)
			e.append(t, boundaryRec("end", last)+summaryRec("send", "end"))
		}, func(st *render.State) (int, int) { return st.Legs[len(st.Legs)-2], st.Lines }, false},
		{"just compacted, bottle written before the compaction", "compact", func(t *testing.T, e *env) {
			last := longSession(t, e, 1500, 700)
			if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil {
				t.Fatal(err)
			}
			e.append(t, boundaryRec("end", last)+summaryRec("send", "end"))
		}, func(st *render.State) (int, int) { return st.Legs[1], st.Lines }, false},
		{"resumed after a compaction", "resume", func(t *testing.T, e *env) {
			longSession(t, e, 1500, 900)
		}, func(st *render.State) (int, int) { return st.Legs[0], st.Legs[1] - 1 }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.setup(t, e)
			out, err := SessionStart(context.Background(), e.cfg(), e.payload(tc.source))
			if err != nil {
				t.Fatal(err)
			}
			ctx := decode(t, out)
			st, err := bottles.ReadState(e.bottle())
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(e.bottle())
			lines := render.LinesOf(data)
			steps := planStep.FindAllStringSubmatch(ctx, -1)
			if len(steps) < 3 || len(steps) > 1+maxSteps {
				t.Fatalf("%d steps in the reading plan:\n%s", len(steps), ctx)
			}
			num := func(s string) int { n, _ := strconv.Atoi(s); return n }
			if off, lim := num(steps[0][2]), num(steps[0][3]); off != 1 || lim < st.Outline[1] || lim > st.Outline[1]+slack {
				t.Errorf("first step offset %d limit %d, want the header and outline, lines 1-%d, and at most %d more", off, lim, st.Outline[1], slack)
			}
			from, to := tc.span(st)
			first := num(steps[1][2])
			if first < from || (first > from && len(steps) != 1+maxSteps) {
				t.Errorf("the steps start at line %d, the span at %d", first, from)
			}
			// Each step starts inside the previous one and after its
			// start, so together they leave no gap; each reads some lines
			// past the next one's start; the last reaches the span's end.
			prevOff, prevEnd := 0, 0
			for i, s := range steps {
				if n := num(s[1]); n != i+1 {
					t.Errorf("step %d numbered %d", i+1, n)
				}
				off, lim := num(s[2]), num(s[3])
				if got := tokens(lines, off, off+lim-1); got > stepTokens || lim > stepLines {
					t.Errorf("step offset %d limit %d: %d lines, ~%d tokens: more than one Read", off, lim, lim, got)
				}
				if i >= 2 && (off <= prevOff || off > prevEnd+1 || prevEnd-off+1 < slack/2) {
					t.Errorf("step at lines %d-%d after one at %d-%d: a gap, or too little overlap", off, off+lim-1, prevOff, prevEnd)
				}
				prevOff, prevEnd = off, off+lim-1
			}
			if prevEnd < to {
				t.Errorf("the steps end at line %d, the span at %d", prevEnd, to)
			}
			says := fmt.Sprintf("What follows line %d is already in your context.", to)
			if strings.Contains(ctx, says) != tc.inContext {
				t.Errorf("pointer says %q: %v, want %v\n%s", says, !tc.inContext, tc.inContext, ctx)
			}
		})
	}
}

func TestPointerSmallBottleIsOneRead(t *testing.T) {
	e := newEnv(t)
	out, err := SessionStart(context.Background(), e.cfg(), e.payload("compact"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := bottles.ReadState(e.bottle())
	if err != nil {
		t.Fatal(err)
	}
	steps := planStep.FindAllStringSubmatch(decode(t, out), -1)
	if len(steps) != 1 || steps[0][2] != "1" || steps[0][3] != strconv.Itoa(st.Lines+slack) {
		t.Errorf("a bottle of %d lines: steps %q, want one read of all of it", st.Lines, steps)
	}
}

func TestPointerReconstructed(t *testing.T) {
	e := newEnv(t)
	os.Remove(e.transcript)
	in := render.Input{SessionID: e.id, Now: time.Now(), ClaudeMem: &sources.ClaudeMem{
		ContentSessionID: e.id, Project: "app",
		Prompts:   []sources.Prompt{{ID: 1, Number: 1, Text: "RECON-P1 rebuild the index"}},
		Summaries: []sources.Summary{{ID: 1, Request: "RECON-REQ Rebuild the search index", PromptNumber: 1}},
	}}
	b, err := render.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bottles.Open(e.data, nil, nil).Write(b); err != nil {
		t.Fatal(err)
	}
	out, err := SessionStart(context.Background(), e.cfg(), e.payload("resume"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := decode(t, out)
	for _, want := range []string{"partial reconstruction", "only the user's messages are verbatim", "generated by claude-mem", "Current task: RECON-REQ Rebuild the search index"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("reconstructed pointer lacks %q:\n%s", want, ctx)
		}
	}
	if strings.Contains(ctx, "do not repeat it") {
		t.Errorf("reconstructed pointer speaks of a final assistant message it does not have")
	}
}

// TestPointerLineTooLongForOneRead: a bottle line longer than one Read can
// return is left out of every step and named, so that no step fails.
func TestPointerLineTooLongForOneRead(t *testing.T) {
	e := newEnv(t)
	last := longSession(t, e, 400)
	huge := strings.Repeat("{\"k\":[1,2,3],\"v\":\"x\"},", 3000) // one line of dense JSON
	e.append(t, user("uh", last, "HUGE "+huge)+assistant("ah", "uh", "mah", "Noted the blob."))
	e.append(t, boundaryRec("end", "ah")+summaryRec("send", "end"))
	out, err := SessionStart(context.Background(), e.cfg(), e.payload("compact"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := decode(t, out)
	data, _ := os.ReadFile(e.bottle())
	lines := render.LinesOf(data)
	hugeLine := 0
	for n := 1; n <= lines.Count() && hugeLine == 0; n++ {
		if bytes.HasPrefix(lines.Line(n), []byte("HUGE ")) {
			hugeLine = n
		}
	}
	if hugeLine == 0 {
		t.Fatal("the long line is not in the bottle")
	}
	if !strings.Contains(ctx, fmt.Sprintf("Line %d alone is longer than one Read returns", hugeLine)) {
		t.Errorf("the pointer does not name line %d:\n%s", hugeLine, ctx)
	}
	for _, s := range planStep.FindAllStringSubmatch(ctx, -1) {
		off, _ := strconv.Atoi(s[2])
		lim, _ := strconv.Atoi(s[3])
		if got := tokens(lines, off, off+lim-1); got > stepTokens {
			t.Errorf("step offset %d limit %d: ~%d tokens, more than one Read", off, lim, got)
		}
	}
}

// TestPointerLongLineIsItsOwnStep: a line too long to share a step with
// others, but whose estimate is under lineStepTokens (a long prompt in
// Chinese: two tokens a character by the estimate), is read by a step of
// its own, with as much slack after it as that step's budget leaves, and
// is not left out; a line over that budget is left out, and with the MCP
// tools registered the pointer says how the read tool shows it.
func TestPointerLongLineIsItsOwnStep(t *testing.T) {
	for _, mcp := range []bool{false, true} {
		t.Run(fmt.Sprintf("mcp %v", mcp), func(t *testing.T) {
			e := newEnv(t)
			last := longSession(t, e, 400)
			long := "LONGCJK " + strings.Repeat("项目数据", 2000) // ~16,000 tokens by the estimate
			huge := "HUGE " + strings.Repeat("{\"k\":[1,2,3],\"v\":\"x\"},", 3000)
			e.append(t, user("ul", last, long)+assistant("al", "ul", "mal", "Read the long prompt.")+
				user("uh", "al", huge)+assistant("ah", "uh", "mah", "Noted the blob.")+
				user("uz", "ah", "PLAN-LAST one more turn")+assistant("az", "uz", "maz", "PLAN-LAST done."))
			e.append(t, boundaryRec("end", "az")+summaryRec("send", "end"))
			cfg := e.cfg()
			cfg.MCPTools = mcp
			out, err := SessionStart(context.Background(), cfg, e.payload("compact"))
			if err != nil {
				t.Fatal(err)
			}
			ctx := decode(t, out)
			data, _ := os.ReadFile(e.bottle())
			lines := render.LinesOf(data)
			longLine, hugeLine := 0, 0
			for n := 1; n <= lines.Count(); n++ {
				switch l := lines.Line(n); {
				case bytes.HasPrefix(l, []byte("LONGCJK ")):
					longLine = n
				case bytes.HasPrefix(l, []byte("HUGE ")):
					hugeLine = n
				}
			}
			if est := lineTokens(lines.Line(longLine)); longLine == 0 || hugeLine == 0 || est <= stepTokens-slackTokens || est > lineStepTokens {
				t.Fatalf("long line %d (~%d tokens), huge line %d: want both, the long one over a step's budget and under a lone line's", longLine, est, hugeLine)
			}
			if strings.Contains(ctx, fmt.Sprintf("Line %d alone", longLine)) {
				t.Errorf("the pointer leaves out line %d:\n%s", longLine, ctx)
			}
			read, prevEnd := false, 0
			for _, s := range planStep.FindAllStringSubmatch(ctx, -1)[1:] { // after the outline's
				off, _ := strconv.Atoi(s[2])
				lim, _ := strconv.Atoi(s[3])
				end := off + lim - 1
				if end <= prevEnd {
					t.Errorf("step offset %d limit %d reads nothing the one before did not", off, lim)
				}
				prevEnd = end
				if off == longLine {
					read = true
					if got := tokens(lines, off, end); got > lineStepTokens || lim < 2 {
						t.Errorf("the long line's step offset %d limit %d: ~%d tokens, want at most %d and some slack", off, lim, got, lineStepTokens)
					}
				} else if got := tokens(lines, off, end); got > stepTokens {
					t.Errorf("step offset %d limit %d: ~%d tokens, more than one Read", off, lim, got)
				}
				if off <= hugeLine && hugeLine <= end {
					t.Errorf("step offset %d limit %d reads the huge line %d", off, lim, hugeLine)
				}
			}
			if !read {
				t.Errorf("no step starts at the long line %d:\n%s", longLine, ctx)
			}
			said := fmt.Sprintf("Line %d alone is longer than one Read returns", hugeLine)
			byMCP := fmt.Sprintf(`%s {"from":%d,"to":%d}`, MCPTools[0], hugeLine, hugeLine)
			if !strings.Contains(ctx, said) || strings.Contains(ctx, byMCP) != mcp {
				t.Errorf("the pointer does not say %q, or says %q: %v (want %v):\n%s", said, byMCP, !mcp, mcp, ctx)
			}
		})
	}
}

// tokens is the estimate for lines from..to (1-based, inclusive).
func tokens(lines render.Lines, from, to int) int {
	n := 0
	for i := from; i <= to && i <= lines.Count(); i++ {
		n += lineTokens(lines.Line(i))
	}
	return n
}

// TestPointerCutBetweenCharacters: a pointer longer than hook context may
// be is cut at a character's end (here inside a bottle path of family
// emoji), never between its code points.
func TestPointerCutBetweenCharacters(t *testing.T) {
	e := newEnv(t)
	if _, err := SessionStart(context.Background(), e.cfg(), e.payload("compact")); err != nil { // renders the bottle
		t.Fatal(err)
	}
	data, err := os.ReadFile(e.bottle())
	if err != nil {
		t.Fatal(err)
	}
	st, err := bottles.ReadState(e.bottle())
	if err != nil {
		t.Fatal(err)
	}
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"
	long := "/" + strings.Repeat(family, maxContext/len(family)+1)
	out := Pointer(&bottles.Current{Path: long, Data: data, State: st}, AfterCompaction, Span{}, false)
	at := strings.Index(out, family)
	if len(out) > maxContext || at < 0 || (len(out)-at)%len(family) != 0 {
		t.Errorf("pointer cut to %d bytes, %d bytes into the path's emoji", len(out), (len(out)-at)%len(family))
	}
}
