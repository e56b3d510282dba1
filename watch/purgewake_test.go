package watch

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/redact"
)

// TestPurgeWakeFollowsStore renders a session twice with one parse state,
// the daemon's, changing its sources or rules in between: the index
// keeper is woken after the second write exactly when that write left
// the search index's purge marker. Woken without one, it syncs the whole
// index for nothing; not woken for one, the purge waits for the file
// watcher's next rescan (Config.Rescan, 30 s by default) to find the
// marker, and the search index keeps showing what the bottle no longer
// does until then.
func TestPurgeWakeFollowsStore(t *testing.T) {
	const pred, id = "9a4e0000-0000-4000-8000-000000000001", "9a4e0000-0000-4000-8000-000000000002"
	for _, tc := range []struct {
		name string
		// change changes the sources (or the rules) between the renders;
		// the second render reads the transcripts in full if it says so.
		change func(t *testing.T, d *Daemon, own, before string) (verify bool)
		purge  bool
	}{
		{"appended", func(t *testing.T, d *Daemon, own, _ string) bool {
			synth.Append(t, own, synth.Rec{Session: id, UUID: "u2", Parent: "a1", At: time.Now()}.User("WAKE-P2 and then"))
			return false
		}, false},
		{"predecessor deleted", func(t *testing.T, d *Daemon, own, before string) bool {
			if err := os.Remove(before); err != nil {
				t.Fatal(err)
			}
			synth.Append(t, own, synth.Rec{Session: id, UUID: "u2", Parent: "a1", At: time.Now()}.User("WAKE-P2 and then"))
			return false
		}, true},
		{"rewritten before the appended lines", func(t *testing.T, d *Daemon, own, _ string) bool {
			rewriteInPlace(t, own, "WAKE-P1", "WAKE-R1")
			synth.Append(t, own, synth.Rec{Session: id, UUID: "u2", Parent: "a1", At: time.Now()}.User("WAKE-P2 and then"))
			return true // as the rescan asks, having found it rewritten
		}, true},
		{"rules changed", func(t *testing.T, d *Daemon, own, _ string) bool {
			d.rules.Store(rulesWith(t, d, "Wake token: wake_[0-9]{8}\n"))
			return false
		}, true},
		{"bottle on disk made by the rules in use by another writer", func(t *testing.T, d *Daemon, own, _ string) bool {
			rules := rulesWith(t, d, "Wake token: wake_[0-9]{8}\n")
			b, err := d.store.FromDisk(t.Context(), bottles.Request{SessionID: id, Transcript: own, ClaudeDir: d.cfg.ClaudeDir, Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := d.store.Write(b); err != nil || out != bottles.Written {
				t.Fatalf("the other writer's bottle: %v, %v", out, err)
			}
			takeMarker(t, d) // its purge is done (a search synced the index)
			d.rules.Store(rules)
			synth.Append(t, own, synth.Rec{Session: id, UUID: "u2", Parent: "a1", At: time.Now()}.User("WAKE-P2 and then"))
			return false
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := testDaemon(t, Config{})
			dir := filepath.Join(d.cfg.ClaudeDir, "projects", "-home-dev-app")
			before := filepath.Join(dir, pred+".jsonl")
			own := filepath.Join(dir, id+".jsonl")
			at := time.Now().Add(-time.Hour)
			synth.Append(t, before, synth.Rec{Session: pred, UUID: "p1", At: at, CWD: "/home/dev/app"}.User("WAKE-PRED-P1 first")+
				`{"type":"continued-in","sessionId":"`+pred+`","continuedInSessionId":"`+id+`"}`+"\n")
			synth.Append(t, own, synth.Rec{Session: id, UUID: "u1", At: at, CWD: "/home/dev/app"}.User("WAKE-P1 wake_12345678 go on")+
				synth.Rec{Session: id, UUID: "a1", Parent: "u1", At: at}.Assistant("m1", "WAKE-A1 "+padding))
			s := &session{id: id}
			if res := d.renderSession(t.Context(), s, false); res.err != nil || res.outcome != outcomeWritten {
				t.Fatalf("first render: %s, %v", res.outcome, res.err)
			}
			takeMarker(t, d)
			drain(d.purgeNow)

			s.verify = tc.change(t, d, own, before)
			res := d.renderSession(t.Context(), s, false)
			if res.err != nil || res.outcome != outcomeWritten {
				t.Fatalf("second render: %s, %v", res.outcome, res.err)
			}
			_, err := os.Lstat(d.store.PurgeMarker())
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			if marked := err == nil; marked != tc.purge {
				t.Fatalf("the write left the purge marker: %v, want %v", marked, tc.purge)
			}
			if woken := len(d.purgeNow) > 0; woken != tc.purge {
				t.Errorf("the index keeper was woken: %v; the write left the purge marker: %v", woken, tc.purge)
			}
		})
	}
}

// padding makes a record longer than the tail window the daemon compares
// before appended lines, so that a change in place before it is seen only
// by a read of the whole file.
var padding = strings.Repeat("x", 64<<10)

// rewriteInPlace replaces old with new, of the same length, in the file at
// path, keeping its size.
func rewriteInPlace(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(old))
	if i < 0 || len(old) != len(new) {
		t.Fatalf("%s does not hold %q, or %q is not as long", path, old, new)
	}
	copy(b[i:], new)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rulesWith writes the data directory's patterns file and returns the
// rules it makes.
func rulesWith(t *testing.T, d *Daemon, patterns string) *redact.Rules {
	t.Helper()
	if err := os.WriteFile(bottles.RulesFile(d.cfg.DataDir), []byte(patterns), 0o600); err != nil {
		t.Fatal(err)
	}
	rules, err := bottles.LoadRules(d.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// takeMarker does what a purge of the search index does with the purge
// marker, if there is one: takes it and, done, removes it.
func takeMarker(t *testing.T, d *Daemon) {
	t.Helper()
	if req, asked := d.store.TakePurge(); asked {
		if err := req.Done(); err != nil {
			t.Fatal(err)
		}
	}
}

// drain empties a signal channel.
func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}
