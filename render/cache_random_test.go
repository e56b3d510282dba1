package render

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// TestCacheRandomSessions grows random sessions (see randomSession) step
// by step, changing them the ways Claude Code and claude-mem do between
// two renders, and renders each step with the session's cache and
// without: the bottles must be byte for byte the same, and neither may
// show a secret a <private> tag holds or a credential the rules redact.
func TestCacheRandomSessions(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for seed := range uint64(seeds) {
		// A few sessions grow long enough for the outline to leave
		// turns out (outlineMax).
		steps := 80
		if seed%20 == 0 {
			steps = 500
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			checkRandomSession(t, seed, steps)
		})
	}
}

// FuzzCache is TestCacheRandomSessions for any seed and length.
func FuzzCache(f *testing.F) {
	for _, s := range []uint64{1, 7, 42, 1 << 40} {
		f.Add(s, uint8(40))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8) {
		checkRandomSession(t, seed, int(steps))
	})
}

const (
	randomSecret = "PRIV-S3CR3T-Q7"
	// randomWord is redacted by some of the rules the session is
	// rendered with.
	randomWord = "widget"
)

// checkRandomSession renders steps steps of the random session of seed.
func checkRandomSession(t *testing.T, seed uint64, steps int) {
	s := newRandomSession(t, seed)
	cache := &Cache{}
	for step := range steps {
		ops := s.change()
		in := s.input()
		b := checkCached(t, in, cache, fmt.Sprintf("seed %d, step %d after %v", seed, step, ops))
		if b == nil {
			continue
		}
		bottle := string(b.Bytes)
		if strings.Contains(bottle, randomSecret) {
			t.Fatalf("seed %d, step %d: the bottle shows what a <private> tag holds:\n%s", seed, step, bottle)
		}
		if strings.Contains(bottle, s.cred.Secret) {
			t.Fatalf("seed %d, step %d: the bottle shows a credential:\n%s", seed, step, bottle)
		}
	}
	if testing.Verbose() {
		t.Logf("seed %d: %d entries, %d turns, %d observations, cache %d bytes", seed, len(s.entries), len(cache.turns), len(s.obs), cache.Size())
	}
}

// randomSession is a session's spine and claude-mem records as a render
// sees them, changed at random between renders. Its entries and
// observations are changed in place, in the arrays the last render read,
// so that a cache that kept a slice of them instead of a copy would see
// the change and wrongly copy a turn it must render again.
type randomSession struct {
	rng        *rand.Rand
	entries    []sources.Entry
	obs        []sources.Observation
	prompts    []sources.Prompt
	toolUses   map[string]int64
	at         time.Time
	session    string
	cwd        string
	rules      []*redact.Rules
	rule       int
	zones      []*time.Location
	zone       int
	cred       fakecred.Credential
	nextID     int64
	nextPrompt int64
}

func newRandomSession(t *testing.T, seed uint64) *randomSession {
	t.Helper()
	word, err := redact.Parse([]byte("common word: " + randomWord + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules := []*redact.Rules{nil, redact.Builtin()}
	for range 2 { // two values of the same rules: the same ID
		r, err := redact.Builtin().With(word)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	return &randomSession{
		rng:      rand.New(rand.NewPCG(seed, seed^0xcac4e)),
		at:       time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC),
		session:  "s",
		cwd:      "/home/u/proj",
		rules:    rules,
		zones:    []*time.Location{time.UTC, time.FixedZone("E", 5*3600+1800), time.FixedZone("W", -8*3600)},
		toolUses: map[string]int64{},
		cred:     fakecred.New(seed).GitHub('p'),
	}
}

// input is what the session renders from now; its slices are the
// session's own.
func (s *randomSession) input() Input {
	sp := &sources.Spine{SessionID: "s", CWD: s.cwd, Entries: s.entries}
	if len(s.entries) > 0 {
		sp.Started = s.entries[0].Time
	}
	in := Input{SessionID: "s", Spine: sp, Now: goldenNow, Rules: s.rules[s.rule], Location: s.zones[s.zone]}
	if len(s.obs) > 0 || len(s.prompts) > 0 {
		in.ClaudeMem = &sources.ClaudeMem{ContentSessionID: "s", Observations: s.obs, Prompts: s.prompts, ToolUses: s.toolUses}
	}
	return in
}

// randomChanges are the ways change changes a session, each with its
// share of a hundred.
var randomChanges = []struct {
	share int
	name  string
	do    func(s *randomSession)
}{
	{45, "append", func(s *randomSession) {
		for k := 1 + s.rng.IntN(4); k > 0; k-- {
			s.appendEntry()
		}
	}},
	{5, "rewind", (*randomSession).rewind},
	{10, "edit text", (*randomSession).editText},
	{7, "late result", (*randomSession).lateResult},
	{4, "delivered", (*randomSession).toggleDelivered},
	{9, "observation", (*randomSession).addObservation},
	{5, "observation edited", (*randomSession).editObservation},
	{3, "prompt", (*randomSession).addPrompt},
	{4, "rules", func(s *randomSession) { s.rule = s.rng.IntN(len(s.rules)) }},
	{3, "zone", func(s *randomSession) { s.zone = s.rng.IntN(len(s.zones)) }},
	{2, "cwd", func(s *randomSession) { s.cwd = []string{"/home/u/proj", "/home/u/other", ""}[s.rng.IntN(3)] }},
	{3, "retime", (*randomSession).retime},
}

// change changes the session: mostly an append of a few entries, often
// more than one change, and returns what it did.
func (s *randomSession) change() []string {
	var ops []string
	for n := 1 + s.rng.IntN(3); n > 0; n-- {
		op := s.rng.IntN(100)
		for _, c := range randomChanges {
			if op < c.share {
				ops = append(ops, c.name)
				c.do(s)
				break
			}
			op -= c.share
		}
	}
	return ops
}

// words are what messages are made of: words the rules redact, tags,
// paths under the project, lines that look like the bottle's structure.
var randomWords = []string{"fix", "the", "build", randomWord, "test", "/home/u/proj/main.go", "---", "**User**",
	"<system-reminder>x</system-reminder>", "\n", "\n\n", "ok", "later", "##", "Leg", "é", "🙂"}

func (s *randomSession) text() string {
	var b strings.Builder
	for n := s.rng.IntN(8); n > 0; n-- {
		switch r := s.rng.IntN(40); {
		case r == 0:
			b.WriteString("<private>" + randomSecret + "</private>")
		case r == 1:
			b.WriteString(" <private>" + randomSecret) // closed later, or never
		case r == 2:
			b.WriteString(" " + s.cred.Text + " ")
		default:
			b.WriteString(randomWords[s.rng.IntN(len(randomWords))] + " ")
		}
	}
	return b.String()
}

// tick moves the session's clock on by up to a few hours, so that turns
// fall on several dates.
func (s *randomSession) tick() time.Time {
	s.at = s.at.Add(time.Duration(s.rng.IntN(5*60)) * time.Minute)
	return s.at
}

func (s *randomSession) appendEntry() {
	e := sources.Entry{Time: s.tick(), Session: s.session}
	switch r := s.rng.IntN(20); {
	case r < 6:
		e.Kind, e.Text = sources.EntryUser, s.text()
		e.Steering = s.rng.IntN(5) == 0
		if s.rng.IntN(8) == 0 {
			e.Images = 1 + s.rng.IntN(2)
		}
	case r < 15:
		e.Kind, e.Text = sources.EntryAssistant, s.text()
		if s.rng.IntN(3) == 0 {
			e.Text = ""
		}
		for k := s.rng.IntN(4); k > 0; k-- {
			s.addDeed(&e)
		}
	case r < 17:
		e.Kind, e.Text, e.Steering, e.Undelivered = sources.EntryUser, s.text(), true, true
	case r < 19:
		e.Kind, e.Text, e.Aside = sources.EntryUser, s.text(), true
		s.entries = append(s.entries, e)
		if s.rng.IntN(3) > 0 {
			s.entries = append(s.entries, sources.Entry{Kind: sources.EntryAssistant, Aside: true, Time: s.tick(), Text: s.text(), Session: s.session})
		}
		return
	default:
		e.Kind, e.Trigger = sources.EntryCompaction, []string{"", "auto", "manual"}[s.rng.IntN(3)]
		if s.rng.IntN(2) == 0 {
			s.session = fmt.Sprintf("s%d", len(s.entries))
			e.Session = s.session
		}
	}
	s.entries = append(s.entries, e)
}

var randomDeeds = []sources.Deed{
	{Kind: sources.DeedRead, Tool: "Read", Target: "/home/u/proj/main.go"},
	{Kind: sources.DeedRead, Tool: "Read", Target: "/home/u/proj/x.go"},
	{Kind: sources.DeedSearch, Tool: "Grep", Target: "func " + randomWord},
	{Kind: sources.DeedEdit, Tool: "Edit", Target: "/home/u/proj/main.go", Added: 3, Removed: 1, Lines: true},
	{Kind: sources.DeedWrite, Tool: "Write", Target: "/home/u/proj/new.go", Added: 9, Lines: true, Created: true},
	{Kind: sources.DeedCommand, Tool: "Bash", Target: "go test ./..."},
	{Kind: sources.DeedCommand, Tool: "Bash", Target: "echo <private>" + randomSecret + "</private>"},
	{Kind: sources.DeedTask, Tool: "Task", Target: "look at the " + randomWord, Agent: "Explore"},
	{Kind: sources.DeedOther, Tool: "mcp__x", Target: "the " + randomWord},
}

// addDeed adds a tool call to an assistant entry, as a block of its
// message read in a later append would.
func (s *randomSession) addDeed(e *sources.Entry) {
	d := randomDeeds[s.rng.IntN(len(randomDeeds))]
	d.Failed = s.rng.IntN(6) == 0
	id := fmt.Sprintf("toolu_%d_%d", len(s.entries), len(e.ToolUseIDs))
	e.Deeds = append(e.Deeds, d)
	e.ToolUseIDs = append(e.ToolUseIDs, id)
}

// rewind cuts the session at an earlier entry, mostly a recent one:
// what follows is written over the same array by the appends after.
func (s *randomSession) rewind() {
	if len(s.entries) > 1 {
		back := 1 + s.rng.IntN(min(6, len(s.entries)-1))
		if s.rng.IntN(5) == 0 {
			back = 1 + s.rng.IntN(len(s.entries)-1)
		}
		s.entries = s.entries[:len(s.entries)-back]
		s.at = s.entries[len(s.entries)-1].Time
	}
}

// editText changes an earlier entry in place: a block of its message
// read later, a <private> tag closed, a message rewritten.
func (s *randomSession) editText() {
	if len(s.entries) == 0 {
		return
	}
	e := &s.entries[s.rng.IntN(len(s.entries))]
	switch s.rng.IntN(4) {
	case 0:
		e.Text += "\n\n" + s.text()
	case 1: // the tag an earlier block opened closed, or one opened
		if strings.Count(e.Text, "<private>") > strings.Count(e.Text, "</private>") {
			e.Text += " still " + randomSecret + "</private> and after"
		} else {
			e.Text += " <private>" + randomSecret
		}
	case 2:
		e.Text = s.text()
	default:
		if e.Kind == sources.EntryAssistant {
			s.addDeed(e)
		} else {
			e.Images++
		}
	}
}

// lateResult marks a tool call of an earlier entry failed or not, in the
// array the spine's entries share, as a result read later does.
func (s *randomSession) lateResult() {
	for range 5 {
		if len(s.entries) == 0 {
			return
		}
		e := &s.entries[s.rng.IntN(len(s.entries))]
		if len(e.Deeds) > 0 {
			d := &e.Deeds[s.rng.IntN(len(e.Deeds))]
			d.Failed = !d.Failed
			return
		}
	}
}

// toggleDelivered turns a queued message into a delivered one or back.
func (s *randomSession) toggleDelivered() {
	for i := range s.entries {
		if e := &s.entries[i]; e.Steering && s.rng.IntN(3) == 0 {
			e.Undelivered = !e.Undelivered
			return
		}
	}
}

func (s *randomSession) addObservation() {
	s.nextID++
	created := s.at.Add(-time.Duration(s.rng.IntN(24*60)) * time.Minute)
	o := sources.Observation{ID: s.nextID, Type: "change", Title: s.text(), Narrative: s.text(), Created: created}
	switch s.rng.IntN(4) {
	case 0:
		o.Title, o.Narrative, o.Text = "", "", s.text()+"\n"+s.text()
	case 1:
		o.PromptNumber = 1 + s.rng.Int64N(s.nextPrompt+1)
	case 2: // linked to a tool call of the transcript
		for range 5 {
			if len(s.entries) == 0 {
				break
			}
			if e := s.entries[s.rng.IntN(len(s.entries))]; len(e.ToolUseIDs) > 0 {
				s.toolUses[e.ToolUseIDs[s.rng.IntN(len(e.ToolUseIDs))]] = o.ID
				break
			}
		}
	}
	s.obs = append(s.obs, o)
}

func (s *randomSession) editObservation() {
	if len(s.obs) == 0 {
		return
	}
	i := s.rng.IntN(len(s.obs))
	switch s.rng.IntN(3) {
	case 0:
		s.obs[i].Title = s.text()
	case 1:
		s.obs[i].Narrative += s.text()
	default:
		s.obs = append(s.obs[:i], s.obs[i+1:]...)
	}
}

// addPrompt records a user message as claude-mem stores it.
func (s *randomSession) addPrompt() {
	for range 5 {
		if len(s.entries) == 0 {
			return
		}
		if e := s.entries[s.rng.IntN(len(s.entries))]; e.Kind == sources.EntryUser && !e.Aside {
			s.nextPrompt++
			s.prompts = append(s.prompts, sources.Prompt{ID: s.nextPrompt, Number: s.nextPrompt, Text: e.Text, Created: e.Time})
			return
		}
	}
}

// retime moves an earlier entry's time: a rewritten transcript.
func (s *randomSession) retime() {
	if len(s.entries) > 0 {
		e := &s.entries[s.rng.IntN(len(s.entries))]
		e.Time = e.Time.Add(time.Duration(s.rng.IntN(48)-24) * time.Hour)
	}
}

// TestCacheRandomTranscripts writes random transcripts (see
// randomTranscript) in chunks cut anywhere, reads each chunk as the
// daemon does (Transcript.Update) and renders the spine after each with
// the session's cache and without: the bottles must be the same. Where
// TestCacheRandomSessions changes a spine directly, this one has the
// spine built by package sources from what Claude Code writes: messages
// of several blocks, tool results after the call, rewinds to an earlier
// message, messages queued while Claude worked and never delivered.
func TestCacheRandomTranscripts(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 5
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 0x7ac))
			data := randomTranscript(rng, 60)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			tr := sources.NewTranscript("s", path)
			cache := &Cache{}
			for off := 0; off < len(data); {
				n := min(len(data)-off, 1+rng.IntN(600))
				growfile.Append(t, path, data[off:off+n])
				off += n
				if _, err := tr.Update(); err != nil {
					t.Fatal(err)
				}
				in := Input{SessionID: "s", Spine: sources.BuildSpine("s", []*sources.Transcript{tr}), Now: goldenNow}
				b := checkCached(t, in, cache, fmt.Sprintf("seed %d, after byte %d", seed, off))
				if b != nil && strings.Contains(string(b.Bytes), randomSecret) {
					t.Fatalf("seed %d, after byte %d: the bottle shows what a <private> tag holds:\n%s", seed, off, b.Bytes)
				}
			}
		})
	}
}

// randomTranscript is a transcript of about turns prompts, as Claude
// Code writes one.
func randomTranscript(rng *rand.Rand, turns int) []byte {
	var out []byte
	at := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	n := 0
	rec := func(parent string) synth.Rec {
		n++
		at = at.Add(time.Duration(rng.IntN(90)) * time.Minute)
		return synth.Rec{Session: "s", UUID: fmt.Sprintf("u%04d", n), Parent: parent, At: at, CWD: "/home/u/proj"}
	}
	last := ""
	var prompts []string // the parent of each prompt, for rewinds
	var pending []string // tool calls whose results are still to come
	word := func() string { return randomWords[rng.IntN(len(randomWords))] }
	for k := range turns {
		parent := last
		if len(prompts) > 1 && rng.IntN(8) == 0 { // a rewind: a new branch from before an earlier prompt
			parent = prompts[rng.IntN(len(prompts))]
		}
		prompts = append(prompts, parent)
		r := rec(parent)
		text := fmt.Sprintf("prompt %d %s %s", k, word(), word())
		if rng.IntN(6) == 0 {
			text += " <private>" + randomSecret + "</private> " + word()
		}
		if rng.IntN(2) == 0 {
			out = append(out, synth.Rec{Session: "s", At: r.At}.Queue("enqueue", text)...)
			out = append(out, synth.Rec{Session: "s", At: r.At}.Queue("dequeue", "")...)
		}
		out = append(out, r.User(text)...)
		last = r.UUID
		msg := fmt.Sprintf("msg_%d", k)
		open := false
		for b := 1 + rng.IntN(4); b > 0; b-- {
			switch rng.IntN(4) {
			case 0, 1:
				text := word() + " " + word()
				switch {
				case open:
					text += " " + randomSecret + "</private> " + word()
					open = false
				case rng.IntN(5) == 0:
					text += " <private>" + randomSecret
					open = true
				}
				r := rec(last)
				out = append(out, r.Assistant(msg, text)...)
				last = r.UUID
			default:
				tool := fmt.Sprintf("toolu_%d_%d", k, b)
				r := rec(last)
				out = append(out, r.ToolUse(msg, tool)...)
				last = r.UUID
				pending = append(pending, tool)
			}
			// Results come after the call, some after later blocks; some
			// say the call failed.
			for len(pending) > 0 && rng.IntN(3) > 0 {
				res := rec(last)
				line := res.ToolResult(pending[0], word())
				if rng.IntN(3) == 0 {
					line = strings.Replace(line, `"tool_use_id":`, `"is_error":true,"tool_use_id":`, 1)
				}
				out = append(out, line...)
				last, pending = res.UUID, pending[1:]
			}
			if rng.IntN(4) == 0 { // typed while Claude worked: queued, then delivered, taken back or left
				q := synth.Rec{Session: "s", At: at}
				said := "meanwhile " + word()
				out = append(out, q.Queue("enqueue", said)...)
				switch rng.IntN(3) {
				case 0:
					out = append(out, q.Queue("remove", "")...)
				case 1:
					out = append(out, q.Queue("dequeue", "")...)
					r := rec(last)
					out = append(out, r.User(said)...)
					last = r.UUID
				}
			}
		}
		for _, tool := range pending {
			res := rec(last)
			out = append(out, res.ToolResult(tool, word())...)
			last = res.UUID
		}
		pending = pending[:0]
		if open { // a close in a later message: that message's own text
			r := rec(last)
			out = append(out, r.Assistant(msg+"b", word()+"</private> done")...)
			last = r.UUID
		}
	}
	return out
}
