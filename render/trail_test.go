package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bottled-dev/bottled/internal/fakecred"
	"github.com/bottled-dev/bottled/redact"
	"github.com/bottled-dev/bottled/sources"
)

// TestTrailRedacts writes every kind of credential into every argument
// the trail shows (a command, at its start and where the trail clips it;
// a file written, a URL fetched, a task's description, a search pattern,
// a tool's name): no part of the secret long enough to be telling may
// reach the bottle, and the placeholder names its kind.
func TestTrailRedacts(t *testing.T) {
	gen := fakecred.New(29)
	lead := strings.Repeat("word ", commandMax/5-2)
	for _, c := range gen.Every() {
		t.Run(c.Kind+"/"+c.Text[:min(12, len(c.Text))], func(t *testing.T) {
			deeds := []sources.Deed{
				{Kind: sources.DeedCommand, Tool: "Bash", Target: "export TOKEN=" + c.Text + " && ./deploy"},
				{Kind: sources.DeedCommand, Tool: "Bash", Target: lead + c.Text},
				{Kind: sources.DeedWrite, Tool: "Write", Target: "/home/u/app/" + c.Text + ".env", Created: true},
				{Kind: sources.DeedFetch, Tool: "WebFetch", Target: "https://example.com/?k=" + c.Text},
				{Kind: sources.DeedTask, Tool: "Task", Target: "use " + c.Text, Agent: c.Text},
				{Kind: sources.DeedSearch, Tool: "Grep", Target: c.Text},
				{Kind: sources.DeedOther, Tool: c.Text},
			}
			bottle, trail := renderDeeds(t, deeds)
			checkRedacted(t, "trail", bottle, c, "")
			if n := strings.Count("\n"+trail, "\n- "); n != len(deeds) {
				t.Errorf("%d trail lines, want %d:\n%s", n, len(deeds), bottle)
			}
		})
	}
}

// renderDeeds renders a session in which the assistant did deeds, and
// returns the bottle and its trail.
func renderDeeds(t *testing.T, deeds []sources.Deed) (bottle, trail string) {
	t.Helper()
	in := Input{SessionID: "s", Now: goldenNow, Spine: &sources.Spine{SessionID: "s", CWD: "/home/u/app", Entries: []sources.Entry{
		{Kind: sources.EntryUser, Time: redactAt(0), Text: "deploy it"},
		{Kind: sources.EntryAssistant, Time: redactAt(1), Text: "Deploying.", Deeds: deeds},
	}}}
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	_, trail, _ = strings.Cut(string(b.Bytes), "\n"+trailHeading+"\n")
	return string(b.Bytes), trail
}

// TestTrailLines checks how runs of deeds fold into trail lines: what
// makes a run, the counts of a run's failures and line changes, and how
// a path is shown.
func TestTrailLines(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467" // one character of five code points
	long := "/w/" + strings.Repeat("d/", pathMax) + "f.go"
	for _, c := range []struct {
		name    string
		project string
		deeds   []sources.Deed
		want    []string
	}{
		{"each write of a file is its own line", "/w", []sources.Deed{
			{Kind: sources.DeedWrite, Tool: "Write", Target: "/w/a.go", Created: true, Lines: true, Added: 1},
			{Kind: sources.DeedWrite, Tool: "Write", Target: "/w/a.go", Lines: true, Added: 2},
		}, []string{"created a.go (+1)", "wrote a.go (2 lines)"}},
		{"edits of one file make one line", "/w", []sources.Deed{
			{Kind: sources.DeedEdit, Tool: "Edit", Target: "/w/a.go", Lines: true, Added: 1, Removed: 2},
			{Kind: sources.DeedEdit, Tool: "Edit", Target: "/w/a.go", Lines: true, Added: 3, Failed: true},
		}, []string{"edited a.go ×2 (+1 −2) — 1 failed"}},
		{"a repeated command, some failed", "/w", []sources.Deed{
			{Kind: sources.DeedCommand, Tool: "Bash", Target: "go test"},
			{Kind: sources.DeedCommand, Tool: "Bash", Target: "go test", Failed: true},
			{Kind: sources.DeedCommand, Tool: "Bash", Target: "go test", Failed: true},
		}, []string{"ran `go test` ×3 — 2 failed"}},
		{"a repeated command, all failed", "/w", []sources.Deed{
			{Kind: sources.DeedCommand, Tool: "Bash", Target: "make", Failed: true},
			{Kind: sources.DeedCommand, Tool: "Bash", Target: "make", Failed: true},
		}, []string{"ran `make` ×2 — failed"}},
		{"reads and searches fold", "/w", []sources.Deed{
			{Kind: sources.DeedRead, Tool: "Read", Target: "/w/a.go"},
			{Kind: sources.DeedSearch, Tool: "Grep", Target: "func main"},
			{Kind: sources.DeedRead, Tool: "Read", Target: "/w/a.go"},
		}, []string{"read a.go; searched `func main`"}},
		{"searches are counted", "/w", []sources.Deed{
			{Kind: sources.DeedSearch, Tool: "Grep", Target: "x"},
			{Kind: sources.DeedSearch, Tool: "Grep", Target: "x"},
		}, []string{"2 searches"}},
		{"a path keeps its end", "/elsewhere", []sources.Deed{
			{Kind: sources.DeedEdit, Tool: "Edit", Target: long},
		}, []string{"edited …" + long[len(long)-pathMax+1:]}},
		{"a command is cut between characters", "/w", []sources.Deed{
			{Kind: sources.DeedCommand, Tool: "Bash", Target: strings.Repeat("x", commandMax-2) + family + "y"},
		}, []string{"ran `" + strings.Repeat("x", commandMax-2) + "…`"}},
		{"a path is cut between characters", "/elsewhere", []sources.Deed{
			{Kind: sources.DeedEdit, Tool: "Edit", Target: "/e\u0301" + strings.Repeat("a", pathMax-2)},
		}, []string{"edited …" + strings.Repeat("a", pathMax-2)}},
		{"a session in / shows paths whole", "/", []sources.Deed{
			{Kind: sources.DeedRead, Tool: "Read", Target: "/etc/hosts"},
		}, []string{"read /etc/hosts"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &renderer{project: c.project}
			if got := r.trailLines(c.deeds); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("trail:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestTrailArgumentCutKeepsNoHead: a tool's argument is kept to its
// first KiB when the transcript is read, before redaction sees it; a
// credential that the cut would split must not leave its head in the
// bottle, where a path shows its end and a command its start once what
// comes before the credential has been redacted shorter.
func TestTrailArgumentCutKeepsNoHead(t *testing.T) {
	gen := fakecred.New(35)
	gh, jwt := gen.GitHub('p'), gen.JWT()
	const cut = 1024 // sources' targetMax
	straddle := func(lead string) string {
		pad := cut - 24 - len(lead) // 24 bytes of the token before the cut
		return lead + strings.Repeat("d/", pad/2) + strings.Repeat("e", pad%2) + gh.Text
	}
	path := straddle("/home/u/app/")
	jwtLead := "echo " + jwt.Text + strings.Repeat("x", cut-len(jwt.Text)-len("echo ")-40) + " ; "
	command := jwtLead + strings.Repeat("y", cut-24-len(jwtLead)-1) + " " + gh.Text + " done"
	for name, tool := range map[string]map[string]any{
		"path":    {"name": "Write", "input": map[string]any{"file_path": path, "content": "x\n"}},
		"command": {"name": "Bash", "input": map[string]any{"command": command}},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			tool["type"], tool["id"] = "tool_use", "toolu_01"
			lines := []map[string]any{
				{"type": "user", "uuid": "u1", "parentUuid": nil, "sessionId": "s", "timestamp": "2026-11-30T10:00:00Z",
					"message": map[string]any{"role": "user", "content": "go"}},
				{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2026-11-30T10:00:01Z",
					"message": map[string]any{"id": "msg_1", "role": "assistant", "model": "claude-opus-4-7", "content": []any{tool}}},
			}
			var b strings.Builder
			for _, l := range lines {
				j, err := json.Marshal(l)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(j, '\n'))
			}
			if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			bottle := string(renderSpine(t, spineOf(t, file)).Bytes)
			if !strings.Contains(bottle, "\n"+trailHeading+"\n") {
				t.Fatalf("no trail:\n%s", bottle)
			}
			if head := gh.Secret[:12]; strings.Contains(bottle, head) {
				t.Errorf("the head %q of the token the cut split is in the bottle:\n%s", head, bottle)
			}
		})
	}
}

// TestTrailClipsNoHalfPlaceholder: where the trail clips a command at
// its end or a path at its start, a placeholder in the way is shown
// whole or not at all, never half of one.
func TestTrailClipsNoHalfPlaceholder(t *testing.T) {
	gh := fakecred.New(36).GitHub('p')
	P := redact.Placeholder(gh.Kind)
	for shift := range len(P) {
		lead := strings.Repeat("w", commandMax-len(P)+shift)
		deeds := []sources.Deed{
			{Kind: sources.DeedCommand, Tool: "Bash", Target: lead + " " + gh.Text + " done"},
			{Kind: sources.DeedWrite, Tool: "Write", Target: "/tmp/" + gh.Text + "/" + strings.Repeat("d", pathMax-len(P)+shift) + ".env"},
		}
		_, trail := renderDeeds(t, deeds)
		for _, line := range strings.Split(trail, "\n") {
			if whole := strings.Count(line, P); strings.Count(line, "redacted") != whole || strings.Count(line, "token]") != whole {
				t.Errorf("shift %d: half a placeholder in %q", shift, line)
			}
		}
	}
}
