package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/bottles"
	"github.com/bottled-dev/bottled/index"
	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/internal/memwriter"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// TestCredentialsNeverLeave writes every kind of credential bottled
// redacts into a session's prompts, the assistant's texts and claude-mem's
// observations (written by the real claude-mem), beside look-alikes that
// are no credential. Whatever reads the session (the MCP read tool, which
// renders the bottle; the MCP search and sessions tools; `bottled show`
// and `bottled search`) never gets a telling part of a credential, and
// neither the bottle nor any file of the search index holds one; the
// look-alikes come out unchanged.
func TestCredentialsNeverLeave(t *testing.T) {
	w := memwriter.Require(t)
	e := newEnv(t, "", "/home/dev/app")
	const id = "c4ed0000-0000-4000-8000-000000000017"
	gen := fakecred.New(42)
	creds, looks := gen.Every(), gen.Lookalikes()
	tr := newTranscript(t, e.claude, id)
	db := sources.ClaudeMemFile(e.data)
	ops := []memwriter.Op{{"op": "session", "content": id, "project": "app", "prompt": "CREDLOOK look-alikes"},
		{"op": "register", "content": id, "memory": "mem-" + id}}
	tr.turn("CREDLOOK look-alikes\n"+strings.Join(looks, "\n"), "CREDLOOKA and again\n"+strings.Join(looks, "\n"))
	for i, c := range creds {
		tr.turn(fmt.Sprintf("CREDP%02d use %s now", i, c.Text), fmt.Sprintf("CREDA%02d I used %s there", i, c.Text))
		ops = append(ops, memwriter.Op{"op": "prompt", "content": id, "number": i + 2, "text": fmt.Sprintf("CREDP%02d use %s now", i, c.Text)},
			memwriter.Op{"op": "observation", "content": id, "prompt_number": i + 2, "type": "change",
				"title": fmt.Sprintf("CREDO%02d set %s", i, c.Text), "narrative": c.Text + " was set. Then more."})
	}
	tr.write()
	w.Write(t, db, ops...)

	got := map[string]string{"bottle read by MCP": e.readAll(t, id)}
	for i := range creds {
		for _, word := range []string{"CREDP%02d", "CREDA%02d", "CREDO%02d"} {
			q := fmt.Sprintf(word, i)
			got["MCP search "+q] = e.ok(t, "search", map[string]any{"query": q, "all": true})
		}
	}
	got["MCP sessions"] = e.ok(t, "sessions", map[string]any{"all": true})
	bin := bottledBinary(t)
	got["bottled show"] = runCLI(t, bin, e, "show", id)
	for i := range creds {
		q := fmt.Sprintf("CREDP%02d", i)
		got["bottled search "+q] = runCLI(t, bin, e, "search", "--all", q)
	}
	got["bottled search --json CREDO00"] = runCLI(t, bin, e, "search", "--all", "--json", "CREDO00")
	for name, path := range filesUnder(t, bottles.BottlesDir(e.data), index.Dir(e.data)) {
		got["file "+name] = path
	}
	checkNoCredential(t, got, creds)

	bottle := got["bottle read by MCP"]
	for _, c := range creds {
		if !strings.Contains(bottle, redact.Placeholder(c.Kind)) {
			t.Errorf("the bottle does not say a %s was there", c.Kind)
		}
	}
	for _, l := range looks {
		if strings.Count(bottle, l) < 2 {
			t.Errorf("look-alike %q is not in the bottle twice (prompt and answer)", l)
		}
	}
	for i := range creds {
		for _, word := range []string{"CREDP%02d", "CREDA%02d", "CREDO%02d"} {
			if q := fmt.Sprintf(word, i); !strings.Contains(got["MCP search "+q], id[:8]) {
				t.Errorf("MCP search %s finds nothing:\n%s", q, got["MCP search "+q])
			}
		}
	}
}

// TestCredentialsInDeedsNeverLeave writes credentials into what the
// assistant did: a Bash command (an exported key, a curl with an
// Authorization header) and a written .env file, which the bottle's
// trail of deeds shows: no reader, and no file of the bottles or the
// index, holds them.
func TestCredentialsInDeedsNeverLeave(t *testing.T) {
	e := newEnv(t, "", "/home/dev/app")
	const id = "dee0d000-0000-4000-8000-000000000017"
	gen := fakecred.New(43)
	openai, bearer, gh, aws := gen.OpenAIProject(), gen.Bearer(), gen.GitHub('p'), gen.AWSSecret()
	creds := []fakecred.Credential{openai, bearer, gh, aws}
	tr := newTranscript(t, e.claude, id)
	tr.turn("CREDDEED set up the deploy", "CREDDEEDA Done.",
		toolUse("Bash", map[string]any{"command": "export OPENAI_API_KEY=" + openai.Text + " && curl -H '" + bearer.Text + "' https://api.example.com/v1"}),
		toolUse("Write", map[string]any{"file_path": "/home/dev/app/.env", "content": "GITHUB_TOKEN=" + gh.Text + "\n" + aws.Text + "\n"}))
	tr.write()
	got := map[string]string{"bottle read by MCP": e.readAll(t, id)}
	got["MCP search"] = e.ok(t, "search", map[string]any{"query": "CREDDEED", "all": true})
	bin := bottledBinary(t)
	got["bottled show"] = runCLI(t, bin, e, "show", id)
	got["bottled search"] = runCLI(t, bin, e, "search", "--all", "CREDDEED")
	for name, path := range filesUnder(t, bottles.BottlesDir(e.data), index.Dir(e.data)) {
		got["file "+name] = path
	}
	checkNoCredential(t, got, creds)
	if !strings.Contains(got["bottle read by MCP"], "CREDDEEDA Done.") {
		t.Errorf("the bottle lacks the turn:\n%s", got["bottle read by MCP"])
	}
	// The deeds are in the trail, their credentials replaced: the test
	// reads what it means to read.
	for _, want := range []string{"ran `export OPENAI_API_KEY=[redacted: ", ".env"} {
		if !strings.Contains(got["bottle read by MCP"], want) {
			t.Errorf("the bottle's trail lacks %q:\n%s", want, got["bottle read by MCP"])
		}
	}
}

// checkNoCredential fails for each output that holds 16 bytes of a
// credential's secret, as they are or folded to lower case (as the index
// keeps its words).
func checkNoCredential(t *testing.T, got map[string]string, creds []fakecred.Credential) {
	t.Helper()
	const telling = 16
	for name, out := range got {
		low := strings.ToLower(out)
		for _, c := range creds {
			for i := 0; i+telling <= len(c.Secret); i++ {
				if w := c.Secret[i : i+telling]; strings.Contains(out, w) || strings.Contains(low, strings.ToLower(w)) {
					t.Errorf("%s holds %q of a %s", name, w, c.Kind)
					break
				}
			}
		}
	}
}

// readAll reads a session's whole bottle through the read tool, following
// its continuations.
func (e *env) readAll(t *testing.T, id string) string {
	t.Helper()
	var b strings.Builder
	for from := 1; from > 0; {
		body, _, _, next := chunkOf(t, e.ok(t, "read", map[string]any{"session": id, "from": from}))
		b.WriteString(body)
		from = next
	}
	return b.String()
}

// filesUnder returns every file's bytes under the directories, by path.
func filesUnder(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			out[path] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 2 {
		t.Fatalf("only %d files in %v: nothing was written", len(out), dirs)
	}
	return out
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// bottledBinary builds the bottled command once per test binary run.
func bottledBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "bottled-mcp-test-")
		if binErr == nil {
			binErr = testbin.Binaries(binDir, "github.com/bottled-dev/bottled/cmd/bottled")
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "bottled")
}

// runCLI runs bottled on the env's directories and returns its output,
// failing the test if it fails.
func runCLI(t *testing.T, bin string, e *env, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--claude-dir", e.claude, "--data-dir", e.data}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bottled %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// transcript builds a session's transcript turn by turn.
type transcript struct {
	t      *testing.T
	path   string
	id     string
	b      strings.Builder
	n      int
	parent string
	at     time.Time
}

func newTranscript(t *testing.T, claude, id string) *transcript {
	dir := filepath.Join(claude, "projects", "-home-dev-app")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &transcript{t: t, path: filepath.Join(dir, id+".jsonl"), id: id, at: testNow.Add(-24 * time.Hour)}
}

// turn adds a prompt, the assistant's tool calls (each a content block)
// and its answer.
func (tr *transcript) turn(user, said string, tools ...map[string]any) {
	rec := func() synth.Rec {
		tr.n++
		tr.at = tr.at.Add(time.Second)
		r := synth.Rec{Session: tr.id, UUID: fmt.Sprintf("r%d", tr.n), Parent: tr.parent, At: tr.at, CWD: "/home/dev/app"}
		tr.parent = r.UUID
		return r
	}
	tr.b.WriteString(rec().User(user))
	for _, tool := range tools {
		r := rec()
		line := strings.TrimSuffix(r.Assistant(fmt.Sprintf("m%d", tr.n), ""), "\n")
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tr.t.Fatal(err)
		}
		m["message"].(map[string]any)["content"] = []any{tool}
		b, err := json.Marshal(m)
		if err != nil {
			tr.t.Fatal(err)
		}
		tr.b.Write(append(b, '\n'))
	}
	tr.b.WriteString(rec().Assistant(fmt.Sprintf("m%d", tr.n), said))
}

func (tr *transcript) write() {
	if err := os.WriteFile(tr.path, []byte(tr.b.String()), 0o600); err != nil {
		tr.t.Fatal(err)
	}
}

// toolUse is a tool_use content block.
func toolUse(name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": "toolu_" + name, "name": name, "input": input}
}
