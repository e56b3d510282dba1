package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// storedCuts are prompts that claude-mem's own stripper cuts early: the
// row it stores keeps the tail of a private element and the close tag that
// ended it (claude-mem.md §4.1). leak is in that tail; after is the text
// after the stray close, which the bottle shows. (And one element that
// claude-mem does not strip at all.)
var storedCuts = []struct{ name, prompt, leak, after string }{
	{"nested private", "NEST-BEFORE <private>a <private>b</private> NESTEDLEAK1</private> NEST-AFTER", "NESTEDLEAK1", "NEST-AFTER"},
	{"nested twice", "N2-BEFORE <private>a<private>b<private>c</private>N2LEAK1</private>N2LEAK2</private> N2-AFTER", "N2LEAK", "N2-AFTER"},
	{"private crossed by another tag", "CROSS-BEFORE <private>outer <system-reminder>r</private> CROSSLEAK3</system-reminder> CROSS-AFTER", "CROSSLEAK3", "CROSS-AFTER"},
	{"another tag crossed by private", "X2-BEFORE <system-reminder>r <private>p</system-reminder> CROSSLEAK4</private> X2-AFTER", "CROSSLEAK4", "X2-AFTER"},
	{"upper-case private inside", "U-BEFORE <private>a<PRIVATE>b</private>UPPERLEAK5</PRIVATE> U-AFTER", "UPPERLEAK5", "U-AFTER"},
	// claude-mem stores <PRIVATE> as it is; bottled strips it.
	{"upper-case private element", "UP2-BEFORE <PRIVATE>UPPERSECRET6</PRIVATE> UP2-AFTER", "UPPERSECRET6", "UP2-AFTER"},
	// The price: a close tag the user typed on its own hides what came
	// before it, as a cut leftover would.
	{"stray close typed", "S-BEFORE <private>gone</private> S-MID </private> S-AFTER", "S-MID", "S-AFTER"},
}

// TestStoredCutsHidden writes storedCuts with the real claude-mem, as
// prompts and, echoed as its agent would echo what it was shown, as
// observations and a summary; the bottle, reconstructed and full, shows
// none of the tails claude-mem let through.
func TestStoredCutsHidden(t *testing.T) {
	w := memwriter.Require(t)
	const sid = "5e0c1a7e-0000-4000-8000-0000000000c7"
	dbPath := filepath.Join(t.TempDir(), "claude-mem.db")
	ops := []memwriter.Op{
		{"op": "session", "content": sid, "project": "cuts", "prompt": "first"},
		{"op": "register", "content": sid, "memory": "mem-cuts"},
	}
	for i, c := range storedCuts {
		ops = append(ops, memwriter.Op{"op": "prompt", "content": sid, "number": i + 1, "text": c.prompt})
	}
	w.Write(t, dbPath, ops...)
	stored := readMem(t, dbPath, sid).Prompts
	if len(stored) != len(storedCuts) {
		t.Fatalf("%d prompts stored, want %d", len(stored), len(storedCuts))
	}
	ops = ops[:0]
	for i, c := range storedCuts {
		if !strings.Contains(stored[i].Text, c.leak) {
			t.Fatalf("%s: claude-mem stored %q, which does not keep %q: the case tests nothing", c.name, stored[i].Text, c.leak)
		}
		ops = append(ops, memwriter.Op{"op": "observation", "content": sid, "prompt_number": i + 1, "type": "change",
			"title": "OBS-" + stored[i].Text, "narrative": stored[i].Text})
	}
	last := stored[len(stored)-1].Text
	ops = append(ops, memwriter.Op{"op": "summary", "content": sid, "prompt_number": len(storedCuts), "request": last,
		"learned": last})
	w.Write(t, dbPath, ops...)
	mem := readMem(t, dbPath, sid)

	full := Input{SessionID: sid, Now: goldenNow, ClaudeMem: mem, Spine: &sources.Spine{SessionID: sid, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: mem.Prompts[0].Created, Text: "the transcript's message"},
		{Kind: sources.EntryAssistant, Time: mem.Prompts[0].Created, Text: "ok"},
	}}}
	for mode, in := range map[string]Input{"reconstructed": {SessionID: sid, Now: goldenNow, ClaudeMem: mem}, "full": full} {
		b, err := Render(in)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		bottle := string(b.Bytes)
		for _, c := range storedCuts {
			if strings.Contains(bottle, c.leak) {
				t.Errorf("%s: %s: %q is in the bottle:\n%s", mode, c.name, c.leak, bottle)
			}
			if !strings.Contains(bottle, c.after) {
				t.Errorf("%s: %s: %q is not in the bottle:\n%s", mode, c.name, c.after, bottle)
			}
		}
		for _, tag := range allTags {
			if strings.Contains(strings.ToLower(bottle), "</"+tag.name+">") {
				t.Errorf("%s: a </%s> is left in the bottle:\n%s", mode, tag.name, bottle)
			}
		}
	}
}

func readMem(t *testing.T, dbPath, sid string) *sources.ClaudeMem {
	t.Helper()
	db, err := sources.OpenClaudeMemDB(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := db.Session(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStripStored(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "hello", "hello"},
		{"whole elements", "a <private>x</private> b <system-reminder>r</system-reminder> c", "a  b  c"},
		{"cut leftover", "start  NESTEDLEAK1</private> end", "end"},
		{"cut leftover of another tag", "x  CROSSLEAK3</system-reminder> y", "y"},
		{"the last stray close counts", "a LEAK1</private> b LEAK2</persisted-output> c", "c"},
		{"any case for private", "a LEAK</PRIVATE> b", "b"},
		{"other names exact", "a </SYSTEM-REMINDER> b", "a </SYSTEM-REMINDER> b"},
		{"stray close then an element", "LEAK</private> b <private>x</private> c", "b  c"},
		{"close of an element is not stray", "a <private>x</private> b", "a  b"},
		{"close inside a removed element", "a <system-reminder>x</private>y</system-reminder> b", "a  b"},
		{"nothing after it", "LEAK</private>", ""},
		{"unclosed private still hides the rest", "a LEAK</private> b <private>c", "b"},
		{"not a close tag", "a </private > b </privatefoo> c", "a </private > b </privatefoo> c"},
		{"assembled stray close", "LEAK</priv<system-reminder>r</system-reminder>ate> b", "b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripStored(tc.in); got != tc.want {
				t.Errorf("StripStored(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestStoredShownAcrossCut: a credential around a stray close tag is
// hidden with what comes before it: the cut must not leave its tail, which
// may not be told for one alone (a user's pattern that matches across the
// tag; a private key block, whose tail the built-in rules know).
func TestStoredShownAcrossCut(t *testing.T) {
	rules, err := redact.Builtin().With([]redact.Rule{{Kind: "Acme key", Pattern: `ACME=\S+`}})
	if err != nil {
		t.Fatal(err)
	}
	key := fakecred.New(5).PrivateKey("RSA ", 4).Text
	mid := strings.Index(key, "\n") + 1 + 20
	for _, tc := range []struct{ name, in, tail string }{
		{"user's pattern", "LEAK ACME=abc</private>TAIL77x\nAFTER", "TAIL77x"},
		{"private key", "LEAK " + key[:mid] + "</private>" + key[mid:] + "\nAFTER", key[mid : mid+16]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := storedShown(rules, tc.in)
			if strings.Contains(out, "LEAK") || strings.Contains(out, tc.tail) || !strings.Contains(out, "AFTER") {
				t.Errorf("storedShown(%q) = %q", tc.in, out)
			}
		})
	}
}
