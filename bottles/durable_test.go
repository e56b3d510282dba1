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
	if out, err := b.Write(bottle()); err != nil || out != Written {
		t.Fatalf("batch Write = %v, %v", out, err)
	}
	if readMarker(dir) == nil {
		t.Fatal("no marker while the batch is not synced")
	}
	if f, _, why, err := storeAt(dir).Check("s", transcript, nil, VerifyAll, nil); err != nil || f != Fresh {
		t.Fatalf("Check before a crash = %v (%s) %v; a marker of this boot must not matter", f, why, err)
	}

	// The machine goes down: the marker is of another boot, the bottle
	// lost its last bytes.
	m, _ := json.Marshal(marker{Boot: "another-boot", Since: time.Now().Add(-time.Second)})
	if err := os.WriteFile(filepath.Join(dir, markerName), m, 0o600); err != nil {
		t.Fatal(err)
	}
	path := BottlePath(dir, "s")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-20], 0o600); err != nil {
		t.Fatal(err)
	}
	if f, _, _, err := storeAt(dir).Check("s", transcript, nil, VerifyAll, nil); err != nil || f != Stale {
		t.Errorf("Check after a crash = %v, %v; want stale", f, err)
	}
	after := storeAt(dir).NewBatch()
	if !after.Damaged() {
		t.Errorf("a new batch does not see the crash")
	}
	// A render of the same sources replaces the damaged bottle.
	again := bottle()
	if out, err := after.Write(again); err != nil || out != Written {
		t.Fatalf("Write over a damaged bottle = %v, %v; want written", out, err)
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
