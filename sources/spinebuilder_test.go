package sources

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
)

// maxSplits is how many split points of each real transcript
// TestSpineBuilderEqualsBuildSpine tries: every line boundary of the
// shorter ones, as many spread over the longer ones.
const maxSplits = 100

// TestSpineBuilderEqualsBuildSpine reads every real transcript in steps
// and checks, at each step, that the spine a SpineBuilder builds equals
// BuildSpine's of the same parse state, field for field: one builder kept
// from the start (extended step after step), and one fresh at each split
// point (a full build there, then extended by the next few lines).
func TestSpineBuilderEqualsBuildSpine(t *testing.T) {
	builderEqualsBuildSpine(t, fixtures.All(t))
}

// TestSpineBuilderEqualsBuildSpineOnCases is
// TestSpineBuilderEqualsBuildSpine over the synthetic render cases
// (testdata/render): queue replays, undelivered messages, commands,
// rewinds and the like that the real transcripts hold few of.
func TestSpineBuilderEqualsBuildSpineOnCases(t *testing.T) {
	cases, _ := filepath.Glob(filepath.Join("..", "testdata", "render", "*", "*.jsonl"))
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/render")
	}
	builderEqualsBuildSpine(t, cases)
}

func builderEqualsBuildSpine(t *testing.T, files []string) {
	reasons := map[string]int{}
	extended := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(filepath.Dir(filepath.Dir(f)), f)
		bounds := lineBounds(data)[1:]
		splits := bounds
		if len(bounds) > maxSplits {
			splits = nil
			for k := range maxSplits {
				splits = append(splits, bounds[k*len(bounds)/maxSplits])
			}
		}
		tr := NewTranscript("s", "")
		var kept SpineBuilder
		feed := func(to int) {
			if int64(to) <= tr.offset {
				return
			}
			if err := tr.readFrom(bytes.NewReader(data[tr.offset:to]), int64(to)-tr.offset); err != nil {
				t.Fatal(err)
			}
		}
		check := func(b *SpineBuilder, what string) {
			t.Helper()
			got := b.Build("s", []*Transcript{tr})
			if b.fallback == "" {
				extended++
			} else {
				reasons[b.fallback]++
			}
			if want := BuildSpine("s", []*Transcript{tr}); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s at byte %d (%s): the builder's spine differs from BuildSpine's:\n%s", name, tr.offset, what, spineDiff(got, want))
			}
			checkHeld(t, b, got, fmt.Sprintf("%s at byte %d (%s)", name, tr.offset, what))
		}
		for k, at := range splits {
			feed(at)
			check(&kept, "kept builder")
			var fresh SpineBuilder
			fresh.Build("s", []*Transcript{tr})
			i := slices.Index(bounds, at)
			feed(bounds[min(i+1+k%4, len(bounds)-1)])
			check(&fresh, "fresh builder, a few lines later")
			check(&kept, "kept builder, a few lines later")
		}
	}
	t.Logf("extended %d times; built in full: %v", extended, reasons)
	if extended == 0 {
		t.Fatal("the builder never extended a spine: the test compares nothing but full builds")
	}
}

// checkHeld fails unless what b says sp's entries hold, kept as it
// extends the spine, is what they hold.
func checkHeld(t *testing.T, b *SpineBuilder, sp *Spine, what string) {
	t.Helper()
	if b.st != nil && b.held != entriesHeld(sp.Entries) {
		t.Fatalf("%s: the builder says the entries hold %d bytes, they hold %d", what, b.held, entriesHeld(sp.Entries))
	}
}

// spineDiff describes where two spines first differ.
func spineDiff(got, want *Spine) string {
	if len(got.Entries) != len(want.Entries) {
		return fmt.Sprintf("%d entries, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range got.Entries {
		if !reflect.DeepEqual(got.Entries[i], want.Entries[i]) {
			return fmt.Sprintf("entry %d:\n%+v\nwant\n%+v", i, got.Entries[i], want.Entries[i])
		}
	}
	return fmt.Sprintf("%+v\nwant\n%+v", *got, *want)
}

// TestSpineBuilderFallsBack appends, after a spine was built, records that
// change what it holds, each in a way the builder must not extend: it
// builds in full instead (for the reason given), and the spine equals
// BuildSpine's. Removing any one of the builder's checks makes a case
// fail.
func TestSpineBuilderFallsBack(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	rec := func(uuid, parent string, sec int) synth.Rec {
		return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: at.Add(time.Duration(sec) * time.Second)}
	}
	queue := func(op, content string, sec int) string {
		return synth.Rec{Session: "s", At: at.Add(time.Duration(sec) * time.Second)}.Queue(op, content)
	}
	failed := func(uuid, parent, toolID string, sec int) string {
		return rec(uuid, parent, sec).ToolResult(toolID, "boom") // made an error below
	}
	// start is a finished turn: prompt, answer.
	start := rec("u1", "", 0).User("first") + rec("a1", "u1", 1).Assistant("m1", "one") +
		rec("u2", "a1", 2).User("second") + rec("a2", "u2", 3).Assistant("m2", "two")
	cases := []struct {
		name, before, after, reason string
	}{
		{"rewind to an earlier prompt", start,
			rec("u3", "a1", 4).User("second, again") + rec("a3", "u3", 5).Assistant("m3", "two again"), "rewind"},
		{"a record named as the parent of an earlier one",
			start + rec("a4", "later", 4).Assistant("m4", "orphan"),
			rec("later", "a2", 5).User("third"), "uuid seen before"},
		{"a parent written after its child", start,
			rec("a5", "u5", 5).Assistant("m5", "answer first") + rec("u5", "a2", 4).User("asked after"), "parent not yet seen"},
		{"a result to a call two messages issued",
			start + strings.Replace(rec("t5", "a2", 4).ToolUse("m15", "toolu_5"), `"name":"Bash",`, "", 1) + rec("t6", "t5", 5).ToolUse("m16", "toolu_5") +
				rec("t7", "t6", 6).Assistant("m17", "waiting"),
			strings.Replace(failed("r5", "t7", "toolu_5", 7), `"tool_use_id":"toolu_5"`, `"tool_use_id":"toolu_5","is_error":true`, 1),
			"result of a call issued twice"},
		{"a late result that says a call before the last message failed",
			start + rec("t1", "a2", 4).ToolUse("m6", "toolu_1") + rec("t0", "t1", 5).Assistant("m60", "meanwhile"),
			strings.Replace(failed("r1", "t0", "toolu_1", 6), `"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_1","is_error":true`, 1),
			"result changes a deed"},
		{"a message split across the append, with another message between",
			start + rec("t2", "a2", 4).Assistant("m7", "let me look") + rec("t8", "t2", 5).Assistant("m70", "aside"),
			rec("r2", "t8", 5).ToolResult("toolu_2", "ok") + rec("t3", "r2", 6).Assistant("m7", "found it"),
			"message split across the append"},
		{"a compaction", start,
			`{"type":"system","subtype":"compact_boundary","uuid":"c1","parentUuid":null,"logicalParentUuid":"a2","timestamp":"2026-03-02T14:00:05.000Z","compactMetadata":{"trigger":"auto"}}` + "\n" +
				rec("u6", "c1", 6).User("after the compaction") + rec("a6", "u6", 7).Assistant("m8", "fine"),
			"compaction"},
		{"a queued message delivered", start,
			queue("enqueue", "steer left", 4) + queue("remove", "", 5) + rec("a7", "a2", 6).Assistant("m10", "turning"),
			"queue"},
		{"a prompt that takes an undelivered steering message",
			start + queue("enqueue", "do this next", 4),
			rec("u7", "a2", 5).User("do this next") + rec("a8", "u7", 6).Assistant("m11", "done"),
			"steering tail"},
		{"a prompt that takes a steering message left undelivered before the last prompt",
			rec("u1", "", 0).User("first") + queue("enqueue", "do this later", 1) + rec("u2", "u1", 2).User("second") +
				rec("a2", "u2", 3).Assistant("m2", "two"),
			rec("u7", "a2", 5).User("do this later") + rec("a8", "u7", 6).Assistant("m11", "done"),
			"steering tail"},
		{"a prompt after a delivered steering message",
			start + rec("t4", "a2", 4).Assistant("m12", "working") + queue("enqueue", "also this", 5) + queue("remove", "", 6),
			rec("u8", "t4", 7).User("also this") + rec("a9", "u8", 8).Assistant("m13", "ok"),
			"steering tail"},
		{"a replayed copy of an earlier turn",
			start + rec("u9", "a2", 4).User("first"),
			rec("a10", "u9", 5).Assistant("m1", "one"), "replayed prompt"},
		{"an answer to a command run before", start + rec("k1", "a2", 4).User("<command-name>/init</command-name>\n<command-message>init</command-message>\n<command-args></command-args>"),
			rec("a11", "k1", 5).Assistant("m14", "initialising"), "command undecided"},
		{"a command", start,
			rec("k2", "a2", 4).User("<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>the diff</command-args>"),
			"command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b SpineBuilder
			buildTwice(t, &b, c.before, c.after)
			if b.fallback != c.reason {
				t.Errorf("built in full for %q, want %q", b.fallback, c.reason)
			}
		})
	}
}

// TestSpineBuilderExtends checks the appends the builder extends the spine
// by (the common case, which must cost what was appended), each equal to
// BuildSpine's: a prompt and its answer, a tool call and its result, a
// result that fails a call of the same append, a branch already abandoned
// growing, a sidechain record, blocks or a failed result added to the
// last message.
func TestSpineBuilderExtends(t *testing.T) {
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	rec := func(uuid, parent string, sec int) synth.Rec {
		return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: at.Add(time.Duration(sec) * time.Second)}
	}
	start := rec("u1", "", 0).User("first") + rec("a1", "u1", 1).Assistant("m1", "one") +
		rec("u2", "a1", 2).User("second") + rec("a2", "u2", 3).Assistant("m2", "two")
	rewound := start + rec("u3", "a1", 4).User("second, again") + rec("a3", "u3", 5).Assistant("m3", "two again")
	cases := []struct{ name, before, after string }{
		{"a prompt and its answer", start, rec("u4", "a2", 4).User("third") + rec("a4", "u4", 5).Assistant("m4", "three")},
		{"a root prompt", start, rec("u4", "", 4).User("third") + rec("a4", "u4", 5).Assistant("m4", "three")},
		{"a tool call and its result", start, rec("t1", "a2", 4).ToolUse("m5", "toolu_1") +
			strings.Replace(rec("r1", "t1", 5).ToolResult("toolu_1", "boom"), `"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_1","is_error":true`, 1) +
			rec("a5", "r1", 6).Assistant("m6", "it failed")},
		{"a late result that says the last message's call failed", start + rec("t1", "a2", 4).ToolUse("m5", "toolu_1"),
			strings.Replace(rec("r1", "t1", 5).ToolResult("toolu_1", "boom"), `"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_1","is_error":true`, 1)},
		{"the last message split across the append", start + rec("t2", "a2", 4).Assistant("m7", "let me look"),
			rec("r2", "t2", 5).ToolResult("toolu_2", "ok") + rec("t3", "r2", 6).Assistant("m7", "found it") + rec("t4", "t3", 7).ToolUse("m7", "toolu_3")},
		{"a prompt after a Write to a new file", start + strings.Replace(rec("w1", "a2", 4).ToolUse("m5", "toolu_w"),
			`"input":{"command":"go test ./..."},"name":"Bash"`, `"input":{"content":"x","file_path":"/w/new.go"},"name":"Write"`, 1),
			rec("u4", "w1", 5).User("thanks")},
		{"a result to a call before, which changes nothing", start + rec("t1", "a2", 4).ToolUse("m5", "toolu_1"),
			rec("r1", "t1", 5).ToolResult("toolu_1", "ok") + rec("a5", "r1", 6).Assistant("m6", "it passed")},
		{"the abandoned branch grows", rewound, rec("a9", "a2", 6).Assistant("m9", "still abandoned")},
		{"the kept branch grows", rewound, rec("u5", "a3", 6).User("go on") + rec("a5", "u5", 7).Assistant("m5", "going")},
		{"a copy of an earlier record, which the reader drops", start, rec("a2", "a1", 6).Assistant("m9", "replayed")},
		{"a sidechain record", start, strings.Replace(rec("x1", "a2", 4).Assistant("mx", "agent talk"), `"isSidechain":false`, `"isSidechain":true`, 1) +
			rec("u4", "a2", 5).User("third")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b SpineBuilder
			first, kept := buildTwice(t, &b, c.before, c.after)
			if b.fallback != "" {
				t.Errorf("built in full (%s), want extended", b.fallback)
			}
			n := len(kept.Entries) - 1
			if !reflect.DeepEqual(first.Entries[:n], kept.Entries[:n]) {
				t.Error("the second build changed the spine the first returned, before its last entry")
			}
		})
	}
}

// TestSpineBuilderOtherFiles checks that a builder builds in full when the
// files are not those it extends (other files, an earlier file of a chain
// grown, a file read again from the start, a record under a uuid of an
// earlier file) and extends a chain's spine by what its newest file
// gets.
func TestSpineBuilderOtherFiles(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	line := func(uuid, parent, text string, sec int) string {
		return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: at.Add(time.Duration(sec) * time.Second)}.User(text)
	}
	path, otherPath := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "p.jsonl")
	tr := writeAndRead(t, path, []byte(line("u1", "", "first", 0)))
	other := writeAndRead(t, otherPath, []byte(line("p1", "", "before", 0)))
	grow := func(tr *Transcript, s string) func() {
		return func() {
			growfile.Append(t, tr.Path, s)
			if _, err := tr.Update(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var b SpineBuilder
	steps := []struct {
		files  []*Transcript
		change func()
		reason string
	}{
		{[]*Transcript{tr}, nil, "no state"},
		{[]*Transcript{tr}, grow(tr, line("u2", "u1", "second", 1)), ""},
		{[]*Transcript{other, tr}, nil, "other files"},
		{[]*Transcript{other, tr}, grow(tr, line("u3", "u2", "third", 2)), ""},
		{[]*Transcript{other, tr}, grow(other, line("p2", "p1", "later, before", 3)), "rewritten"},
		{[]*Transcript{other, tr}, grow(tr, line("u4", "p1", "under the earlier file's", 4)), "parent not yet seen"},
		{[]*Transcript{other, tr}, grow(tr, line("u5", "p1", "under it again", 5)), "uuid of an earlier file"},
		{[]*Transcript{other, tr}, grow(tr, line("p2", "u5", "a copy of the earlier file's", 6)), "uuid of an earlier file"},
		{[]*Transcript{tr}, nil, "no state"}, // the chain dropped the copy: its last build kept nothing
		{[]*Transcript{tr}, func() {
			if err := os.WriteFile(path, []byte(line("u9", "", "rewritten", 5)), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Update(); err != nil {
				t.Fatal(err)
			}
		}, "rewritten"},
	}
	for i, s := range steps {
		if s.change != nil {
			s.change()
		}
		got := b.Build("s", s.files)
		if want := BuildSpine("s", s.files); !reflect.DeepEqual(unsettled(got), unsettled(want)) {
			t.Errorf("step %d: the builder's spine differs from BuildSpine's:\n%s", i, spineDiff(got, want))
		}
		if b.fallback != s.reason {
			t.Errorf("step %d: built in full for %q, want %q", i, b.fallback, s.reason)
		}
	}
}

// TestSpineBuilderChains checks the builder on chains of files (a session
// continued from others, transcript-format.md §6): every real transcript
// cut in two, its first part an earlier file and its second the newest,
// growing a few lines at a time, the two parts apart or sharing a few
// lines (a resume's copy, which the chain drops); and the chains of the
// synthetic render cases. At each step the builder's spine equals
// BuildSpine's.
func TestSpineBuilderChains(t *testing.T) {
	type chain struct {
		name   string
		before [][]byte // the earlier files, oldest first
		newest []byte
	}
	var chains []chain
	for _, f := range fixtures.All(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bounds := lineBounds(data)
		for _, cut := range []int{len(bounds) / 3, 2 * len(bounds) / 3} {
			for _, shared := range []int{0, 3} {
				from := bounds[max(cut-shared, 0)]
				chains = append(chains, chain{fmt.Sprintf("%s cut at line %d, %d shared", filepath.Base(f), cut, shared),
					[][]byte{data[:bounds[cut]]}, data[from:]})
			}
		}
	}
	// A message begun in the earlier file and continued in the newest.
	at := time.Date(2026, 3, 2, 14, 0, 0, 0, time.UTC)
	rec := func(uuid, parent string, sec int) synth.Rec {
		return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: at.Add(time.Duration(sec) * time.Second)}
	}
	chains = append(chains, chain{"a message across the files",
		[][]byte{[]byte(rec("u1", "", 0).User("first") + rec("a1", "u1", 1).Assistant("m1", "one"))},
		[]byte(rec("a2", "a1", 2).Assistant("m1", "more") + rec("a3", "a2", 3).Assistant("m1", "and more") +
			rec("u2", "a3", 4).User("second") + rec("a4", "u2", 5).Assistant("m2", "two"))})
	for _, dir := range []string{"chain", "chain3"} {
		c := chain{name: dir}
		for _, name := range []string{"predecessor2.jsonl", "predecessor.jsonl", "transcript.jsonl"} {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "render", dir, name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			c.before = append(c.before, data)
		}
		c.before, c.newest = c.before[:len(c.before)-1], c.before[len(c.before)-1]
		chains = append(chains, c)
	}
	extended := 0
	for _, c := range chains {
		var files []*Transcript
		read := func(tr *Transcript, data []byte) {
			if err := tr.readFrom(bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
		}
		for i, data := range c.before {
			tr := NewTranscript(fmt.Sprintf("p%d", i), "")
			read(tr, data)
			files = append(files, tr)
		}
		tr := NewTranscript("s", "")
		files = append(files, tr)
		var b SpineBuilder
		bounds := lineBounds(c.newest)[1:]
		for k := 0; k < len(bounds); k += max(1+k%3, len(bounds)/maxSplits) {
			read(tr, c.newest[tr.offset:bounds[k]])
			got := b.Build("s", files)
			if b.fallback == "" {
				extended++
			}
			if want := BuildSpine("s", files); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, newest file at byte %d: the builder's spine differs from BuildSpine's:\n%s", c.name, tr.offset, spineDiff(got, want))
			}
			checkHeld(t, &b, got, fmt.Sprintf("%s, newest file at byte %d", c.name, tr.offset))
		}
	}
	t.Logf("extended %d times", extended)
	if extended == 0 {
		t.Fatal("the builder never extended a chain's spine")
	}
}

// reader returns a function that gives tr lines to read, as an Update
// would after an append.
// buildTwice builds with b the spine of a transcript that holds before,
// then again once after is appended. It returns the first spine and a
// copy of it made before the second build, and fails t unless the second
// is BuildSpine's.
func buildTwice(t *testing.T, b *SpineBuilder, before, after string) (first *Spine, kept Spine) {
	t.Helper()
	tr := NewTranscript("s", "")
	read := reader(t, tr)
	read(before)
	first = b.Build("s", []*Transcript{tr})
	kept = *first
	kept.Entries = slices.Clone(first.Entries)
	read(after)
	got := b.Build("s", []*Transcript{tr})
	if want := BuildSpine("s", []*Transcript{tr}); !reflect.DeepEqual(got, want) {
		t.Errorf("the builder's spine differs from BuildSpine's:\n%s", spineDiff(got, want))
	}
	return first, kept
}

func reader(t *testing.T, tr *Transcript) func(string) {
	return func(s string) {
		t.Helper()
		if err := tr.readFrom(strings.NewReader(s), int64(len(s))); err != nil {
			t.Fatal(err)
		}
	}
}
