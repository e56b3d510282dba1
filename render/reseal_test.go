package render

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/sources"
)

// olderRules is the Redact id of a bottle made by the rules before today's,
// whose tag stripper matched <private> in lower case only.
const olderRules = "1"

// tagStand-ins are words the renderer keeps as they are, which
// bottleOfOlderStripper turns into the tags an older stripper left in a
// bottle: the bottle is rendered from the sources with the stand-ins, so
// that its line numbers are those of the text with the tags.
var tagStandIns = strings.NewReplacer("XOPENx", "<PRIVATE>", "XMIXEDx", "<Private>", "XCLOSEx", "</PRIVATE>",
	"XMIXCLOSEx", "</Private>")

// bottleOfOlderStripper renders in and makes of it the bottle an older
// bottled would have written: the stand-ins become tags its stripper
// kept, and the state line records the older rules (with its byte count
// made right).
func bottleOfOlderStripper(t *testing.T, in Input) (old []byte, today *Bottle) {
	t.Helper()
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	return withOlderState(t, []byte(tagStandIns.Replace(string(b.Bytes)))), b
}

// withOlderState is data with its state line recording the older rules.
func withOlderState(t *testing.T, data []byte) []byte {
	return withState(t, data, func(st *State) { st.Redact = olderRules })
}

// withState is data with its state line changed by change, its byte
// count made right.
func withState(t *testing.T, data []byte, change func(*State)) []byte {
	t.Helper()
	st, err := StateOf(data)
	if err != nil {
		t.Fatal(err)
	}
	change(st)
	lines := bytes.SplitN(data, []byte("\n"), stateLineN+1)
	out, err := st.withStateLine(append(bytes.Join(lines[:stateLineN-1], []byte("\n")), '\n'), lines[stateLineN])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resealedPrivate is old, a bottle that holds private text, resealed:
// the test fails if old holds none (it would test nothing) or if the
// resealed bottle or its task still does.
func resealedPrivate(t *testing.T, old []byte) []byte {
	t.Helper()
	if !bytes.Contains(old, []byte("kept-secret")) || !bytes.Contains(old, []byte("<PRIVATE>")) {
		t.Fatal("the older bottle holds no private text: the test tests nothing")
	}
	got, st, err := Reseal(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("kept-secret")) || strings.Contains(st.Task, "kept-secret") {
		t.Fatalf("private text survived the reseal (task %q):\n%s", st.Task, got)
	}
	return got
}

// resealAt is a session whose private text an older stripper kept: in
// the first message (so in the outline, the original request and the
// task too), over lines, unclosed, in an observation, and around text
// that looks like the bottle's own structure once the tag is gone.
func resealAt(first, second string) Input {
	at := func(m int) time.Time { return time.Date(2026, 11, 30, 10, m, 0, 0, time.UTC) }
	return Input{SessionID: "s", Now: goldenNow, Spine: &sources.Spine{SessionID: "s", CWD: "/home/u/src", Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: at(0), Text: first},
		{Kind: sources.EntryAssistant, Time: at(1), Text: "REPLY-ONE kept XMIXEDxkept-secret-3\nover lines\nXMIXCLOSEx REPLY-ONE-TAIL"},
		{Kind: sources.EntryUser, Time: at(2), Text: second},
		{Kind: sources.EntryAssistant, Time: at(3), Text: "REPLY-TWO XOPENxkept-secret-4 unclosed\nand its next line\n\nand more"},
		{Kind: sources.EntryUser, Time: at(4), Text: "PROMPT-THREE\n\nXOPENxkept-secret-5XCLOSEx**User** (10:09)\nPROMPT-THREE-TAIL"},
		{Kind: sources.EntryAssistant, Time: at(5), Text: "REPLY-THREE survives"},
	}}, ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s", Observations: []sources.Observation{
		{ID: 7, Title: "OBS XOPENxkept-secret-6XCLOSEx title", Narrative: "OBS narrative XOPENxkept-secret-7", Created: at(1)}}}}
}

// TestResealStripsTags: a bottle an older stripper made, which kept
// <PRIVATE> and <Private> elements, no longer holds what they hide once
// resealed, and keeps its lines and its structure: the same blocks on the
// same lines, the outline pointing at the same headings.
func TestResealStripsTags(t *testing.T) {
	tests := []struct{ name, first, second string }{
		{"closed", "PROMPT-ONE XOPENxkept-secret-1XCLOSEx go on", "PROMPT-TWO plain"},
		{"over lines", "PROMPT-ONE XOPENxkept-secret-1\nline two of it\nXCLOSEx go on", "PROMPT-TWO XMIXEDx\nkept-secret-2\nXMIXCLOSEx"},
		{"unclosed", "PROMPT-ONE go on XOPENx kept-secret-1\nthe rest of it", "PROMPT-TWO XMIXEDxkept-secret-2"},
		{"whole message", "XOPENxkept-secret-1XCLOSEx", "XMIXEDx\nkept-secret-2\nXMIXCLOSEx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, _ := bottleOfOlderStripper(t, resealAt(tc.first, tc.second))
			got := resealedPrivate(t, old)
			for _, want := range []string{"REPLY-ONE kept", "REPLY-ONE-TAIL", "REPLY-TWO", "REPLY-THREE survives",
				"PROMPT-THREE", "PROMPT-THREE-TAIL", "OBS", "title"} {
				if !bytes.Contains(got, []byte(want)) {
					t.Errorf("%q is gone: a tag hid more than its message", want)
				}
			}
			checkSameStructure(t, old, got)
			if again, _, err := Reseal(got, nil); err != nil || !bytes.Equal(again, got) {
				t.Errorf("resealed again: changed %v, err %v", !bytes.Equal(again, got), err)
			}
		})
	}
}

// checkSameStructure checks that got has old's lines, blocks and outline:
// the same count of lines, blocks of the same kinds on the same lines, a
// state with the same outline and legs, and each outline item pointing at
// the heading it pointed at.
func checkSameStructure(t *testing.T, old, got []byte) {
	t.Helper()
	po, err := Parse(old, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Parse(got, time.UTC)
	if err != nil {
		t.Fatalf("the resealed bottle does not parse: %v", err)
	}
	if n, m := bytes.Count(old, []byte("\n")), bytes.Count(got, []byte("\n")); n != m || pg.State.Lines != po.State.Lines {
		t.Errorf("%d lines (state: %d), the older bottle's %d (state: %d)", m, pg.State.Lines, n, po.State.Lines)
	}
	if pg.State.Bytes != len(got) || pg.State.Outline != po.State.Outline || fmt.Sprint(pg.State.Legs) != fmt.Sprint(po.State.Legs) {
		t.Errorf("state %+v for %d bytes; the older bottle's %+v", pg.State, len(got), po.State)
	}
	if len(pg.Blocks) != len(po.Blocks) {
		t.Fatalf("%d blocks, the older bottle's %d:\n%s", len(pg.Blocks), len(po.Blocks), got)
	}
	for i, b := range pg.Blocks {
		if o := po.Blocks[i]; b.Kind != o.Kind || b.Line != o.Line || !b.Time.Equal(o.Time) {
			t.Errorf("block %d: %v on line %d at %v, the older bottle's %v on line %d at %v", i, b.Kind, b.Line, b.Time, o.Kind, o.Line, o.Time)
		}
	}
	oldLines, gotLines := strings.Split(string(old), "\n"), strings.Split(string(got), "\n")
	item := regexp.MustCompile(`^- line (\d+) · `)
	for n := pg.State.Outline[0]; n <= pg.State.Outline[1]; n++ {
		m, o := item.FindStringSubmatch(gotLines[n-1]), item.FindStringSubmatch(oldLines[n-1])
		if m == nil || o == nil {
			if m != nil || o != nil {
				t.Errorf("outline line %d is %q, the older bottle's %q", n, gotLines[n-1], oldLines[n-1])
			}
			continue
		}
		if to, _ := strconv.Atoi(m[1]); m[0] != o[0] || gotLines[to-1] != oldLines[to-1] {
			t.Errorf("outline line %d points at %q, the older bottle's at %q", n, gotLines[to-1], oldLines[to-1])
		}
	}
}

// TestResealWithoutTagsUnchanged: resealing a bottle of older rules that
// holds no tag to strip changes nothing but its state line, for every
// golden case and the real transcripts: the bottle is, byte for byte,
// the one rendered.
func TestResealWithoutTagsUnchanged(t *testing.T) {
	var bottles []*Bottle
	for _, dir := range goldenCases(t) {
		_, b := renderCase(t, dir)
		bottles = append(bottles, b)
	}
	for _, f := range fixtures.All(t) {
		if b := renderSpine(t, spineOf(t, f)); b != nil {
			bottles = append(bottles, b)
		}
	}
	for _, b := range bottles {
		got, _, err := Reseal(withOlderState(t, b.Bytes), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b.Bytes) {
			t.Errorf("%s: the resealed bottle differs from the one rendered:\n%s", b.State.Session, firstDiff(b.Bytes, got))
		}
	}
}

func TestStripKeepingLines(t *testing.T) {
	tests := []struct {
		name, in string
		stored   bool
		want     string
	}{
		{"no tag", "a\n b \n", false, "a\n b \n"},
		{"nothing stripped", "a <system-reminder>\nb", false, "a <system-reminder>\nb"},
		{"element on one line", "a <PRIVATE>x</PRIVATE> b\nc", false, "a  b\nc"},
		{"element over lines", "a <Private>x\ny\nz</Private> b\nc", false, "a  b\n\n\nc"},
		{"whole text", "<private>x\ny</private>", false, "\n"},
		{"unclosed hides the rest", "a\nb <PRIVATE>x\ny\n\nz", false, "a\nb\n\n\n"},
		{"blank lines and spaces kept", "\n  a <private>x</private>\n\n", false, "\n  a \n\n"},
		{"a tag's newline", "a<private\nid=1>x</private>b\nc", false, "ab\n\nc"},
		{"stored: a stray close hides what is before it", "LEAK\nmore</PRIVATE> b\nc", true, "\nb\nc"},
		{"stored: on the first line", "LEAK</private>  b\nc", true, "b\nc"},
		{"stored: on the last line", "a\nb LEAK</private>", true, "\n"},
		{"stored: an element", "a <private>x\ny</private> b", true, "a  b\n"},
		{"cut before the first tag", "x\n" + assembled(100) + "\nb", false, "x\n" + StripTags(assembled(100)) + "\n"},
		{"stored: cut whole", "x\n" + assembled(100) + "\nb", true, "\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := stripKeepingLines(tc.in, tc.stored); got != tc.want {
				t.Errorf("stripKeepingLines(%q, %v) = %q, want %q", tc.in, tc.stored, got, tc.want)
			}
		})
	}
}

// FuzzStripKeepingLines: stripping a text keeping its lines leaves as
// many lines, and the same words as the stripper leaves.
func FuzzStripKeepingLines(f *testing.F) {
	for _, s := range []string{"a <private>x\ny</private> b\nc", "a\n<PRIVATE>x", "LEAK\n</private>\nb",
		"<priv<system-reminder>x\n</system-reminder>ate>SECRET\n</private> ok", "a<system-reminder>\nb</system-reminder>"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, stored bool) {
		s = strings.ReplaceAll(s, "\x00", "") // a bottle holds none
		got := stripKeepingLines(s, stored)
		if n, m := strings.Count(got, "\n"), strings.Count(s, "\n"); n != m {
			t.Fatalf("stripKeepingLines(%q) = %q: %d newlines, want %d", s, got, n, m)
		}
		want := stripOneLine(s, stored)
		if g, w := strings.Fields(got), strings.Fields(want); fmt.Sprintf("%q", g) != fmt.Sprintf("%q", w) {
			t.Fatalf("stripKeepingLines(%q) = %q, the stripper's %q", s, got, want)
		}
	})
}

// TestResealStripsStoredTags: in a bottle made from claude-mem's rows
// alone, every text is stored text: a stray close tag hides what comes
// before it in its own prompt or summary field only, and a summary's
// fields keep their "> " lines.
func TestResealStripsStoredTags(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 30, 10, m, 0, 0, time.UTC) }
	in := Input{SessionID: "s", Now: goldenNow, ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s", Project: "p",
		Prompts: []sources.Prompt{
			{ID: 1, Number: 1, Text: "STORED-P1 XOPENxkept-secret-1\nover linesXCLOSEx go on", Created: at(0)},
			{ID: 2, Number: 2, Text: "kept-secret-2\nLEAKXCLOSEx STORED-P2 after", Created: at(2)},
		},
		Observations: []sources.Observation{{ID: 7, Title: "STORED-OBS XMIXEDxkept-secret-3", PromptNumber: 1, Created: at(1)}},
		Summaries: []sources.Summary{{ID: 3, Request: "STORED-REQ XOPENxkept-secret-4\nnext lineXCLOSEx done",
			Learned: "STORED-LEARNED XMIXEDxkept-secret-5\nunclosed", NextSteps: "STORED-NEXT survives", PromptNumber: 2, Created: at(3)}},
	}}
	old, _ := bottleOfOlderStripper(t, in)
	got := resealedPrivate(t, old)
	if bytes.Contains(got, []byte("LEAK")) {
		t.Errorf("what a stray close tag hides survived the reseal:\n%s", got)
	}
	for _, want := range []string{"STORED-P1", "go on", "STORED-P2 after", "STORED-OBS", "> **Request:** STORED-REQ",
		"> **Learned:** STORED-LEARNED\n> \n", "> **Next steps:** STORED-NEXT survives"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("no %q in the resealed bottle:\n%s", want, got)
		}
	}
	checkSameStructure(t, old, got)
}

// TestResealUnparsedByLine: a bottle whose body cannot be read into
// blocks (its state names no legs) is stripped line by line, keeping its
// lines: an unclosed tag hides the rest of its line only.
func TestResealUnparsedByLine(t *testing.T) {
	old, _ := bottleOfOlderStripper(t, resealAt("PROMPT-ONE XOPENxkept-secret-1XCLOSEx go on", "PROMPT-TWO XMIXEDxkept-secret-2"))
	old = withState(t, old, func(st *State) { st.Legs = nil })
	if _, err := Parse(old, time.UTC); err == nil {
		t.Fatal("the bottle parses: the test tests nothing")
	}
	got := resealedPrivate(t, old)
	if n, m := bytes.Count(got, []byte("\n")), bytes.Count(old, []byte("\n")); n != m || !bytes.Contains(got, []byte("and its next line")) {
		t.Errorf("%d lines, the older bottle's %d; an unclosed tag hid more than its line:\n%s", n, m, got)
	}
}
