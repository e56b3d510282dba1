package watch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/render"
	"github.com/bottled-dev/bottled/safefile"
)

// TestDaemonRedactsOlderBottles upgrades a data directory written by a
// bottled from before redaction: a bottle holding a GitHub token and a
// JWT (no "redact" in its state line) and a search index built from it,
// whose files hold them. Once the daemon has run, neither the bottle nor
// any file of the index (WAL included) holds them, the marker of the
// purge is gone, and a search for the words around them still finds the
// session.
func TestDaemonRedactsOlderBottles(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "0ld0b077-1e00-4000-8000-000000000017"
	gen := fakecred.New(17)
	gh, jwt := gen.GitHub('p'), gen.JWT()
	path := transcriptIn(t, claude, "-home-dev-app", id)
	synth.Append(t, path, userRec(id, "u1", "", "OLDBOTTLE-P1 push with "+gh.Text+" please")+
		assistantRec(id, "a1", "u1", "m1", "OLDBOTTLE-A1 Pushed; the session cookie was "+jwt.Text+" then"))
	writeOldBottle(t, data, id, path, gh, jwt)
	indexOldBottles(t, data, gh, jwt)

	d := startDaemon(t, claude, data)
	d.waitBottle(id, "the bottle made again by the rules in use", func(b string) bool {
		st, err := render.StateOf([]byte(b))
		return err == nil && st.Redact == redact.Builtin().ID()
	})
	bottle := d.bottle(id)
	for _, c := range []fakecred.Credential{gh, jwt} {
		if strings.Contains(bottle, c.Secret) || !strings.Contains(bottle, redact.Placeholder(c.Kind)) {
			t.Errorf("the bottle keeps the %s:\n%s", c.Kind, bottle)
		}
	}
	waitPurged(t, data, "the credentials leave the index's files", func() bool {
		return !indexHoldsAny(t, data, gh.Secret) && !indexHoldsAny(t, data, jwt.Secret)
	})
	out, code := runBottledExit(t, claude, data, "", "search", "--all", "OLDBOTTLE-P1")
	if code != 0 || !strings.Contains(out, id[:8]) || strings.Contains(out, gh.Secret) {
		t.Errorf("search after the upgrade: exit %d\n%s", code, out)
	}
	st, err := d.status()
	if err != nil || st.Redaction.Rules != redact.Builtin().ID() || st.Redaction.Error != "" {
		t.Errorf("status says redaction %+v (err %v)", st.Redaction, err)
	}
}

// TestDaemonBadPatternsFile starts the daemon with a patterns file one of
// whose lines is no regular expression: it goes on with the built-in rules
// and the file's good pattern, says so in its log and in status, and
// bottles are redacted by them.
func TestDaemonBadPatternsFile(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	file := "# ours\nAcme token: acme_[0-9a-f]{32}\nBroken: acme_[\n"
	if err := os.WriteFile(bottles.RulesFile(data), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	const id = "bad0p477-e200-4000-8000-000000000017"
	gen := fakecred.New(18)
	gh, acme := gen.GitHub('o'), "acme_"+gen.Str(fakecred.Hex, 32)
	path := transcriptIn(t, claude, "-home-dev-app", id)
	synth.Append(t, path, userRec(id, "u1", "", "BADFILE-P1 use "+gh.Text+" and "+acme)+
		assistantRec(id, "a1", "u1", "m1", "BADFILE-A1 Done."))
	d := startDaemon(t, claude, data)
	bottle := d.waitContains(id, "BADFILE-A1 Done.")
	if strings.Contains(bottle, gh.Secret) || strings.Contains(bottle, acme) || !strings.Contains(bottle, "[redacted: Acme token]") {
		t.Errorf("the bottle is not redacted by the built-in rules and the good pattern:\n%s", bottle)
	}
	st, err := d.status()
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Redaction; r.User != 1 || !strings.Contains(r.Error, "line 3") || !strings.Contains(r.Error, "Broken") {
		t.Errorf("status says redaction %+v", r)
	}
	eventually(t, "the log names the bad line", func() bool {
		return strings.Contains(d.stderr.String(), "redaction patterns") && strings.Contains(d.stderr.String(), "line 3")
	})
}

// writeOldBottle writes the bottle of the session as a bottled from
// before redaction wrote it: the credentials as they were typed, and no
// "redact" in its state line.
func writeOldBottle(t *testing.T, data, id, path string, creds ...fakecred.Credential) {
	t.Helper()
	b, err := bottles.Open(data, nil, nil).FromDisk(context.Background(), bottles.Request{SessionID: id, Transcript: path})
	if err != nil {
		t.Fatal(err)
	}
	old := b.Bytes
	for _, c := range creds {
		if old, err = fakecred.Unredacted(old, c); err != nil {
			t.Fatal(err)
		}
	}
	dir := bottles.BottlesDir(data)
	if err := safefile.MkdirPrivate(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bottles.BottlePath(dir, id), old, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range creds {
		if !strings.Contains(string(old), c.Secret) {
			t.Fatalf("the old bottle lacks the %s", c.Kind)
		}
	}
}

// indexOldBottles builds the search index from the bottles in data, and
// fails the test unless its files hold every credential: a test of their
// purge could not tell otherwise.
func indexOldBottles(t *testing.T, data string, creds ...fakecred.Credential) {
	t.Helper()
	ix, err := index.Open(context.Background(), data, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	for _, c := range creds {
		if !indexHoldsAny(t, data, c.Secret) {
			t.Fatalf("the index built from the old bottles does not hold the %s: the test cannot tell", c.Kind)
		}
	}
}

// indexHoldsAny reports whether a file of the index directory holds the
// secret, or a telling part of it as the tokenizer keeps it: any 16 bytes
// of it, as they are or folded to lower case.
func indexHoldsAny(t *testing.T, dataDir, secret string) bool {
	t.Helper()
	dir := index.Dir(dataDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	const telling = 16
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		raw, low := string(b), strings.ToLower(string(b))
		for i := 0; i+telling <= len(secret); i++ {
			w := secret[i : i+telling]
			if strings.Contains(raw, w) || strings.Contains(low, strings.ToLower(w)) {
				return true
			}
		}
	}
	return false
}

// TestDaemonRedactsBottlesItCannotRender upgrades a data directory whose
// bottles from before redaction no source can make again: the archived
// bottle of a cleared session and the bottle of a session whose
// transcript Claude Code deleted. The daemon redacts both in place; no
// file of the index holds their tokens once it has run.
func TestDaemonRedactsBottlesItCannotRender(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	gen := fakecred.New(19)
	cleared, gone := gen.GitHub('u'), gen.SlackBot()
	const clearedID, goneID = "c1ea0ed0-0000-4000-8000-000000000017", "9043e000-0000-4000-8000-000000000017"
	for _, s := range []struct {
		id   string
		cred fakecred.Credential
	}{{clearedID, cleared}, {goneID, gone}} {
		path := transcriptIn(t, claude, "-home-dev-app", s.id)
		synth.Append(t, path, userRec(s.id, "u1", "", "UNRENDERABLE-P1 use "+s.cred.Text+" here")+
			assistantRec(s.id, "a1", "u1", "m1", "UNRENDERABLE-A1 Done."))
		writeOldBottle(t, data, s.id, path, s.cred)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	store := bottles.Open(data, time.Now, nil)
	archived, err := store.Archive(clearedID)
	if err != nil || archived == "" {
		t.Fatalf("archive: %q, %v", archived, err)
	}
	indexOldBottles(t, data, cleared, gone)

	startDaemon(t, claude, data)
	for path, c := range map[string]fakecred.Credential{archived: cleared, store.Path(goneID): gone} {
		eventually(t, "the bottle "+filepath.Base(path)+" is redacted", func() bool {
			b, err := os.ReadFile(path)
			return err == nil && !strings.Contains(string(b), c.Secret) && strings.Contains(string(b), redact.Placeholder(c.Kind)) &&
				strings.Contains(string(b), "UNRENDERABLE-A1 Done.")
		})
	}
	eventually(t, "the tokens leave the index's files", func() bool {
		return !indexHoldsAny(t, data, cleared.Secret) && !indexHoldsAny(t, data, gone.Secret)
	})
	if out, code := runBottledExit(t, claude, data, "", "search", "--all", "--archived", "UNRENDERABLE-P1"); code != 0 ||
		!strings.Contains(out, clearedID[:8]) || !strings.Contains(out, goneID[:8]) {
		t.Errorf("search after the upgrade: exit %d\n%s", code, out)
	}
}

// TestDaemonFollowsPatternsFile adds a pattern to the patterns file while
// the daemon runs: at its next rescan it renders the bottle that holds
// such a token again, and the index forgets the token.
func TestDaemonFollowsPatternsFile(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const id = "ad0be000-0000-4000-8000-000000000017"
	acme := "acme_" + fakecred.New(20).Str(fakecred.Hex, 32)
	firstTurn(t, claude, "-home-dev-app", id, "FOLLOWRULES-P1 log in with "+acme, "FOLLOWRULES-A1 In.")
	// The rescan checks the bottle against the new patterns once its
	// transcript has been quiet for 100 ms.
	d := startDaemon(t, claude, data, "--check-quiet", "100ms")
	d.waitContains(id, acme)
	eventually(t, "the index holds the token", func() bool { return indexHoldsAny(t, data, acme) })

	if err := os.WriteFile(bottles.RulesFile(data), []byte("Acme token: acme_[0-9a-f]{32}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.waitBottle(id, "the token redacted", func(b string) bool {
		return !strings.Contains(b, acme) && strings.Contains(b, "FOLLOWRULES-P1 log in with [redacted: Acme token]")
	})
	eventually(t, "the token leaves the index's files", func() bool { return !indexHoldsAny(t, data, acme) })
	eventually(t, "status names the pattern", func() bool {
		st, err := d.status()
		return err == nil && st.Redaction.User == 1 && st.Redaction.Rules != redact.Builtin().ID()
	})
}
