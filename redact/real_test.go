package redact_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/fixtures"
	"github.com/bottled-dev/bottled/redact"
)

// reviewed lists what the built-in rules find in the real transcripts,
// each finding read and judged, as "file: kind: sha256 of the match
// (first 12 hex)" with the count. Both corpora were screened for
// credentials before they were shared, and none is left: every finding
// the rules made there was a false positive, and was fixed rather than
// listed. The last were 34 GitHub Actions cache keys ("cache with key:
// setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-<sha256>", also printed in a
// Go struct, "Key:setup-uv-…") in daaain's claude-code-log-sample
// session: a value built of lower-case words now is a name, not a secret.
var reviewed = map[string]int{}

// TestRealTranscripts runs the built-in rules over every string of every
// real transcript and checks what they find against the reviewed list,
// printing each finding (-v) with its kind and some context. It then puts
// a generated credential into each real string: the credential must go
// and the real text around it stay as it was.
func TestRealTranscripts(t *testing.T) {
	rules := redact.Builtin()
	creds := fakecred.New(17).Every()
	got := map[string]int{}
	strs, inserted := 0, 0
	for _, path := range fixtures.All(t) {
		name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		eachString(t, path, func(s string) {
			strs++
			fs := rules.Find(s)
			for _, fd := range fs {
				sum := sha256.Sum256([]byte(s[fd.Start:fd.End]))
				got[fmt.Sprintf("%s: %s: %s", name, fd.Kind, hex.EncodeToString(sum[:])[:12])]++
				t.Logf("%s: %s: …%q[%d bytes, %.4q…]%q…", name, fd.Kind,
					s[max(0, fd.Start-40):fd.Start], fd.End-fd.Start, s[fd.Start:fd.End], s[fd.End:min(len(s), fd.End+20)])
			}
			if len(fs) > 0 || len(s) > 64<<10 {
				return
			}
			p := strings.IndexByte(s[len(s)/2:], ' ')
			if p < 0 {
				return
			}
			p += len(s)/2 + 1
			c := creds[inserted%len(creds)]
			inserted++
			in := s[:p] + c.Text + " " + s[p:]
			if out, want := rules.Redact(in), s[:p]+c.Want+" "+s[p:]; out != want {
				t.Errorf("%s: %s put into real text:\n  in …%q…\n got …%q…", name, c.Kind,
					in[max(0, p-60):min(len(in), p+len(c.Text)+60)], out[max(0, p-60):min(len(out), p+len(c.Want)+60)])
			}
		})
	}
	for k, n := range got {
		if reviewed[k] != n {
			t.Errorf("finding not reviewed (or seen %d times, reviewed %d): %s", n, reviewed[k], k)
		}
	}
	for k, n := range reviewed {
		if got[k] == 0 {
			t.Errorf("reviewed finding gone (%d expected): %s", n, k)
		}
	}
	t.Logf("%d strings, %d findings, %d credentials put into real text", strs, len(got), inserted)
	if inserted < 1000 {
		t.Errorf("only %d credentials were put into real text", inserted)
	}
}

// eachString calls fn with every string value of every line of a
// transcript, however deep in the record, always in the same order.
func eachString(tb testing.TB, path string, fn func(string)) {
	tb.Helper()
	for line := range fixtures.Lines(tb, path) {
		var v any
		if json.Unmarshal(line, &v) == nil {
			walk(v, fn)
		}
	}
}

func walk(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walk(e, fn)
		}
	case map[string]any:
		// In the order of the keys, not the map's: TestRealTranscripts
		// pairs each string with a credential by the order it sees them,
		// and a pairing that fails must fail again in the next run.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walk(x[k], fn)
		}
	}
}
