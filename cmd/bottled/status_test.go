package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/watch"
)

func TestStatusFromDisk(t *testing.T) {
	e := newEnv(t, true)
	flags := []string{"--claude-dir", e.claude, "--data-dir", e.data}
	proj := filepath.Join(e.claude, "projects", "-home-dev-app")
	// fresh: sessionID rendered; stale: rendered then appended; missing:
	// never rendered; cleared: rendered, then archived by /clear.
	const stale, missing, cleared = "5a5a5a5a-0000-4000-8000-000000000001", "5a5a5a5a-0000-4000-8000-000000000002", "5a5a5a5a-0000-4000-8000-000000000003"
	for _, id := range []string{stale, missing, cleared} {
		os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(strings.ReplaceAll(transcript, sessionID, id)), 0o600)
	}
	// A record type this bottled does not know: the bottle records it, status shows it.
	f, _ := os.OpenFile(filepath.Join(proj, sessionID+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"quantum-checkpoint","sessionId":"` + sessionID + `"}` + "\n")
	f.Close()
	for _, id := range []string{sessionID, stale, cleared} {
		if code, _, errOut := bottled(t, nil, append(flags, "render", id)...); code != 0 {
			t.Fatal(errOut)
		}
	}
	end := strings.NewReader(`{"session_id":"` + cleared + `","hook_event_name":"SessionEnd","reason":"clear"}`)
	var hookOut, hookErr bytes.Buffer
	if code := run(context.Background(), append(append([]string{"bottled"}, flags...), "hook", "session-end"), end, &hookOut, &hookErr); code != 0 {
		t.Fatal(hookErr.String())
	}
	f, _ = os.OpenFile(filepath.Join(proj, stale+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"parentUuid":"a1","type":"user","message":{"role":"user","content":"STATUS new prompt"},"uuid":"u9","timestamp":"2026-05-01T11:00:00.000Z"}` + "\n")
	f.Close()
	os.WriteFile(filepath.Join(e.data, "bottles", "0rphan00-0000-4000-8000-000000000000.md"), []byte("x"), 0o600)
	// claude-mem's observer runs sessions of its own in <data-dir>/observer-sessions: counted apart.
	observer := filepath.Join(e.claude, "projects", sources.ProjectKey(sources.ObserverDir(e.data)))
	os.MkdirAll(observer, 0o700)
	os.WriteFile(filepath.Join(observer, "0b5e7a1c-0000-4000-8000-000000000003.jsonl"), []byte(strings.ReplaceAll(transcript, sessionID, "0b5e7a1c-0000-4000-8000-000000000003")), 0o600)

	code, out, errOut := bottled(t, nil, append(flags, "status", "--json")...)
	if code != 0 {
		t.Fatalf("status --json: code %d, stderr %q", code, errOut)
	}
	var rep struct {
		Daemon      *json.RawMessage `json:"daemon"`
		DaemonError string           `json:"daemonError"`
		Disk        struct {
			Transcripts, Fresh, Stale, Missing, Orphans, Archived, Observer int
			Sessions                                                        []struct {
				Session, Freshness string
				Unknown            *struct{ RecordTypes map[string]int }
			}
		} `json:"disk"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, out)
	}
	d := rep.Disk
	if rep.Daemon != nil || !strings.Contains(rep.DaemonError, "no bottled daemon") {
		t.Errorf("daemon = %v, error %q; want null and a reason", rep.Daemon, rep.DaemonError)
	}
	if d.Transcripts != 4 || d.Fresh != 1 || d.Stale != 1 || d.Missing != 1 || d.Archived != 1 || d.Orphans != 1 || d.Observer != 1 || len(d.Sessions) != 4 {
		t.Errorf("disk = %+v", d)
	}
	for _, s := range d.Sessions {
		if s.Session == cleared && s.Freshness != "archived" {
			t.Errorf("the cleared session is %q, want archived", s.Freshness)
		}
	}

	for _, s := range d.Sessions {
		if got := s.Unknown != nil && s.Unknown.RecordTypes["quantum-checkpoint"] == 1; got != (s.Session == sessionID) {
			t.Errorf("session %s: unknown = %+v", s.Session, s.Unknown)
		}
	}

	code, out, _ = bottled(t, nil, append(flags, "status")...)
	for _, want := range []string{"not running", "1 fresh · 1 stale · 1 missing · 1 cleared and archived (of 4 transcripts)", "1 observer session (claude-mem's own, not bottled)", missing, "missing (no bottle)", "archived (cleared)", "stale (new messages in the transcript)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

func TestStatusWithDaemon(t *testing.T) {
	e := newEnv(t, true)
	flags := []string{"--claude-dir", e.claude, "--data-dir", e.data}
	// The daemon runs in-process through its package, with a debounce
	// short enough for the test.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- watch.New(watch.Config{ClaudeDir: e.claude, DataDir: e.data, Debounce: 20 * time.Millisecond}).Run(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}()
	var out string
	deadline := time.Now().Add(10 * time.Second)
	for {
		var code int
		code, out, _ = bottled(t, nil, append(flags, "status")...)
		if code == 0 && strings.Contains(out, "daemon    running") && strings.Contains(out, "1 fresh") && strings.Contains(out, "search    index ready") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the running daemon, a fresh bottle and the search index ready:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"pid", "watching", "projects/ (watched)", "1 projects · 1 transcripts", "renders"} {
		if want == "projects/ (watched)" {
			want = filepath.Join(e.claude, "projects") + " (watched)"
		}
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

func TestSearchLine(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)
	cases := []struct {
		s    watch.Search
		want string
	}{
		{watch.Search{}, "index not opened yet"},
		{watch.Search{State: watch.SearchReady, Since: now}, "index ready"},
		{watch.Search{State: watch.SearchOpening, Since: now.Add(-time.Minute)},
			"index being built or brought up to date since 2026-12-01 09:59 (searches answer from the newest sessions indexed so far)"},
		{watch.Search{State: watch.SearchOpening, Since: now, Done: 512e6, Total: 1090e6},
			"index being built or brought up to date since 2026-12-01 10:00: 512 of 1090 MB of bottles (searches answer from the newest sessions indexed so far)"},
		{watch.Search{State: watch.SearchUnavailable, Since: now.Add(-time.Hour), Error: "disk full", Retry: now.Add(90 * time.Second)},
			"index unavailable since 2026-12-01 09:00: disk full · next try in 1m (bottles are written as usual)"},
		{watch.Search{State: watch.SearchUnavailable, Since: now, Error: "disk full", Retry: now.Add(-time.Second)},
			"index unavailable since 2026-12-01 10:00: disk full · next try in 0s (bottles are written as usual)"},
	}
	for _, c := range cases {
		if got := searchLine(c.s, now); got != c.want {
			t.Errorf("searchLine(%+v)\n got %q\nwant %q", c.s, got, c.want)
		}
	}
}

// TestDaemonProblem: without a daemon status, the daemon line says whether
// none runs, or one runs (its pid) but is too busy to answer or did not
// answer: a running daemon is never said not to run.
func TestDaemonProblem(t *testing.T) {
	for _, tc := range []struct {
		err  error
		pid  int
		want string
	}{
		{fmt.Errorf("%w for /d", watch.ErrNotRunning), 0, "not running (no bottled daemon is running for /d)"},
		{fmt.Errorf("%w: try again", watch.ErrBusy), 42, "running (pid 42) but too busy to answer status (the bottled daemon is too busy to answer status: try again)"},
		{fmt.Errorf("read daemon status: %w", os.ErrDeadlineExceeded), 42, "running (pid 42) but did not answer status (read daemon status: i/o timeout)"},
		{fmt.Errorf("%w for /d", watch.ErrNotRunning), 42, "running (pid 42) but its socket is gone (it makes it again within a second)"},
	} {
		rep := &statusReport{DaemonError: tc.err.Error(), daemonErr: tc.err, daemonPID: tc.pid}
		if got := daemonProblem(rep); got != tc.want {
			t.Errorf("%v, pid %d:\n got %s\nwant %s", tc.err, tc.pid, got, tc.want)
		}
	}
}
