package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
)

func (e *listEnv) bottle(t *testing.T, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.data, "bottles", id+".md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// archived is the archived bottle of id, and its path.
func (e *listEnv) archived(t *testing.T, id string) (string, string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(e.data, "bottles", "archive", "*-"+id+".*md"))
	if len(paths) != 1 {
		t.Fatalf("%d archived bottles of %s", len(paths), id)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data), paths[0]
}

// addTurn appends a turn to a session's transcript: its bottle is stale.
func (e *listEnv) addTurn(t *testing.T, id, project, text string) {
	t.Helper()
	at := listBase.Add(6 * time.Hour)
	growfile.Append(t, e.transcriptPath(id, project), synth.Rec{Session: id, UUID: "u-" + text, Parent: "", At: at, CWD: project}.User(text))
}

func TestShowCommand(t *testing.T) {
	e := newListEnv(t)
	whole := e.bottle(t, appNew)
	lines := strings.SplitAfter(whole, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string   // exactly
		stderr []string // substrings; none: stderr is empty
	}{
		{name: "whole id", args: []string{"show", appNew}, stdout: whole},
		{name: "a start of the id", args: []string{"show", "a0a0a0a0-22"}, stdout: whole},
		{name: "a start in upper case", args: []string{"show", "A0A0A0A0-22"}, stdout: whole},
		{name: "flags after the id", args: []string{"show", "a0a0a0a0-2222", "--from", "2", "--to=3"}, stdout: lines[1] + lines[2]},
		{name: "one line", args: []string{"show", "--from", "5", "--to", "5", appNew}, stdout: lines[4]},
		{name: "from a line to the end", args: []string{"show", "--from", "3", appNew}, stdout: strings.Join(lines[2:], "")},
		{name: "to a line", args: []string{"show", "--to", "2", appNew}, stdout: lines[0] + lines[1]},
		{name: "--to past the end reads to the end", args: []string{"show", "--from", strconv.Itoa(n), "--to", strconv.Itoa(n + 50), appNew}, stdout: lines[n-1]},
		{name: "--from past the end", args: []string{"show", "--from", strconv.Itoa(n + 1), appNew}, code: exitUsage,
			stderr: []string{"--from " + strconv.Itoa(n+1) + " is past the end of the bottle of " + appNew + " (" + strconv.Itoa(n) + " lines)"}},
		{name: "--to before --from", args: []string{"show", "--from", "4", "--to", "3", appNew}, code: exitUsage,
			stderr: []string{"--to 3 is before --from 4"}},
		{name: "a negative line", args: []string{"show", "--from", "-2", appNew}, code: exitUsage, stderr: []string{"--from must be a line number, 1 or more"}},
		{name: "no session", args: []string{"show"}, code: exitUsage, stderr: []string{"show takes exactly one SESSION (got 0 arguments)"}},
		{name: "two sessions", args: []string{"show", appNew, appOld}, code: exitUsage, stderr: []string{"show takes exactly one SESSION (got 2 arguments)"}},
		{name: "a hostile id", args: []string{"show", "../../etc/passwd"}, code: exitUsage, stderr: []string{"invalid session id"}},
		{name: "nothing to show", args: []string{"show", "c0ffee00-0000-4000-8000-000000000000"}, code: exitFailed,
			stderr: []string{"no bottle for session c0ffee00-0000-4000-8000-000000000000", "no transcript"}},
		{name: "too short a start", args: []string{"show", "a0a0"}, code: exitFailed,
			stderr: []string{"no bottle for session a0a0", "give at least 6 characters"}},
		{name: "an ambiguous start", args: []string{"show", "a0a0a0a0"}, code: exitUsage,
			stderr: []string{`bottled: "a0a0a0a0" names 3 sessions; give more of the id:`,
				appClear + "  " + listBase.Add(4*time.Hour+3*time.Minute).Format("2006-01-02 15:04") + "  (cleared)  LIST-CLEARED this was cleared\n",
				appNew + "  " + listBase.Add(2*time.Hour+5*time.Minute).Format("2006-01-02 15:04") + "             LIST-NEW add a retry budget",
				appOld + "  " + listBase.Add(time.Minute).Format("2006-01-02 15:04") + "             LIST-OLD fix the parser\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := e.run(t, tc.args...)
			if code != tc.code || out != tc.stdout {
				t.Errorf("exit %d, want %d; stdout\n%q\nwant\n%q\nstderr %q", code, tc.code, out, tc.stdout, errOut)
			}
			if len(tc.stderr) == 0 && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}
}

// TestShowRendersFirst: a stale bottle is rendered before it is shown; a
// cleared session's bottle is shown as it is, saying so; a render that
// takes too long shows the bottle as it was, saying so.
func TestShowRendersFirst(t *testing.T) {
	e := newListEnv(t)
	e.addTurn(t, appNew, e.app, "SHOW-STALE a turn the bottle lacks")
	code, out, errOut := e.run(t, "show", appNew)
	if code != 0 || errOut != "" || !strings.Contains(out, "SHOW-STALE") || out != e.bottle(t, appNew) {
		t.Errorf("a stale bottle: code %d, stderr %q, stdout has the new turn: %v, is the bottle on disk: %v",
			code, errOut, strings.Contains(out, "SHOW-STALE"), out == e.bottle(t, appNew))
	}

	arch, path := e.archived(t, appClear)
	code, out, errOut = e.run(t, "show", appClear)
	if code != 0 || out != arch || !strings.Contains(errOut, "was cleared") || !strings.Contains(errOut, path) {
		t.Errorf("a cleared session: code %d, stderr %q, stdout is its archived bottle: %v", code, errOut, out == arch)
	}

	before := e.bottle(t, appOld)
	e.addTurn(t, appOld, e.app, "SHOW-SLOW a turn not rendered in time")
	code, out, errOut = e.run(t, "show", appOld, "--timeout", "1ns")
	if code != 0 || out != before || !strings.Contains(errOut, "warning: could not bring the bottle up to date") ||
		!strings.Contains(errOut, "--timeout") || !strings.Contains(errOut, "rendered at") {
		t.Errorf("a render out of time: code %d, stderr %q, stdout is the bottle as it was: %v", code, errOut, out == before)
	}
}

// TestRenderByPrefix: render takes a start of an id, of a bottle's or a
// transcript's, as show does.
func TestRenderByPrefix(t *testing.T) {
	e := newListEnv(t)
	code, out, errOut := e.run(t, "render", "b1b1b1")
	if code != 0 || !strings.Contains(out, filepath.Join(e.data, "bottles", libOnly+".md")) {
		t.Errorf("render by a start of a bottle's id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	const fresh = "d2d2d2d2-5555-4000-8000-000000000005"
	e.write(t, listSession{fresh, e.lib, "RENDER-PREFIX never rendered", listBase, 1})
	code, out, errOut = e.run(t, "render", "d2d2d2d2-55", "--stdout")
	if code != 0 || !strings.Contains(out, "RENDER-PREFIX never rendered") {
		t.Errorf("render by a start of a transcript's id: code %d, stdout %.100q, stderr %q", code, out, errOut)
	}
	code, out, errOut = e.run(t, "render", "a0a0a0a0")
	if code != exitUsage || out != "" || !strings.Contains(errOut, `"a0a0a0a0" names 3 sessions`) || !strings.Contains(errOut, appOld) {
		t.Errorf("render by an ambiguous start: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestInterrupted: a command stopped by Ctrl-C (its context cancelled)
// exits 130 and says what it stopped and what was kept, never "context
// canceled".
func TestInterrupted(t *testing.T) {
	e := newListEnv(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	before := e.bottle(t, appNew)
	e.addTurn(t, appNew, e.app, "INTERRUPTED never rendered")
	code, out, errOut := e.runCtx(t, cancelled, "", "show", appNew)
	if code != 130 || out != "" || !strings.Contains(errOut, "bottled: interrupted while rendering the bottle of "+appNew) ||
		!strings.Contains(errOut, "its bottle is as it was") || e.bottle(t, appNew) != before {
		t.Errorf("show: code %d, stdout %.80q, stderr %q", code, out, errOut)
	}
	code, _, errOut = e.runCtx(t, cancelled, "", "render", appNew)
	if code != 130 || !strings.Contains(errOut, "bottled: interrupted while rendering the bottle of "+appNew) || e.bottle(t, appNew) != before {
		t.Errorf("render: code %d, stderr %q", code, errOut)
	}

	// No index yet: a search, a list or a rebuild stopped while building
	// it keeps none.
	for _, args := range [][]string{{"search", "--all", "parser"}, {"sessions", "--all"}, {"index", "--rebuild"}} {
		code, out, errOut := e.runCtx(t, cancelled, "", args...)
		if code != 130 || out != "" || !strings.Contains(errOut, "bottled: interrupted while building the search index") ||
			!strings.Contains(errOut, "there is no search index yet") || strings.Contains(errOut, "context canceled") {
			t.Errorf("%q without an index: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}

	// With an index: a rebuild stopped keeps the one there was.
	if code, _, errOut := e.run(t, "index"); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = e.runCtx(t, cancelled, "", "index", "--rebuild")
	if code != 130 || out != "" || !strings.Contains(errOut, "bottled: interrupted while building the search index") ||
		!strings.Contains(errOut, "the index in use is the one from before: 4 bottles of 4 sessions") {
		t.Errorf("index --rebuild: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := e.run(t, "search", "--all", "parser"); code != 0 || !strings.Contains(out, appOld) {
		t.Errorf("search after the interrupted rebuild: code %d\n%s", code, out)
	}
}
