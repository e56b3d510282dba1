package bottles

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// TestResealFileStripsTags: an archived bottle that a bottled whose tag
// stripper matched <private> in lower case only made (before redaction,
// so by other rules) holds <PRIVATE> and <Private> text; resealed in
// place, it holds none of it, keeps its lines, and asks the search index
// to forget what it held.
func TestResealFileStripsTags(t *testing.T) {
	const id = "3d4e5f60-7182-4930-a4b5-c6d7e8f9a0b1"
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	b, err := render.Render(render.Input{SessionID: id, Now: testNow, Spine: &sources.Spine{SessionID: id, Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: at, Text: "ARCH-P1 deploy XOPENxkept-secret\nover two linesXCLOSEx now"},
		{Kind: sources.EntryAssistant, Time: at.Add(time.Minute), Text: "ARCH-A1 done XMIXEDxkept-secret unclosed"},
		{Kind: sources.EntryUser, Time: at.Add(2 * time.Minute), Text: "ARCH-P2 thanks"}}}})
	if err != nil {
		t.Fatal(err)
	}
	old := b.Bytes
	for stand, tag := range map[string]string{"XOPENx": "<PRIVATE>", "XCLOSEx": "</PRIVATE>", "XMIXEDx": "<Private>"} {
		if old, err = fakecred.Unredacted(old, fakecred.Credential{Want: stand, Text: tag}); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Contains(old, []byte("<PRIVATE>kept-secret")) {
		t.Fatal("the older bottle holds no private text: the test tests nothing")
	}
	s := storeAt(filepath.Join(t.TempDir(), "bottles"))
	if err := safefile.MkdirPrivate(ArchiveDir(s.Dir)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ArchiveDir(s.Dir), "20261130T100000Z-"+id+".1.md")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := s.ResealFile(path, nil)
	if err != nil || out == nil {
		t.Fatalf("ResealFile = %d bytes, %v", len(out), err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, out) || bytes.Contains(data, []byte("kept-secret")) {
		t.Fatalf("the archived bottle (the bytes returned: %v) keeps private text:\n%s", bytes.Equal(data, out), data)
	}
	for _, want := range []string{"ARCH-P1 deploy", "now", "ARCH-A1 done", "ARCH-P2 thanks"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("%q is gone from the resealed bottle:\n%s", want, data)
		}
	}
	if n, m := bytes.Count(data, []byte("\n")), bytes.Count(old, []byte("\n")); n != m {
		t.Errorf("%d lines, the older bottle's %d", n, m)
	}
	if st, err := render.StateOf(data); err != nil || st.Bytes != len(data) {
		t.Errorf("state %+v (%v) for %d bytes", st, err, len(data))
	}
	if _, asked := s.TakePurge(); !asked {
		t.Error("the search index was not asked to forget what the bottle held")
	}
}

// TestLiveBottleOfOlderStripperRendered: a live bottle of an older
// stripper whose transcript is there is not resealed but rendered again
// from the transcript, by today's stripper, which hides the <PRIVATE>
// text the older one kept.
func TestLiveBottleOfOlderStripperRendered(t *testing.T) {
	const id = "4e5f6071-8293-4a41-b5c6-d7e8f9a0b1c2"
	dir := t.TempDir()
	path := filepath.Join(dir, id+".jsonl")
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	u := synth.Rec{Session: id, UUID: "u1", At: at, CWD: "/w"}
	a := synth.Rec{Session: id, UUID: "a1", Parent: "u1", At: at.Add(time.Second), CWD: "/w"}
	src := u.User("LIVE-P1 keep <PRIVATE>kept-secret</PRIVATE> going") + a.Assistant("m1", "LIVE-A1 Done.")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s := storeAt(filepath.Join(dir, "bottles"))
	b, err := s.FromDisk(t.Context(), Request{SessionID: id, Transcript: path})
	if err != nil {
		t.Fatal(err)
	}
	// The bottle as the older stripper made it from the same transcript.
	old, err := fakecred.Unredacted(b.Bytes, fakecred.Credential{Want: "LIVE-P1 keep  going", Text: "LIVE-P1 keep <PRIVATE>kept-secret</PRIVATE> going"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(old, []byte("kept-secret")) {
		t.Fatal("the older bottle holds no private text: the test tests nothing")
	}
	if err := safefile.MkdirPrivate(s.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(id), old, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, _, why, err := s.Check(id, path, nil, VerifyAll, nil); err != nil || f != Stale || why != WhyRules {
		t.Fatalf("Check = %v (%s), err %v; want stale (%s)", f, why, err, WhyRules)
	}
	cur, err := s.ReadCurrent(id)
	if err != nil {
		t.Fatal(err)
	}
	got, rendered, err := s.Ensure(t.Context(), Request{SessionID: id, Transcript: path, Verify: VerifyHook}, cur)
	if err != nil || !rendered {
		t.Fatalf("Ensure rendered %v, err %v", rendered, err)
	}
	disk, err := os.ReadFile(s.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{got.Data, disk} {
		if bytes.Contains(data, []byte("kept-secret")) || !bytes.Contains(data, []byte("LIVE-P1 keep  going")) {
			t.Fatalf("the bottle rendered again keeps private text, or lost the message:\n%s", data)
		}
	}
}
