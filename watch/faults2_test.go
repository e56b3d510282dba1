package watch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/watch"
)

// More faults, found by a second campaign against the daemon, the hooks and
// the CLI: each test drives the real binary on real files.

// runBottledExit runs bottled and returns its combined output and exit
// code, for commands whose failure is what a test looks at.
func runBottledExit(t *testing.T, claude, data, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--claude-dir", claude, "--data-dir", data}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("bottled %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// diskSurvey is `bottled status --json`'s survey of the bottles.
func diskSurvey(t *testing.T, claude, data string) watch.Survey {
	t.Helper()
	out, err := exec.Command(binary, "--claude-dir", claude, "--data-dir", data, "status", "--json").Output()
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var rep struct{ Disk watch.Survey }
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return rep.Disk
}

// TestFaultLongStateLine: a bottle whose header or state line is longer
// than a read buffer (a working directory of 5 KB; a session continued
// over 18 transcripts, in a project directory with a long name) is a
// bottle like any other: the daemon renders it once, status calls it
// fresh, the hook points to it without rendering it again, and search
// finds it, after a rebuild of the index too.
func TestFaultLongStateLine(t *testing.T) {
	t.Parallel()
	claude, data := dirs(t)
	const deep = "1057a7e0-0000-4000-8000-000000000001"
	cwd := "/home/dev/" + strings.Repeat("deeper/", 720)
	deepPath := transcriptIn(t, claude, "-home-dev-deep", deep)
	appendFile(t, deepPath, synth.Rec{Session: deep, UUID: "u1", At: time.Now(), CWD: cwd}.User("LONGSTATE-DEEP where am I")+
		assistantRec(deep, "a1", "u1", "m1", "LONGSTATE-DEEP-A very deep"))
	project := "-home-dev-" + strings.Repeat("a-long-project-name-", 11)
	var chain []string
	for i := range 18 {
		chain = append(chain, fmt.Sprintf("1057a7e0-0000-4000-8000-%012d", 100+i))
	}
	for i, id := range chain {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		recs := userRec(id, u, "", fmt.Sprintf("LONGSTATE-CHAIN-P%d go on", i)) + assistantRec(id, a, u, "m"+a, fmt.Sprintf("LONGSTATE-CHAIN-A%d", i))
		if i+1 < len(chain) {
			recs += `{"type":"continued-in","sessionId":"` + id + `","continuedInSessionId":"` + chain[i+1] + `"}` + "\n"
		}
		appendFile(t, transcriptIn(t, claude, project, id), recs)
	}
	last := chain[len(chain)-1]

	d := startDaemon(t, claude, data)
	d.waitContains(deep, "LONGSTATE-DEEP-A very deep")
	d.waitContains(last, "LONGSTATE-CHAIN-P0 go on", "LONGSTATE-CHAIN-A17")
	for _, id := range []string{deep, last} {
		d.waitSettled(id, time.Time{})
	}
	eventually(t, "the daemon calls every bottle fresh", func() bool {
		st, err := d.status()
		return err == nil && st.Bottles != nil && st.Bottles.Transcripts == 19 && st.Bottles.Fresh == 19
	})
	if code := d.stop(10 * time.Second); code != 0 {
		t.Fatalf("daemon exit code %d", code)
	}
	sv := diskSurvey(t, claude, data)
	if sv.Fresh != 19 {
		t.Errorf("status on disk: %d of %d fresh, %d missing", sv.Fresh, sv.Transcripts, sv.Missing)
	}

	before := (&daemon{t: t, data: data}).bottle(deep)
	out := runBottled(t, claude, data, `{"session_id":"`+deep+`","transcript_path":"`+deepPath+`","source":"compact"}`, "hook", "session-start")
	if !strings.Contains(out, deep+".md") {
		t.Errorf("the hook gave no pointer: %s", out)
	}
	if after := (&daemon{t: t, data: data}).bottle(deep); after != before {
		t.Error("the hook rendered a fresh bottle again")
	}

	for _, rebuild := range []bool{false, true} {
		if rebuild {
			runBottled(t, claude, data, "", "index", "--rebuild")
		}
		for _, word := range []string{"LONGSTATE-DEEP-A", "LONGSTATE-CHAIN-A17"} {
			if out, code := runBottledExit(t, claude, data, "", "search", "--all", word); code != 0 {
				t.Errorf("search %s (rebuilt %v): exit %d\n%s", word, rebuild, code, out)
			}
		}
	}
}
