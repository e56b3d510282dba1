package sources

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSessionTracker lays out a project directory as Claude Code 2.1.332
// leaves it after /clear in the interactive screen: the new session's
// records carry the launching session's id as "session_id".
func TestSessionTracker(t *testing.T) {
	const (
		launched = "a1782d68-b468-46b5-ad3e-0a1651ac6f22"
		cleared  = "e5e9892a-bf20-4962-aa0d-8b2a6a93eb92" // started by /clear in the same process
		other    = "7f000000-0000-4000-8000-000000000001" // another Claude Code in the same project
		headless = "7f000000-0000-4000-8000-000000000002" // a -p run: no session_id at all
		rolled   = "7f000000-0000-4000-8000-000000000003" // the cleared one continued in after a compaction
	)
	claude := t.TempDir()
	dir := filepath.Join(claude, "projects", "-home-u-app")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	write := func(id, body string, age time.Duration) {
		t.Helper()
		p := filepath.Join(dir, id+".jsonl")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, base.Add(age), base.Add(age)); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(own, launcher string) string {
		s := `{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u","sessionId":"` + own + `"`
		if launcher != "" {
			s += `,"session_id":"` + launcher + `"`
		}
		return s + "}\n"
	}
	tr := NewSessionTracker(claude, launched)
	if got := tr.Current(); got != launched {
		t.Errorf("no transcript yet: %q, want the launch session", got)
	}
	write(launched, rec(launched, launched), 0)
	if got := tr.Current(); got != launched {
		t.Errorf("only the launch session: %q", got)
	}
	write(other, rec(other, other), 2*time.Minute)
	write(headless, rec(headless, ""), 3*time.Minute)
	if got := tr.Current(); got != launched {
		t.Errorf("other processes' sessions: %q, want the launch session", got)
	}
	write(cleared, `{"type":"mode","mode":"normal","sessionId":"`+cleared+`"}`+"\n"+rec(cleared, launched), time.Minute)
	if got := tr.Current(); got != cleared {
		t.Errorf("after /clear: %q, want %q", got, cleared)
	}
	write(rolled, rec(rolled, ""), 4*time.Minute)
	write(cleared, rec(cleared, launched)+`{"type":"continued-in","continuedInSessionId":"`+rolled+`"}`+"\n", time.Minute)
	if got := tr.Current(); got != rolled {
		t.Errorf("after a rollover: %q, want %q", got, rolled)
	}
	if got := NewSessionTracker(claude, "../etc").Current(); got != "" {
		t.Errorf("invalid launch id: %q", got)
	}
}
