package render

import (
	"bytes"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// clipLead puts a credential where the outline (outlineLabelMax), an
// observation's clause (clauseMax) and the task (taskMax) cut their text:
// redaction must see it whole first.
var clipLead = map[string]string{
	"outline":     strings.Repeat("word ", outlineLabelMax/5-2),
	"observation": strings.Repeat("word ", clauseMax/5-2),
	"task":        strings.Repeat("word ", taskMax/5-2),
}

// TestRenderRedacts writes every kind of credential into every string a
// bottle shows, in full and reconstructed mode: the user's messages, the
// assistant's, the working directory, claude-mem's prompts, observations
// and summaries, at the points where the outline, an observation line and
// the task clip them. No part of the secret long enough to be telling may
// reach the bottle; the look-alikes must reach it unchanged.
func TestRenderRedacts(t *testing.T) {
	gen := fakecred.New(17)
	looks := strings.Join(gen.Lookalikes(), "\n")
	for _, c := range gen.Every() {
		t.Run(c.Kind+"/"+c.Text[:min(12, len(c.Text))], func(t *testing.T) {
			for mode, in := range map[string]Input{"full": fullWith(c.Text, looks), "reconstructed": reconstructedWith(c.Text, looks)} {
				b, err := Render(in)
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				checkRedacted(t, mode, string(b.Bytes), c, looks)
				if b.State.Redact != redact.Builtin().ID() {
					t.Errorf("%s: state says redact %q, want %q", mode, b.State.Redact, redact.Builtin().ID())
				}
			}
		})
	}
}

// checkRedacted fails if any 16 bytes of c's secret are in bottle, if the
// placeholder of its kind is not, or if a look-alike line is missing.
func checkRedacted(t *testing.T, mode, bottle string, c fakecred.Credential, looks string) {
	t.Helper()
	const telling = 16
	for i := 0; i+telling <= len(c.Secret); i++ {
		if w := c.Secret[i : i+telling]; strings.Contains(bottle, w) {
			t.Fatalf("%s: %q of the %s is in the bottle:\n%s", mode, w, c.Kind, bottle)
		}
	}
	if !strings.Contains(bottle, redact.Placeholder(c.Kind)) {
		t.Errorf("%s: no %q in the bottle", mode, redact.Placeholder(c.Kind))
	}
	for _, l := range strings.Split(looks, "\n") {
		if !strings.Contains(bottle, l) {
			t.Errorf("%s: look-alike %q is not in the bottle", mode, l)
		}
	}
}

var redactT0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func redactAt(m int) time.Time { return redactT0.Add(time.Duration(m) * time.Minute) }

// fullWith is a transcript session holding cred in every message.
func fullWith(cred, looks string) Input {
	obs := sources.Observation{ID: 7, Title: clipLead["observation"] + cred, Narrative: clipLead["observation"] + cred + ". Then more.",
		Subtitle: cred, Created: redactAt(1)}
	return Input{SessionID: "s", Now: goldenNow, Spine: &sources.Spine{SessionID: "s", CWD: "/home/u/src/" + cred, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: redactAt(0), Text: "deploy with " + cred + "\n" + looks},
		{Kind: sources.EntryAssistant, Time: redactAt(2), Text: "I used " + cred + " and\n" + looks},
		{Kind: sources.EntryUser, Time: redactAt(4), Text: clipLead["outline"] + cred},
		{Kind: sources.EntryAssistant, Time: redactAt(5), Text: "ok"},
		{Kind: sources.EntryUser, Time: redactAt(6), Text: clipLead["task"] + cred},
	}}, ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s", Observations: []sources.Observation{obs}}}
}

// reconstructedWith is a session known from claude-mem alone, holding cred
// in every row.
func reconstructedWith(cred, looks string) Input {
	return Input{SessionID: "s", Now: goldenNow, ClaudeMem: &sources.ClaudeMem{ContentSessionID: "s", Project: cred,
		Prompts: []sources.Prompt{
			{ID: 1, Number: 1, Text: "deploy with " + cred + "\n" + looks, Created: redactAt(0)},
			{ID: 2, Number: 2, Text: clipLead["outline"] + cred, Created: redactAt(4)},
		},
		Observations: []sources.Observation{{ID: 7, Title: clipLead["observation"] + cred, Narrative: cred + ". More.", PromptNumber: 1, Created: redactAt(1)},
			{ID: 8, Text: cred + "\n" + cred, PromptNumber: 2, Created: redactAt(5)}},
		Summaries: []sources.Summary{{ID: 3, Request: clipLead["task"] + cred, Investigated: cred, Learned: cred, Completed: cred,
			NextSteps: cred, Notes: looks, PromptNumber: 2, Created: redactAt(6)}},
	}}
}

// TestRenderUserRules renders with a user's pattern added: its matches go,
// named by the user's kind, and the state records the rules' ID.
func TestRenderUserRules(t *testing.T) {
	rules, err := redact.Builtin().With([]redact.Rule{{Kind: "Acme token", Pattern: `acme_[0-9a-f]{32}`}})
	if err != nil {
		t.Fatal(err)
	}
	tok := "acme_" + fakecred.New(3).Str(fakecred.Hex, 32)
	in := fullWith(tok, "")
	in.Rules = rules
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b.Bytes); strings.Contains(got, tok) || !strings.Contains(got, "[redacted: Acme token]") {
		t.Errorf("user pattern not applied:\n%s", got)
	}
	if b.State.Redact != rules.ID() || rules.ID() == redact.Builtin().ID() {
		t.Errorf("state says redact %q, want %q (built-in %q)", b.State.Redact, rules.ID(), redact.Builtin().ID())
	}
	in.Rules = nil // the built-in rules: the user's token is kept
	if b, err := Render(in); err != nil || !strings.Contains(string(b.Bytes), tok) {
		t.Errorf("built-in rules redacted a token of the user's format (err %v)", err)
	}
}

// plainSeparators end a credential in the fuzzed text: none is a
// character a rule takes into a token, a key's name or a value; some are
// what clean changes. elementSeparators are elements the tag stripper
// removes, and NUL bytes, which clean drops: both join what is around
// them.
var (
	plainSeparators = []string{" ", "\n", "\t", "\r\n", "\r", `"`, "'", "`", "<", ">", "(", ")", ",", ";", "|",
		"\xff", "\xe2\x80\x94", "\n\n---\n"}
	elementSeparators = []string{"<system-reminder>x</system-reminder>", "<private>p</private>", "<private>\n</private>", "\x00", "\x00\x00"}
)

// spanSlack is how far beyond an inserted credential a replaced span may
// reach when the text around it redacts to itself: a context's key before
// it, a private key's BEGIN line taking it for its body.
const spanSlack = 256

// FuzzTextRedacts runs the function every bottle string goes through
// (shown: clean, the tag stripper, redaction) over a generated credential of
// every kind in arbitrary text, in two ways: split at a fuzzed point by a
// <private> element (which the stripper joins again) between plain
// separators, or whole between separators that may be elements the
// stripper removes (which join it to the text around). Neither the
// credential's secret nor the private text may survive; when the text
// around it redacts to itself, no span redaction replaces is longer than
// the credential and a bounded slack, so redaction eats nothing that is
// not one; and shown is idempotent. (Both at once, a credential split by a
// private element and joined to a word by another, is not covered: each
// removal could join or separate, and shown does not try every way.)
func FuzzTextRedacts(f *testing.F) {
	for i, s := range [][2]string{
		{"", ""}, {"Here it is ", ", thanks"}, {"token=", ""}, {`{"password": "`, `"}`},
		{"-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END RSA PRIVATE KEY-----"},
		{"https://user:", "@host/path"}, {"Authorization: Bearer", "\nHost: x"},
		{"\xff\xfe invalid \x00", "\xc3"}, {"export OPENAI_API_KEY=$", "${X}"}, {"[redacted: ", "]"},
		{"<private>", ""}, {"0", "0"}, {"<system-reminder>", "</system-reminder>"},
	} {
		f.Add(uint64(i), uint8(i), s[0], s[1], uint8(i), uint8(2*i), uint8(3*i))
	}
	const private = "PRIVATE-Z9Q"
	f.Fuzz(func(t *testing.T, seed uint64, which uint8, before, after string, cut, sepA, sepB uint8) {
		creds := fakecred.New(seed).Every()
		c := creds[int(which)%len(creds)]
		for _, p := range []*string{&before, &after} {
			for _, bad := range []string{c.Secret, private, "<private", "</private", "<system-reminder", "</system-reminder"} {
				for strings.Contains(*p, bad) {
					*p = strings.ReplaceAll(*p, bad, "")
				}
			}
		}
		cred, seps := c.Text, plainSeparators
		if cut%2 == 0 {
			k := strings.Index(c.Text, c.Secret) + int(cut/2)%len(c.Secret)
			cred = c.Text[:k] + "<private>" + private + "</private>" + c.Text[k:]
		} else {
			seps = append(seps[:len(seps):len(seps)], elementSeparators...)
		}
		in := before + seps[int(sepA)%len(seps)] + cred + seps[int(sepB)%len(seps)] + after
		out := shown(nil, in)
		if strings.Contains(out, c.Secret) || strings.Contains(out, private) {
			t.Fatalf("%s or the private text survived:\n in %q\nout %q", c.Kind, in, out)
		}
		if again := shown(nil, out); again != out {
			t.Fatalf("not idempotent:\n in %q\nout %q\nthen %q", in, out, again)
		}
		rules := redact.Builtin()
		if rules.Find(stripped(before)) != nil || rules.Find(stripped(after)) != nil {
			return
		}
		for _, fd := range rules.Find(stripped(in)) {
			if fd.End-fd.Start > len(c.Text)+spanSlack {
				t.Fatalf("span %+v is longer than the %d-byte credential and %d bytes:\n in %q\nout %q",
					fd, len(c.Text), spanSlack, in, out)
			}
		}
	})
}

// reviewedRedactions lists what redaction replaces in the bottles of the
// real transcripts, each read and judged, as "file: placeholder" with the
// count. Both corpora were screened for credentials before they were
// shared, and the built-in rules find none in their strings (see
// redact.TestRealTranscripts): the list is empty, and anything redaction
// finds in a bottle is a false positive to fix.
var reviewedRedactions = map[string]int{}

// TestRealBottlesRedactions renders the bottle of every real transcript
// with the built-in rules and lists every placeholder in it (-v shows
// each with its context): each must be reviewed. A transcript that
// renders no bottle is skipped.
func TestRealBottlesRedactions(t *testing.T) {
	got := map[string]int{}
	bottles, size := 0, 0
	for _, f := range fixtures.All(t) {
		b := renderSpine(t, spineOf(t, f))
		if b == nil {
			continue
		}
		bottles++
		size += len(b.Bytes)
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		s := string(b.Bytes)
		for i := 0; ; {
			k := strings.Index(s[i:], "[redacted: ")
			if k < 0 {
				break
			}
			k += i
			end := k + strings.IndexByte(s[k:], ']') + 1
			got[name+": "+s[k:end]]++
			t.Logf("%s: …%q%s%q…", name, s[max(0, k-60):k], s[k:end], s[end:min(len(s), end+30)])
			i = end
		}
	}
	for k, n := range got {
		if reviewedRedactions[k] != n {
			t.Errorf("redaction not reviewed (seen %d times, reviewed %d): %s", n, reviewedRedactions[k], k)
		}
	}
	for k := range reviewedRedactions {
		if got[k] == 0 {
			t.Errorf("reviewed redaction gone: %s", k)
		}
	}
	t.Logf("%d bottles, %d bytes, %d redactions", bottles, size, len(got))
	if bottles < 40 {
		t.Errorf("only %d bottles rendered from the real transcripts", bottles)
	}
}

// TestTextJoins: what clean and the tag stripper remove can join a
// credential to the words around it, or join its parts; shown finds it
// either way. (An npm token touching a letter or digit is not taken for
// one; a GitHub token would be.)
func TestTextJoins(t *testing.T) {
	npm := fakecred.New(11).NPM().Text
	for _, in := range []string{
		"0\x00" + npm + "\x000",
		"x<system-reminder>note</system-reminder>" + npm + "<system-reminder>note</system-reminder>y",
		"token " + npm[:10] + "<private>hidden</private>" + npm[10:] + " end",
		"x<persisted-output>o</persisted-output>" + npm + "\x00y",
	} {
		if out := shown(nil, in); strings.Contains(out, npm) || strings.Contains(out, npm[4:20]) || !strings.Contains(out, "[redacted: npm token]") {
			t.Errorf("shown(%q) = %q", in, out)
		}
	}
}

// TestTextKeepsPrivate: redaction before the stripper (or before clean)
// must not take away a tag of a <private> element, or what it hides is shown. Here a private
// key's END line is inside the element and its BEGIN line before it.
func TestTextKeepsPrivate(t *testing.T) {
	key := fakecred.New(9).PrivateKey("RSA ", 4).Text
	end := strings.Index(key, "\n-----END")
	for _, in := range []string{
		key[:end-4] + "<private>" + key[end-4:] + "\nHIDDEN words</private> after",
		"<system-reminder>note</system-reminder>" + key[:end-4] + "<private>" + key[end-4:] + "\nHIDDEN</private>",
		"\x00" + key[:end-4] + "<private>" + key[end-4:] + "\nHIDDEN</private>", // a NUL: the pass before clean
	} {
		if out := shown(nil, in); strings.Contains(out, "HIDDEN") || strings.Contains(out, "private>") {
			t.Errorf("shown(%q) = %q", in, out)
		}
	}
}

// TestReseal redacts bottles from before redaction in place. A bottle
// whose credentials are tokens becomes, byte for byte, the bottle the
// rules render from the same sources; one with a private key block keeps
// its lines (the block's are left empty), so that its outline and legs
// still point right; a bottle made by the rules already is left as it is.
func TestReseal(t *testing.T) {
	gen := fakecred.New(9)
	for _, c := range []fakecred.Credential{gen.GitHub('p'), gen.JWT(), gen.URLPassword(), gen.Generic(), gen.PrivateKey("RSA ", 4)} {
		t.Run(c.Kind, func(t *testing.T) {
			in := fullWith(c.Text, "")
			b, err := Render(in)
			if err != nil {
				t.Fatal(err)
			}
			old, err := fakecred.Unredacted(b.Bytes, c)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(old), c.Secret) {
				t.Fatal("the old bottle does not hold the credential")
			}
			got, st, err := Reseal(old, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(got), c.Secret) {
				t.Fatalf("the credential survived:\n%s", got)
			}
			oldSt, err := StateOf(old)
			if err != nil {
				t.Fatal(err)
			}
			if st.Redact != redact.Builtin().ID() || st.Bytes != len(got) || st.Lines != oldSt.Lines ||
				strings.Count(string(got), "\n") != strings.Count(string(old), "\n") {
				t.Errorf("state %+v for %d bytes, %d lines (the old bottle's: %d lines)", st, len(got), strings.Count(string(got), "\n"),
					strings.Count(string(old), "\n"))
			}
			if !strings.Contains(c.Text, "\n") && string(got) != string(b.Bytes) {
				t.Errorf("resealed bottle differs from the one rendered:\n%s", firstDiff(b.Bytes, got))
			}
			if _, err := Parse(got, time.UTC); err != nil {
				t.Errorf("the resealed bottle does not parse: %v", err)
			}
			again, _, err := Reseal(got, nil)
			if err != nil || string(again) != string(got) {
				t.Errorf("resealed again: changed %v, err %v", string(again) != string(got), err)
			}
		})
	}
}

// TestStateUnknownRedacted: the names of what a transcript holds that
// bottled does not know reach the state line (and from it status) only
// redacted, in a bottle rendered and in one resealed.
func TestStateUnknownRedacted(t *testing.T) {
	tok := fakecred.New(21).GitHub('p')
	// An older bottled kept any tag name and cut long names.
	cut := "promptSource:github_pat_" + strings.Repeat("A", 24) + "…"
	raw := sources.Unknown{UserShapes: map[string]int{"promptSource:" + tok.Text: 1, "block:video": 2, "tag:My_s3cret": 1, cut: 1},
		RecordTypes: map[string]int{tok.Text: 1}}
	in := fullWith("plain", "")
	in.Spine.Unknown = raw
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"promptSource:" + tok.Want: 1, "block:video": 2, "tag:(other)": 1, "(others)": 1}
	if u := b.State.Unknown; u == nil || !maps.Equal(u.UserShapes, want) || !maps.Equal(u.RecordTypes, map[string]int{tok.Want: 1}) {
		t.Errorf("state's unknown %+v, want user shapes %v", b.State.Unknown, want)
	}
	checkNoSecret(t, "rendered", b.Bytes, tok.Secret)

	// The bottle as a bottled that kept the names raw wrote it.
	st, err := StateOf(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	st.Redact, st.Unknown = "", &raw
	lines := bytes.SplitN(b.Bytes, []byte("\n"), stateLineN+1)
	old, err := st.withStateLine(append(bytes.Join(lines[:stateLineN-1], []byte("\n")), '\n'), lines[stateLineN])
	if err != nil {
		t.Fatal(err)
	}
	checkHasSecret(t, old, tok.Secret)
	got, _, err := Reseal(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecret(t, "resealed", got, tok.Secret)
	if !bytes.Equal(got, b.Bytes) {
		t.Errorf("resealed bottle differs from the one rendered:\n%s", firstDiff(b.Bytes, got))
	}
}

func checkNoSecret(t *testing.T, what string, bottle []byte, secret string) {
	t.Helper()
	const telling = 16
	for i := 0; i+telling <= len(secret); i++ {
		if bytes.Contains(bottle, []byte(secret[i:i+telling])) {
			t.Fatalf("%s: %q is in the bottle:\n%s", what, secret[i:i+telling], bottle)
		}
	}
}

func checkHasSecret(t *testing.T, bottle []byte, secret string) {
	t.Helper()
	if !bytes.Contains(bottle, []byte(secret)) {
		t.Fatal("the old bottle does not hold the credential: the test tests nothing")
	}
}

// TestCompactionTriggerShown: the compaction's trigger is a string from the
// transcript like any other: redacted, and on the leg heading's one line.
func TestCompactionTriggerShown(t *testing.T) {
	tok := fakecred.New(22).GitHub('p')
	in := fullWith("plain", "")
	sp := in.Spine
	sp.Entries = append(sp.Entries[:2:2], append([]sources.Entry{{Kind: sources.EntryCompaction, Time: redactAt(3),
		Trigger: "auto\n---\n**User** (10:03)\n" + tok.Text, Session: sp.SessionID}}, sp.Entries[2:]...)...)
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecret(t, "rendered", b.Bytes, tok.Secret)
	if want := "## Leg 2 — compacted (auto --- **User** (10:03) " + tok.Want + ")"; !bytes.Contains(b.Bytes, []byte(want)) {
		t.Errorf("no %q in the bottle:\n%s", want, b.Bytes)
	}
}
