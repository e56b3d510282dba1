package bottles

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/render"
)

// TestEnsure walks a session through what the hook and the MCP server meet:
// no bottle (rendered), a fresh one (kept, bytes and state agreeing), new
// content (rendered), cleared (the archive, not rendered), and resumed
// after the clear (rendered back to a live bottle).
func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "s.jsonl")
	bottles := filepath.Join(dir, "bottles")
	appendLine := func(uuid, parent, text string) {
		t.Helper()
		synth.Append(t, transcript, `{"type":"user","uuid":"`+uuid+`","parentUuid":`+parent+`,"message":{"role":"user","content":"`+text+`"}}`+"\n")
	}
	req := Request{SessionID: "s", Transcript: transcript, Verify: VerifyAll}
	ensure := func(wantRendered bool, wantText string) *Current {
		t.Helper()
		cur, err := storeAt(bottles).ReadCurrent("s")
		if err != nil {
			t.Fatal(err)
		}
		b, rendered, err := storeAt(bottles).Ensure(context.Background(), req, cur)
		if err != nil {
			t.Fatal(err)
		}
		if rendered != wantRendered {
			t.Errorf("rendered %v, want %v", rendered, wantRendered)
		}
		st, err := render.StateOf(b.Data)
		if err != nil || st.Bytes != len(b.Data) || st.Rendered != b.State.Rendered {
			t.Errorf("the bytes and the state disagree: %v %+v %+v", err, st, b.State)
		}
		if disk, _ := os.ReadFile(b.Path); string(disk) != string(b.Data) {
			t.Errorf("the bytes are not the file at %s", b.Path)
		}
		if !strings.Contains(string(b.Data), wantText) {
			t.Errorf("bottle lacks %q:\n%s", wantText, b.Data)
		}
		return b
	}
	appendLine("u1", "null", "ENSURE-P1 first")
	ensure(true, "ENSURE-P1")
	ensure(false, "ENSURE-P1")
	appendLine("u2", `"u1"`, "ENSURE-P2 second")
	ensure(true, "ENSURE-P2")
	if _, err := storeAt(bottles).Archive("s"); err != nil {
		t.Fatal(err)
	}
	if b := ensure(false, "ENSURE-P2"); !b.Archived || filepath.Dir(b.Path) != ArchiveDir(bottles) {
		t.Errorf("a cleared session gave %s (archived %v), want its archived bottle", b.Path, b.Archived)
	}
	appendLine("u3", `"u2"`, "ENSURE-P3 resumed")
	if b := ensure(true, "ENSURE-P3"); b.Archived || b.Path != BottlePath(bottles, "s") {
		t.Errorf("a resumed session gave %s (archived %v), want its live bottle", b.Path, b.Archived)
	}
}
