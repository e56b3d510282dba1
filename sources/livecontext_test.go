package sources

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fixtures"
)

func TestScanLiveContext(t *testing.T) {
	const path = "/data/bottles/S1.md"
	pointer := func(p string) string {
		return fmt.Sprintf(`{"type":"attachment","attachment":{"type":"hook_additional_context","content":[%q],"hookName":"SessionStart","hookEvent":"SessionStart"},"uuid":"u%d"}`,
			PointerHeading+"\n\nRead this file: "+p+"\n", rand.IntN(1e9))
	}
	hookSuccess := func(p string) string {
		out := fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":%q}}`, PointerHeading+"\nRead: "+p)
		return fmt.Sprintf(`{"type":"attachment","attachment":{"type":"hook_success","hookName":"SessionStart:resume","hookEvent":"SessionStart","stdout":%q}}`, out)
	}
	user := `{"type":"user","message":{"role":"user","content":"hello"},"uuid":"a"}`
	boundary := `{"type":"system","subtype":"compact_boundary","parentUuid":null,"uuid":"b"}`
	summary := `{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued"},"uuid":"c"}`
	sideBoundary := `{"type":"system","subtype":"compact_boundary","isSidechain":true,"uuid":"d"}`
	quoted := `{"type":"user","message":{"role":"user","content":"I saw \"compact_boundary\" and \"isCompactSummary\":true in a log"},"uuid":"e"}`
	tests := []struct {
		name      string
		lines     []string
		compacted bool
		pointed   bool
	}{
		{"never compacted, pointer from a resume", []string{user, pointer(path), user}, false, true},
		{"pointer before the latest compaction does not count", []string{user, pointer(path), boundary, summary, user}, true, false},
		{"pointer after it counts", []string{user, boundary, summary, pointer(path), user}, true, true},
		{"older versions: only the hook's stdout", []string{boundary, hookSuccess(path)}, true, true},
		{"a pointer to another path does not count", []string{boundary, pointer("/data/bottles/archive/x-S1.md")}, true, false},
		{"a rolled-over file opens with the summary", []string{summary, user, pointer(path)}, true, true},
		{"sidechain compactions and quoted text are not compactions", []string{user, sideBoundary, quoted}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(file, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			lc, err := ScanLiveContext(file, 0)
			if err != nil {
				t.Fatal(err)
			}
			if lc.Compacted != tc.compacted || lc.Pointed(path) != tc.pointed {
				t.Errorf("compacted %v pointed %v, want %v %v (%+v)", lc.Compacted, lc.Pointed(path), tc.compacted, tc.pointed, lc)
			}
		})
	}
}

// TestScanLiveContextRealFixtures compares the backward scan with a plain
// forward read of every real transcript: the same latest compaction.
func TestScanLiveContextRealFixtures(t *testing.T) {
	dir := fixtures.Real(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	compacted := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want := LiveContext{}
		var at int64
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if classifyContextLine(bytes.TrimRight(line, "\r\n")).compaction {
				want.Compacted, want.At = true, at
			}
			at += int64(len(line))
		}
		got, err := ScanLiveContext(file, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Compacted != want.Compacted || got.At != want.At {
			t.Errorf("%s: scan found compaction %v at %d, a forward read %v at %d", filepath.Base(file), got.Compacted, got.At, want.Compacted, want.At)
		}
		if got.Compacted {
			compacted++
		}
	}
	if compacted == 0 {
		t.Errorf("no compaction found in %d real transcripts; some have them", len(files))
	}
	t.Logf("%d of %d real transcripts compacted", compacted, len(files))
}
