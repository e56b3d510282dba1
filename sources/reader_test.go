package sources

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
)

// userLine and assistantLine build one record of session "s" (newline
// included); ts is an RFC 3339 time.
func userLine(uuid, parent, ts, text string) string {
	return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: at(ts), CWD: "/w"}.User(text)
}

func assistantLine(uuid, parent, ts, msgID, text string) string {
	return synth.Rec{Session: "s", UUID: uuid, Parent: parent, At: at(ts)}.Assistant(msgID, text)
}

func at(ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		panic(err)
	}
	return t
}

func spineFromString(t *testing.T, data string) *Spine {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTranscript("s", path)
	if err != nil {
		t.Fatal(err)
	}
	return BuildSpine("s", []*Transcript{tr})
}

func texts(sp *Spine) []string {
	var out []string
	for _, e := range sp.Entries {
		out = append(out, fmt.Sprintf("%d:%s", e.Kind, e.Text))
	}
	return out
}

func TestReaderTolerance(t *testing.T) {
	u1 := userLine("u1", "", "2026-01-01T10:00:00.000Z", "first prompt")
	a1 := assistantLine("a1", "u1", "2026-01-01T10:00:05.000Z", "m1", "first answer")
	u2 := userLine("u2", "a1", "2026-01-01T10:01:00.000Z", "second prompt")
	tests := []struct {
		name      string
		data      string
		want      []string
		malformed int
	}{
		{"plain", u1 + a1, []string{"1:first prompt", "2:first answer"}, 0},
		{"torn final line waits", u1 + a1 + u2[:len(u2)/2], []string{"1:first prompt", "2:first answer"}, 0},
		{"complete final line without newline waits", u1 + strings.TrimSuffix(a1, "\n"), []string{"1:first prompt"}, 0},
		{"malformed line skipped and counted", u1 + "{\"type\":\"user\",\n" + a1, []string{"1:first prompt", "2:first answer"}, 1},
		{"not an object", u1 + "[1,2]\n\"x\"\n" + a1, []string{"1:first prompt", "2:first answer"}, 2},
		{"leading NUL padding", "\x00\x00\x00" + u1 + a1, []string{"1:first prompt", "2:first answer"}, 0},
		{"NUL-only and blank lines", u1 + "\x00\x00\n\n   \n" + a1, []string{"1:first prompt", "2:first answer"}, 0},
		{"invalid UTF-8 kept for the renderer", strings.Replace(u1, "first prompt", "caf\xe9 au lait", 1), []string{"1:caf\xe9 au lait"}, 0},
		{"escapes and surrogates", strings.Replace(u1, "first prompt", `tab\tquote\"emoji\ud83d\ude00lone\ud800end`, 1), []string{"1:tab\tquote\"emoji😀lone\uFFFDend"}, 0},
		{"unknown record types and fields", `{"type":"marble-origami-commit","uuid":"x1","parentUuid":null,"weird":[1,{"a":null}]}` + "\n" + u1, []string{"1:first prompt"}, 0},
		{"duplicate uuid keeps the first", u1 + a1 + strings.Replace(u1, "first prompt", "replayed", 1), []string{"1:first prompt", "2:first answer"}, 0},
		{"the same prompt sent twice in a row is two messages", u1 + strings.Replace(u1, `"u1"`, `"u1-again"`, 1) + a1, []string{"1:first prompt", "1:first prompt", "2:first answer"}, 0},
		{"a turn copied under new uuids renders once", u1 + a1 + u2 + strings.Replace(u1, `"u1"`, `"u1-copy"`, 1) + strings.Replace(strings.Replace(a1, `"a1"`, `"a1-copy"`, 1), `"u1"`, `"u1-copy"`, 1), []string{"1:first prompt", "2:first answer", "1:second prompt"}, 0},
		{"the same prompt again after an answer is kept", u1 + a1 + strings.Replace(strings.Replace(u1, `"u1"`, `"u3"`, 1), `null`, `"a1"`, 1), []string{"1:first prompt", "2:first answer", "1:first prompt"}, 0},
		{"a block replayed in the same message renders once", u1 + a1 + strings.Replace(a1, `"a1"`, `"a1-copy"`, 1), []string{"1:first prompt", "2:first answer"}, 0},
		{"unknown parent is a root", userLine("u9", "nowhere", "2026-01-01T10:00:00.000Z", "orphan") + a1, []string{"1:orphan", "2:first answer"}, 0},
		{"parent cycle terminates", userLine("c1", "c2", "2026-01-01T10:00:00.000Z", "one") + userLine("c2", "c1", "2026-01-01T10:00:01.000Z", "two"), []string{"1:one", "1:two"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := spineFromString(t, tc.data)
			if got := texts(sp); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("entries = %q, want %q", got, tc.want)
			}
			if sp.Malformed != tc.malformed {
				t.Errorf("Malformed = %d, want %d", sp.Malformed, tc.malformed)
			}
		})
	}
}

func TestHugeLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // longer than the initial read buffer
	data := userLine("u1", "", "2026-01-01T10:00:00.000Z", "HUGE-START"+big+"HUGE-END") +
		assistantLine("a1", "u1", "2026-01-01T10:00:05.000Z", "m1", "after the huge line")
	sp := spineFromString(t, data)
	if len(sp.Entries) != 2 || !strings.HasSuffix(sp.Entries[0].Text, "HUGE-END") || sp.Entries[1].Text != "after the huge line" {
		t.Fatalf("entries = %d, first ends %q", len(sp.Entries), sp.Entries[0].Text[max(0, len(sp.Entries[0].Text)-8):])
	}
}

// TestOversizedLineSkipped feeds a line that even compacted is longer
// than maxCompact through readFrom without writing it to disk: it is
// counted, not buffered, and the offset still moves past it.
func TestOversizedLineSkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	head := userLine("u1", "", "2026-01-01T10:00:00.000Z", "before")
	tail := userLine("u2", "u1", "2026-01-01T10:00:09.000Z", "after")
	r := io.MultiReader(strings.NewReader(head), &repeatReader{n: maxCompact + 10}, strings.NewReader("\n"+tail))
	tr := NewTranscript("s", "")
	if err := tr.readFrom(r, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.offset, int64(len(head)+maxCompact+10+1+len(tail)); got != want {
		t.Errorf("offset = %d, want %d", got, want)
	}
	if tr.malformed != 1 {
		t.Errorf("malformed = %d, want 1", tr.malformed)
	}
	sp := BuildSpine("s", []*Transcript{tr})
	if got := texts(sp); strings.Join(got, "|") != "1:before|1:after" {
		t.Errorf("entries = %q", got)
	}
}

type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'y'
	}
	r.n -= k
	return k, nil
}

// TestUpdateNoticesRewrites checks that a file replaced, truncated or
// rewritten in place is parsed again from the start.
func TestUpdateNoticesRewrites(t *testing.T) {
	a := userLine("u1", "", "2026-01-01T10:00:00.000Z", "original prompt") +
		assistantLine("a1", "u1", "2026-01-01T10:00:05.000Z", "m1", "original answer")
	b := userLine("v1", "", "2026-01-01T11:00:00.000Z", "rewritten prompt")
	same := strings.Replace(a, "original", "ORIGINAL", 2) // same length, new bytes
	tests := []struct {
		name   string
		change func(path string) error
		want   string
	}{
		{"truncated and rewritten shorter", func(p string) error { return os.WriteFile(p, []byte(b), 0o600) }, "1:rewritten prompt"},
		{"replaced by rename", func(p string) error {
			tmp := p + ".new"
			if err := os.WriteFile(tmp, []byte(b+a[len(b):]), 0o600); err != nil {
				return err
			}
			return os.Rename(tmp, p)
		}, "1:rewritten prompt"},
		{"rewritten in place, same size", func(p string) error { return os.WriteFile(p, []byte(same), 0o600) }, "1:ORIGINAL prompt|2:ORIGINAL answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			tr := writeAndRead(t, path, []byte(a))
			if err := tc.change(path); err != nil {
				t.Fatal(err)
			}
			changed, err := tr.Update()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(texts(spineOf(t, tr)), "|"); !changed || !strings.HasPrefix(got, tc.want) {
				t.Errorf("changed=%v entries=%q, want prefix %q", changed, got, tc.want)
			}
			if n := tr.Rewrites(); n != 1 {
				t.Errorf("Rewrites = %d, want 1", n)
			}
		})
	}
}

// TestExpect: a transcript read from the start for the first time checks,
// on the way, the state another reader recorded of it (a bottle's), and
// counts a rewrite where the file no longer holds the bytes it covers.
func TestExpect(t *testing.T) {
	a := userLine("u1", "", "2026-01-01T10:00:00.000Z", "original prompt") +
		assistantLine("a1", "u1", "2026-01-01T10:00:05.000Z", "m1", "original answer")
	more := userLine("u2", "a1", "2026-01-01T10:01:00.000Z", "and more")
	tests := []struct {
		name  string
		now   string // the file when it is read again
		other bool   // the state is of another file
		want  int
	}{
		{"unchanged", a, false, 0},
		{"appended to", a + more, false, 0},
		{"rewritten in place, same size", strings.Replace(a, "original", "ORIGINAL", 1), false, 1},
		{"rewritten shorter", strings.Replace(a, "original prompt", "x", 1) + more, false, 1},
		{"truncated", a[:len(a)/2], false, 1},
		{"emptied", "", false, 1},
		{"state of another file", "something else entirely\n", true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			st := writeAndRead(t, path, []byte(a)).State()
			if tc.other {
				st.Path = filepath.Join(dir, "other.jsonl")
			}
			if err := os.WriteFile(path, []byte(tc.now), 0o600); err != nil {
				t.Fatal(err)
			}
			tr := NewTranscript("s", path)
			tr.Expect(st)
			if _, err := tr.Update(); err != nil {
				t.Fatal(err)
			}
			if got := tr.Rewrites(); got != tc.want {
				t.Errorf("Rewrites = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestUpdateUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tr := writeAndRead(t, path, []byte(userLine("u1", "", "2026-01-01T10:00:00.000Z", "p")))
	if changed, err := tr.Update(); err != nil || changed {
		t.Fatalf("Update of an unchanged file: changed=%v err=%v", changed, err)
	}
	growfile.Append(t, path, `{"type":"user","message":`) // torn: not yet a record
	if changed, err := tr.Update(); err != nil || changed {
		t.Fatalf("Update after a torn append: changed=%v err=%v", changed, err)
	}
	growfile.Append(t, path, `"x"}`+"\n"+userLine("u2", "u1", "2026-01-01T10:01:00.000Z", "q"))
	if changed, err := tr.Update(); err != nil || !changed || tr.Rewrites() != 0 {
		t.Fatalf("Update after appends: changed=%v err=%v rewrites=%d", changed, err, tr.Rewrites())
	}
}

func TestUpdateMissingFile(t *testing.T) {
	tr := NewTranscript("s", filepath.Join(t.TempDir(), "gone.jsonl"))
	if _, err := tr.Update(); !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("err = %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestScannerSkipsAnyValue(t *testing.T) {
	valid := []string{`{}`, `{"a":[]}`, `{"a":[1,-2.5e3,true,false,null,"x\"y\\",{"b":{}}]}`, ` { "a" : "b" } `}
	invalid := []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":"unterminated}`, `[`, `{"a":[1 2]}`}
	for _, v := range valid {
		s := scanner{b: []byte(v)}
		s.skip()
		if !s.ok() {
			t.Errorf("skip(%q) failed", v)
		}
	}
	for _, v := range invalid {
		s := scanner{b: []byte(v)}
		s.skip()
		if s.ok() {
			t.Errorf("skip(%q) accepted malformed JSON", v)
		}
	}
}

// TestParseRecordSpacedValues: a value of a type the reader has no use
// for is skipped whether or not white space comes before it, so a line
// written with spaces after its colons reads as the same record.
func TestParseRecordSpacedValues(t *testing.T) {
	for _, line := range []string{
		`{"type":"user","uuid":"u1","message":"x"}`,
		`{"type":"attachment","uuid":"u1","attachment":5}`,
		`{"type":"assistant","uuid":"a1","message":{"content":[{"type":"text","text":null}]}}`,
		`{"type":"user","uuid":"u1","toolUseResult":"Error","message":{"content":"x"}}`,
	} {
		spaced := strings.ReplaceAll(line, `":`, `": `)
		var compact, r rawRecord
		if !parseRecord([]byte(line), &compact) {
			t.Fatalf("%s: not read as a record", line)
		}
		if !parseRecord([]byte(spaced), &r) {
			t.Errorf("%s: not read as a record", spaced)
			continue
		}
		if !reflect.DeepEqual(r, compact) {
			t.Errorf("%s reads as %+v, without the spaces as %+v", spaced, r, compact)
		}
	}
}

// TestCheckedWhole follows one transcript through reads that check all
// of it and reads that check only the tail before what was appended: the
// second kind cannot see a change made in place earlier, and says so, and
// its state's time (FileState.Mod) does not vouch for the file.
func TestCheckedWhole(t *testing.T) {
	first := userLine("u1", "", "2026-01-01T10:00:00.000Z", "original prompt")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tr := writeAndRead(t, path, []byte(first))
	if !tr.CheckedWhole() {
		t.Fatal("CheckedWhole is false after a read from the start")
	}
	// settle gives the file a time of its own, old enough to be trusted
	// (Settled): a write in the same clock tick would keep it.
	writes := 0
	settle := func() {
		writes++
		at := time.Now().Add(-time.Hour + time.Duration(writes)*time.Second)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	appendTurn := func() {
		growfile.Append(t, path, userLine(fmt.Sprintf("u%d", writes+2), "u1", "2026-01-01T10:01:00.000Z", strings.Repeat("more ", 1000)))
		settle()
	}
	// inPlace changes the first prompt in place, keeping the length.
	inPlace := func(from, to string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		settle()
	}
	steps := []struct {
		name     string
		change   func()
		update   func() (bool, error)
		whole    bool
		rewrites int
	}{
		{"appended to", appendTurn, tr.Update, false, 0},
		{"unchanged", func() {}, tr.Update, false, 0},
		{"checked whole", func() {}, tr.UpdateVerified, true, 0},
		{"appended to again", appendTurn, tr.Update, false, 0},
		{"rewritten in place, same size", func() { inPlace("original", "ORIGINAL") }, tr.Update, true, 1},
		{"rewritten in place, then appended to", func() { inPlace("ORIGINAL", "redacted"); appendTurn() }, tr.Update, false, 1},
		{"that checked whole", func() {}, tr.UpdateVerified, true, 2},
	}
	for _, st := range steps {
		st.change()
		if _, err := st.update(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := tr.CheckedWhole(); got != st.whole {
			t.Errorf("%s: CheckedWhole = %v, want %v", st.name, got, st.whole)
		}
		if mod := tr.State().Mod; (mod != 0) != st.whole {
			t.Errorf("%s: State().Mod = %d with CheckedWhole %v", st.name, mod, st.whole)
		}
		if got := tr.Rewrites(); got != st.rewrites {
			t.Errorf("%s: Rewrites = %d, want %d", st.name, got, st.rewrites)
		}
	}
}

// TestParseRecordObjectOfOtherType: a field bottled reads as an object
// that holds another type (null, a string) is passed over and the rest of
// the line read, as for every other field: the record is not lost.
func TestParseRecordObjectOfOtherType(t *testing.T) {
	for _, field := range []string{"compactMetadata", "toolUseResult", "message", "attachment", "origin"} {
		for _, value := range []string{"null", `"x"`, "[1]", "7"} {
			line := `{"type":"system","subtype":"compact_boundary","` + field + `":` + value + `,"uuid":"b","parentUuid":"a"}`
			var r rawRecord
			if !parseRecord([]byte(line), &r) {
				t.Errorf("%s: not read as a record", line)
				continue
			}
			if r.subtype != "compact_boundary" || string(r.uuid) != "b" || string(r.parent) != "a" {
				t.Errorf("%s: read as %+v", line, r)
			}
		}
	}
}
