package bottles

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/oddfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
	"github.com/bottled-dev/bottled/sources"
)

// TestLoadRules reads patterns files: none, good, with bad lines, and one
// that cannot be read. The rules are never nil; an error names the line
// and says what bottled does meanwhile.
func TestLoadRules(t *testing.T) {
	acme := []redact.Rule{{Kind: "Acme token", Pattern: `acme_[0-9a-f]{32}`}}
	withAcme, err := redact.Builtin().With(acme)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    string // "" for none; "/" for a directory in its place, "|" for a named pipe
		wantID  string
		wantErr []string
	}{
		{name: "no file", wantID: redact.Builtin().ID()},
		{name: "comments only", file: "# nothing yet\n\n", wantID: redact.Builtin().ID()},
		{name: "a pattern", file: "# Acme\nAcme token: acme_[0-9a-f]{32}\n", wantID: withAcme.ID()},
		{name: "a bad line among good ones", file: "Acme token: acme_[0-9a-f]{32}\nBroken: acme_[\n",
			wantID: withAcme.ID(), wantErr: []string{"line 2", "Broken", "built-in rules and the file's other patterns"}},
		{name: "no colon", file: "just a regexp [0-9]+\n", wantID: redact.Builtin().ID(), wantErr: []string{"line 1", "no colon"}},
		{name: "unreadable", file: "/", wantID: redact.Builtin().ID(), wantErr: []string{"redact-patterns", "built-in rules alone"}},
		// A named pipe would hold up every hook and render for ever.
		{name: "a named pipe", file: "|", wantID: redact.Builtin().ID(), wantErr: []string{"redact-patterns", "built-in rules alone"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			switch tc.file {
			case "":
			case "/":
				if err := os.Mkdir(RulesFile(data), 0o700); err != nil {
					t.Fatal(err)
				}
			case "|":
				oddfile.FIFO(t, RulesFile(data))
			default:
				if err := os.WriteFile(RulesFile(data), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var rules *redact.Rules
			done := make(chan struct{})
			go func() {
				defer close(done)
				rules, err = LoadRules(data)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("LoadRules waits") // the goroutine is left blocked
			}
			if rules == nil {
				t.Fatal("nil rules")
			}
			if rules.ID() != tc.wantID {
				t.Errorf("rules %s, want %s", rules.ID(), tc.wantID)
			}
			if (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.file == "|" {
				return // read once: the pipe is left waiting for a writer
			}
			var log bytes.Buffer
			warned := LoadRulesOrWarn(data, slog.New(slog.NewTextHandler(&log, nil)))
			if warned.ID() != tc.wantID {
				t.Errorf("LoadRulesOrWarn: rules %s, want %s", warned.ID(), tc.wantID)
			}
			switch {
			case err == nil && log.Len() > 0:
				t.Errorf("LoadRulesOrWarn logged %q for usable rules", log.String())
			case err != nil && !strings.Contains(log.String(), "level=WARN"):
				t.Errorf("LoadRulesOrWarn did not warn of %v: %q", err, log.String())
			}
		})
	}
}

// TestOtherRulesAreStale writes a bottle as a bottled from before
// redaction did (a GitHub token in it, no "redact" in its state) and one
// made by other rules: the check finds each stale, Write replaces it with
// a bottle made by the rules in use, which holds no token, and leaves the
// purge marker, so that the index forgets what the old bottle said.
func TestOtherRulesAreStale(t *testing.T) {
	const id = "7c1d2e3f-4a5b-4c6d-8e7f-a0b1c2d3e4f5"
	cred := fakecred.New(5).GitHub('p')
	user := acmeRules(t)
	for _, tc := range []struct {
		name string
		old  func(b *render.Bottle) []byte
	}{
		{"before redaction", func(b *render.Bottle) []byte {
			old, err := fakecred.Unredacted(b.Bytes, cred)
			if err != nil {
				t.Fatal(err)
			}
			return old
		}},
		{"other rules", func(b *render.Bottle) []byte { return b.Bytes }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, id+".jsonl")
			at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
			rec := func(uuid, parent string) synth.Rec {
				at = at.Add(time.Second)
				return synth.Rec{Session: id, UUID: uuid, Parent: parent, At: at, CWD: "/w"}
			}
			src := rec("u1", "").User("RULES-P1 push with "+cred.Text) + rec("a1", "u1").Assistant("m1", "RULES-A1 Pushed.")
			if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			bottles := filepath.Join(dir, "bottles")
			req := Request{SessionID: id, Transcript: path}
			if tc.name == "other rules" {
				req.Rules = user
			}
			b, err := storeAt(bottles).FromDisk(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if err := safefile.MkdirPrivate(bottles); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(BottlePath(bottles, id), tc.old(b), 0o600); err != nil {
				t.Fatal(err)
			}
			f, _, why, err := storeAt(bottles).Check(id, path, nil, VerifyAll, nil)
			if err != nil || f != Stale || why != WhyRules {
				t.Fatalf("Check = %v (%s), err %v; want stale (%s)", f, why, err, WhyRules)
			}
			if _, asked := storeAt(bottles).TakePurge(); asked {
				t.Fatal("purge asked before the bottle was replaced")
			}
			cur, err := storeAt(bottles).ReadCurrent(id)
			if err != nil {
				t.Fatal(err)
			}
			got, rendered, err := storeAt(bottles).Ensure(t.Context(), Request{SessionID: id, Transcript: path, Verify: VerifyHook}, cur)
			if err != nil || !rendered {
				t.Fatalf("Ensure rendered %v, err %v", rendered, err)
			}
			disk, err := os.ReadFile(BottlePath(bottles, id))
			if err != nil {
				t.Fatal(err)
			}
			for _, data := range [][]byte{got.Data, disk} {
				if strings.Contains(string(data), cred.Secret) || !strings.Contains(string(data), "[redacted: GitHub token]") {
					t.Fatalf("the token is still in the bottle:\n%s", data)
				}
			}
			if got.State.Redact != redact.Builtin().ID() {
				t.Errorf("state says redact %q", got.State.Redact)
			}
			if _, asked := storeAt(bottles).TakePurge(); !asked {
				t.Error("no purge asked: the index would keep what the old bottle said")
			}
			if f, _, why, err := storeAt(bottles).Check(id, path, nil, VerifyAll, nil); err != nil || f != Fresh {
				t.Errorf("after the render, Check = %v (%s), err %v", f, why, err)
			}
		})
	}
}

// TestJudgeOtherRules: a bottle made by other rules gives way to one that
// covers its sources, and crosses one that does not (the render is done
// again from the sources now), whatever else they say.
func TestJudgeOtherRules(t *testing.T) {
	mk := func(redact string, offset int64) *render.State {
		return &render.State{Format: render.Format, Session: "s", Mode: render.ModeFull, Redact: redact,
			Transcripts: []sources.FileState{{Session: "s", Offset: offset}}}
	}
	tests := []struct {
		cur, next *render.State
		want      Outcome
	}{
		{mk("", 100), mk("1", 100), Written},
		{mk("", 100), mk("1", 200), Written},
		{mk("", 200), mk("1", 100), Crossed},
		{mk("1+abc", 100), mk("1", 100), Written},
		{mk("1", 100), mk("1", 100), Covered},
	}
	for _, tc := range tests {
		if got := judge(tc.cur, tc.next, nil); got != tc.want {
			t.Errorf("judge(%q at %d, %q at %d) = %v, want %v", tc.cur.Redact, tc.cur.Transcripts[0].Offset,
				tc.next.Redact, tc.next.Transcripts[0].Offset, got, tc.want)
		}
	}
}

// TestResealArchives reseals an archived bottle from before redaction in
// place, and leaves one made by the rules alone.
func TestResealArchives(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bottles")
	c := fakecred.New(10).GitHub('s')
	write := func(id string, data []byte) string {
		b, err := render.Render(render.Input{SessionID: id, Now: time.Now(), Spine: &sources.Spine{SessionID: id, Entries: []sources.Entry{
			{Kind: sources.EntryUser, Time: time.Now(), Text: "RESEAL-P1 use " + c.Text},
			{Kind: sources.EntryAssistant, Time: time.Now(), Text: "RESEAL-A1 " + c.Text}}}})
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			data = b.Bytes
		} else if data, err = fakecred.Unredacted(b.Bytes, c); err != nil {
			t.Fatal(err)
		}
		if err := safefile.MkdirPrivate(ArchiveDir(dir)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(ArchiveDir(dir), "20261130T100000Z-"+id+".md")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	oldPath, newPath := write("old", []byte("old")), write("new", nil)
	before, _ := os.Stat(newPath)
	n, err := Open(filepath.Dir(dir), time.Now, time.UTC).ResealArchives(nil)
	if err != nil || n != 1 {
		t.Fatalf("ResealArchives = %d, %v; want 1", n, err)
	}
	data, err := os.ReadFile(oldPath)
	if err != nil || strings.Contains(string(data), c.Secret) {
		t.Errorf("the archived bottle keeps the token (err %v)", err)
	}
	if after, _ := os.Stat(newPath); !os.SameFile(before, after) {
		t.Error("a bottle made by the rules was written again")
	}
}
