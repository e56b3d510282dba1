package bottles

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/sources"
)

// TestBatchCrashOfTheMachine writes bottles through a Batch (no sync per
// bottle), then leaves the directory as a crash of the machine in the
// middle of the batch would: the batch's marker names another boot, and a
// bottle written in the batch lost its tail. That bottle must not be taken
// for fresh, nor kept by Write because its state line claims newer
// sources; once it is rendered again and the batch recovered, the marker
// goes.
func TestBatchCrashOfTheMachine(t *testing.T) {
	if bootID() == "" {
		t.Skip("no boot id on this system: a Batch syncs every write")
	}
	dir := filepath.Join(t.TempDir(), "bottles")
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(transcript, []byte(`{"type":"user","uuid":"u1","message":{"role":"user","content":"hello"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bottle := func() *render.Bottle {
		tr, err := sources.ReadTranscript("s", transcript)
		if err != nil {
			t.Fatal(err)
		}
		b, err := render.Render(render.Input{SessionID: "s", Now: testNow, Spine: sources.BuildSpine("s", []*sources.Transcript{tr})})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := storeAt(dir).NewBatch()
	if r, err := b.Put(bottle(), false); err != nil || r.Outcome != Written {
		t.Fatalf("batch Put = %v, %v", r.Outcome, err)
	}
	if readMarker(dir) == nil {
		t.Fatal("no marker while the batch is not synced")
	}
	if f, _, why, err := storeAt(dir).Check("s", transcript, nil, VerifyAll, nil); err != nil || f != Fresh {
		t.Fatalf("Check before a crash = %v (%s) %v; a marker of this boot must not matter", f, why, err)
	}

	// The machine goes down: the marker is of another boot, the bottle
	// lost its last bytes.
	path := crashMachine(t, dir, time.Now().Add(-time.Second), "s")
	if f, _, _, err := storeAt(dir).Check("s", transcript, nil, VerifyAll, nil); err != nil || f != Stale {
		t.Errorf("Check after a crash = %v, %v; want stale", f, err)
	}
	after := storeAt(dir).NewBatch()
	if !after.Damaged() {
		t.Errorf("a new batch does not see the crash")
	}
	// A render of the same sources replaces the damaged bottle.
	again := bottle()
	if r, err := after.Put(again, false); err != nil || r.Outcome != Written {
		t.Fatalf("Put over a damaged bottle = %v, %v; want written", r.Outcome, err)
	}
	if err := after.Sync(); err != nil {
		t.Fatal(err)
	}
	if readMarker(dir) == nil {
		t.Errorf("the crash's marker was removed before the batch recovered")
	}
	after.Recovered()
	if err := after.Sync(); err != nil {
		t.Fatal(err)
	}
	if readMarker(dir) != nil {
		t.Errorf("the marker is still there after recovery and a sync")
	}
	if f, _, why, err := storeAt(dir).Check("s", transcript, nil, VerifyAll, nil); err != nil || f != Fresh {
		t.Errorf("Check after recovery = %v (%s) %v; want fresh", f, why, err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(again.Bytes) {
		t.Errorf("the bottle on disk is not the one rendered again")
	}
}

// batchBottle renders session id from a transcript of one prompt in dir.
func batchBottle(t *testing.T, dir, id, prompt string) *render.Bottle {
	t.Helper()
	transcript := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(transcript, []byte(`{"type":"user","uuid":"u1","message":{"role":"user","content":"`+prompt+`"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := sources.ReadTranscript(id, transcript)
	if err != nil {
		t.Fatal(err)
	}
	b, err := render.Render(render.Input{SessionID: id, Now: testNow, Spine: sources.BuildSpine(id, []*sources.Transcript{tr})})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBatchMarkerOutlivesSync writes bottles through a Batch as a live
// session's appends come: the batch's marker stays after a sync, the same
// one for the next write, and Unmark removes it only once every bottle
// written is synced. A crash of the machine after a write that followed a
// sync finds that bottle suspect (stale), as the marker's time says.
func TestBatchMarkerOutlivesSync(t *testing.T) {
	if bootID() == "" {
		t.Skip("no boot id on this system: a Batch syncs every write")
	}
	dir, src := filepath.Join(t.TempDir(), "bottles"), t.TempDir()
	markerNow := func(when string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, markerName))
		if err != nil {
			t.Fatalf("%s: no marker (%v)", when, err)
		}
		return data
	}
	b := storeAt(dir, time.Now()).NewBatch()
	if r, err := b.Put(batchBottle(t, src, "a", "first"), false); err != nil || r.Outcome != Written {
		t.Fatalf("batch Put = %v, %v", r.Outcome, err)
	}
	first := markerNow("after the first write")
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := b.Pending(); n != 0 {
		t.Fatalf("%d bottles wait for a sync after Sync", n)
	}
	markerNow("after the sync")
	if r, err := b.Put(batchBottle(t, src, "b", "second"), false); err != nil || r.Outcome != Written {
		t.Fatalf("batch Put = %v, %v", r.Outcome, err)
	}
	if got := markerNow("after a write that followed the sync"); string(got) != string(first) {
		t.Errorf("the marker was made again: %s, then %s", first, got)
	}
	if err := b.Unmark(); err != nil {
		t.Fatal(err)
	}
	markerNow("Unmark with a bottle not synced")

	// The machine goes down before the next sync: the marker is of another
	// boot, bottle b lost its tail.
	var m marker
	if err := json.Unmarshal(first, &m); err != nil {
		t.Fatal(err)
	}
	crashMachine(t, dir, m.Since, "b")
	if f, _, _, err := storeAt(dir).Check("b", filepath.Join(src, "b.jsonl"), nil, VerifyAll, nil); err != nil || f != Stale {
		t.Errorf("Check after a crash = %v, %v; want stale", f, err)
	}
}

// TestBatchUnmark: Unmark removes the marker once the bottles written are
// synced, and the next write makes it again; a bottles directory removed
// with its marker between two writes gets a marker again at the second.
func TestBatchUnmark(t *testing.T) {
	if bootID() == "" {
		t.Skip("no boot id on this system: a Batch syncs every write")
	}
	dir, src := filepath.Join(t.TempDir(), "bottles"), t.TempDir()
	marked := func() bool {
		_, err := os.Stat(filepath.Join(dir, markerName))
		return err == nil
	}
	b := storeAt(dir, time.Now()).NewBatch()
	write := func(id string) {
		t.Helper()
		if r, err := b.Put(batchBottle(t, src, id, "hello "+id), false); err != nil || r.Outcome != Written {
			t.Fatalf("batch Put = %v, %v", r.Outcome, err)
		}
	}
	write("a")
	if err := b.Unmark(); err != nil || !marked() {
		t.Fatalf("Unmark before a sync: %v, marker there %v; want it kept", err, marked())
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := b.Unmark(); err != nil || marked() {
		t.Fatalf("Unmark after a sync: %v, marker there %v; want it gone", err, marked())
	}
	write("b")
	if !marked() {
		t.Fatal("no marker for a write after Unmark")
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	write("c")
	if !marked() {
		t.Fatal("no marker for a write after the bottles directory was removed with it")
	}
}

// crashMachine leaves dir as a crash of the machine in the middle of a
// batch begun at since would: the marker of another boot, and the bottle
// of session (whose path it returns) without its last bytes.
func crashMachine(t *testing.T, dir string, since time.Time, session string) string {
	t.Helper()
	m, _ := json.Marshal(marker{Boot: "another-boot", Since: since})
	if err := os.WriteFile(filepath.Join(dir, markerName), m, 0o600); err != nil {
		t.Fatal(err)
	}
	path := BottlePath(dir, session)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)-20], 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
