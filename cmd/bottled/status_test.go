package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/sources"
	"github.com/bottled-dev/bottled/textcut"
	"github.com/bottled-dev/bottled/watch"
)

func TestStatusFromDisk(t *testing.T) {
	e := newEnv(t, true)
	flags := e.flags()
	proj := filepath.Join(e.claude, "projects", "-home-dev-app")
	// fresh: sessionID rendered; stale: rendered then appended; missing:
	// never rendered; cleared: rendered, then archived by /clear.
	const stale, missing, cleared = "5a5a5a5a-0000-4000-8000-000000000001", "5a5a5a5a-0000-4000-8000-000000000002", "5a5a5a5a-0000-4000-8000-000000000003"
	for _, id := range []string{stale, missing, cleared} {
		os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(strings.ReplaceAll(transcript, sessionID, id)), 0o600)
	}
	// A record type this bottled does not know: the bottle records it, status shows it.
	growfile.Append(t, filepath.Join(proj, sessionID+".jsonl"), `{"type":"quantum-checkpoint","sessionId":"`+sessionID+`"}`+"\n")
	for _, id := range []string{sessionID, stale, cleared} {
		if code, _, errOut := e.run(t, "render", id); code != 0 {
			t.Fatal(errOut)
		}
	}
	end := strings.NewReader(`{"session_id":"` + cleared + `","hook_event_name":"SessionEnd","reason":"clear"}`)
	var hookOut, hookErr bytes.Buffer
	if code := run(context.Background(), append(append([]string{"bottled"}, flags...), "hook", "session-end"), end, &hookOut, &hookErr); code != 0 {
		t.Fatal(hookErr.String())
	}
	growfile.Append(t, filepath.Join(proj, stale+".jsonl"),
		`{"parentUuid":"a1","type":"user","message":{"role":"user","content":"STATUS new prompt"},"uuid":"u9","timestamp":"2026-05-01T11:00:00.000Z"}`+"\n")
	os.WriteFile(filepath.Join(e.data, "bottles", "0rphan00-0000-4000-8000-000000000000.md"), []byte("x"), 0o600)
	// claude-mem's observer runs sessions of its own in <data-dir>/observer-sessions: counted apart.
	observer := filepath.Join(e.claude, "projects", sources.ProjectKey(sources.ObserverDir(e.data)))
	os.MkdirAll(observer, 0o700)
	os.WriteFile(filepath.Join(observer, "0b5e7a1c-0000-4000-8000-000000000003.jsonl"), []byte(strings.ReplaceAll(transcript, sessionID, "0b5e7a1c-0000-4000-8000-000000000003")), 0o600)

	code, out, errOut := e.run(t, "status", "--json")
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

	code, out, _ = e.run(t, "status")
	for _, want := range []string{"not running", "1 fresh · 1 stale · 1 missing · 1 cleared and archived (of 4 transcripts)", "1 observer session (claude-mem's own, not bottled)", missing, "missing (no bottle)", "archived (cleared)", "stale (new messages in the transcript)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

func TestStatusWithDaemon(t *testing.T) {
	e := newEnv(t, true)
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
	deadline := time.Now().Add(testDeadline)
	for {
		var code int
		code, out, _ = e.run(t, "status")
		if code == 0 && strings.Contains(out, "daemon    running") && strings.Contains(out, "1 fresh") && strings.Contains(out, "search    index ready") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the running daemon, a fresh bottle and the search index ready:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"pid", "watching", "projects/ (watched)", "1 project · 1 transcript", "renders"} {
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
			"index being built or brought up to date since 2026-12-01 10:00: 512 MB of 1.1 GB of bottles (searches answer from the newest sessions indexed so far)"},
		{watch.Search{State: watch.SearchOpening, Since: now, Done: 300e3, Total: 800e3},
			"index being built or brought up to date since 2026-12-01 10:00: 300 of 800 KB of bottles (searches answer from the newest sessions indexed so far)"},
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
		{&watch.NotRunningError{Socket: "/d/bottled.sock", Why: "no socket at /d/bottled.sock"}, 0, "not running (no socket at /d/bottled.sock)"},
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

// statusJSON runs status --json (then extra) and decodes it; it fails the
// test unless status exits 0.
func statusJSON(t *testing.T, flags []string, extra ...string) (report map[string]any, raw string) {
	t.Helper()
	code, out, errOut := bottled(t, nil, append(append(flags, "status", "--json"), extra...)...)
	if code != 0 {
		t.Fatalf("status --json: code %d, stderr %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, out)
	}
	return report, out
}

// writeSession writes a transcript of session id in the project directory
// of e, modified at mod.
func writeSession(t *testing.T, e env, id, records string, mod time.Time) string {
	t.Helper()
	path := filepath.Join(e.claude, "projects", "-home-dev-app", id+".jsonl")
	if err := os.WriteFile(path, []byte(records), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStatusEmptySession puts beside a rendered session the one that
// `/clear` opens, which has had no message yet: it has nothing to render,
// so it is counted empty, not missing, by the disk survey and by the
// daemon.
func TestStatusEmptySession(t *testing.T) {
	e := newEnv(t, true)
	flags := e.flags()
	const empty = "e0e0e0e0-0000-4000-8000-000000000001"
	writeSession(t, e, empty, synth.Rec{Session: empty, At: time.Now(), CWD: "/home/dev/app"}.Cleared("c"), time.Now())
	if code, _, errOut := e.run(t, "render", sessionID); code != 0 {
		t.Fatal(errOut)
	}
	check := func(t *testing.T, source string) {
		t.Helper()
		rep, raw := statusJSON(t, flags)
		disk := rep["disk"].(map[string]any)
		if disk["source"] != source || disk["empty"] != 1.0 || disk["missing"] != 0.0 || disk["fresh"] != 1.0 || disk["transcripts"] != 2.0 {
			t.Errorf("%s: disk counts: want 2 transcripts, 1 fresh, 1 empty, 0 missing:\n%s", source, raw)
		}
		for _, s := range disk["sessions"].([]any) {
			if s := s.(map[string]any); s["session"] == empty && s["freshness"] != "empty" {
				t.Errorf("%s: the empty session is %v (%v), want empty", source, s["freshness"], s["why"])
			}
		}
		_, out, _ := e.run(t, "status")
		if !strings.Contains(out, "1 fresh · 0 stale · 0 missing · 1 empty (of 2 transcripts)") || strings.Contains(out, "missing (") {
			t.Errorf("%s: status:\n%s", source, out)
		}
	}
	t.Run("disk", func(t *testing.T) { check(t, "disk") })
	t.Run("daemon", func(t *testing.T) {
		startInProcess(t, e)
		waitStatus(t, e, "the daemon's catch-up is over", func(rep map[string]any) bool {
			d, _ := rep["daemon"].(map[string]any)
			return d != nil && d["catchUp"].(map[string]any)["over"] == true
		})
		check(t, "daemon")
	})
}

// startInProcess runs the daemon on e in this process, with a debounce
// short enough for tests, and returns what stops it and waits for it
// (once; the test's end stops it too).
func startInProcess(t *testing.T, e env) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- watch.New(watch.Config{ClaudeDir: e.claude, DataDir: e.data, Debounce: 20 * time.Millisecond}).Run(ctx)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// waitStatus polls status --json until ok holds, failing after a generous
// deadline (a busy machine; nothing here measures time).
func waitStatus(t *testing.T, e env, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var last string
	for deadline := time.Now().Add(testDeadline); ; time.Sleep(20 * time.Millisecond) {
		code, out, _ := e.run(t, "status", "--json")
		var rep map[string]any
		if code == 0 && json.Unmarshal([]byte(out), &rep) == nil && ok(rep) {
			return rep
		}
		last = out
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s; last status:\n%s", testDeadline, what, last)
		}
	}
}

// testDeadline bounds the wait for a condition: generous, since a shared
// machine under load is slow, and nothing waits that long when it works.
const testDeadline = 2 * time.Minute

// TestStatusNotADirectory gives status a file where a directory should be:
// it says which, and what to do, in one line, and exits 1, instead of
// reporting every bottle unreadable.
func TestStatusNotADirectory(t *testing.T) {
	for _, tc := range []struct {
		name string
		file func(e env) string // the path made a file
		says string
	}{
		{"data dir", func(e env) string { return e.data }, "the data directory"},
		{"claude dir", func(e env) string { return e.claude }, "Claude Code's directory"},
		{"projects", func(e env) string { return filepath.Join(e.claude, "projects") }, "Claude Code's projects directory"},
		{"bottles", func(e env) string { return filepath.Join(e.data, "bottles") }, "the bottles directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, false)
			path := tc.file(e)
			os.RemoveAll(path)
			os.MkdirAll(filepath.Dir(path), 0o700)
			if err := os.WriteFile(path, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, json := range []bool{false, true} {
				args := append(e.flags(), "status")
				if json {
					args = append(args, "--json")
				}
				code, out, errOut := bottled(t, nil, args...)
				want := "bottled: " + tc.says + " " + path + " is not a directory (a file): "
				if code != 1 || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
					t.Errorf("json %v: code %d, stdout %q, stderr %q; want 1, nothing, one line starting %q", json, code, out, errOut, want)
				}
			}
		})
	}
}

// TestStatusNoDaemonFirstLine: without a daemon, status still exits 0, and
// its first line says there is none, why, that the rest is read from disk,
// and how to start one.
func TestStatusNoDaemonFirstLine(t *testing.T) {
	e := newEnv(t, true)
	code, out, _ := e.run(t, "status")
	first, _, _ := strings.Cut(out, "\n")
	flags := "--claude-dir " + e.claude + " --data-dir " + e.data
	want := "daemon    not running (no socket at " + filepath.Join(e.data, watch.SocketFile) + "): what follows is read from disk; start it with `bottled " + flags + " run` or `bottled " + flags + " install`"
	if code != 0 || first != want {
		t.Errorf("code %d, first line\n %q\nwant\n %q", code, first, want)
	}
}

// TestStatusSuggestsTheDirsGiven: the commands status suggests carry the
// directories it was given by flag or environment, quoted for the shell,
// and none that are the defaults (running one then works on the
// directories the status came from).
func TestStatusSuggestsTheDirsGiven(t *testing.T) {
	home := t.TempDir()
	claude, data := filepath.Join(home, ".claude"), filepath.Join(home, "my data's dir")
	for _, dir := range []string{filepath.Join(claude, "projects"), filepath.Join(home, ".claude-mem"), data} {
		os.MkdirAll(dir, 0o700)
	}
	quotedData := "'" + strings.ReplaceAll(data, "'", `'\''`) + "'"
	for _, tc := range []struct {
		name    string
		environ map[string]string
		args    []string
		flags   string
	}{
		{"defaults", nil, nil, ""},
		{"data dir by flag", nil, []string{"--data-dir", data}, " --data-dir " + quotedData},
		{"data dir from the environment", map[string]string{sources.DataDirEnv: data}, nil, " --data-dir " + quotedData},
		{"both by flag", nil, []string{"--claude-dir", claude, "--data-dir", data}, " --claude-dir " + claude + " --data-dir " + quotedData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			for _, v := range []string{sources.ClaudeDirEnv, sources.DataDirEnv} {
				t.Setenv(v, "")
				os.Unsetenv(v) // t.Setenv restores it
			}
			code, out, errOut := bottled(t, tc.environ, append(tc.args, "status")...)
			want := "start it with `bottled" + tc.flags + " run` or `bottled" + tc.flags + " install`"
			if first, _, _ := strings.Cut(out, "\n"); code != 0 || !strings.HasSuffix(first, want) {
				t.Errorf("code %d, stderr %q, first line\n %q\nwant it ending\n %q", code, errOut, first, want)
			}
		})
	}
}

// TestStatusListsEverySession: without a daemon, --json lists every
// session under disk.sessions, newest first; the daemon's answer lists the
// newest ten and counts the others unlisted, and --all lists every one,
// checked on disk, daemon or not. The text lists the newest ten and says
// how to see them all.
func TestStatusListsEverySession(t *testing.T) {
	e := newEnv(t, false)
	flags := e.flags()
	const n = 25
	t0 := time.Now().Add(-time.Hour)
	id := func(i int) string { return fmt.Sprintf("a11a0000-0000-4000-8000-%012d", i) }
	for i := range n {
		writeSession(t, e, id(i), strings.ReplaceAll(transcript, sessionID, id(i)), t0.Add(time.Duration(i)*time.Minute))
	}
	check := func(t *testing.T, rep map[string]any, raw, source string, listed int) {
		t.Helper()
		disk := rep["disk"].(map[string]any)
		sessions := disk["sessions"].([]any)
		unlisted, _ := disk["unlisted"].(float64)
		if disk["source"] != source || len(sessions) != listed || int(unlisted) != n-listed {
			t.Fatalf("disk: source %v, %d sessions listed, %v unlisted; want %s, %d and %d:\n%s", disk["source"], len(sessions), unlisted, source, listed, n-listed, raw)
		}
		for i, s := range sessions {
			if s.(map[string]any)["session"] != id(n-1-i) {
				t.Errorf("sessions[%d] = %v, want %s (newest first)", i, s.(map[string]any)["session"], id(n-1-i))
			}
		}
	}
	text := func(t *testing.T, args []string, shown int, header string) {
		t.Helper()
		_, out, _ := e.run(t, args...)
		if !strings.Contains(out, header) || strings.Count(out, "a11a0000-") != shown {
			t.Errorf("%v: want %d sessions under %q:\n%s", args, shown, header, out)
		}
	}
	t.Run("disk", func(t *testing.T) {
		rep, raw := statusJSON(t, flags)
		check(t, rep, raw, "disk", n)
		text(t, []string{"status"}, 10, "recent sessions (the newest 10 of 25; bottled "+strings.Join(flags, " ")+" status --all lists them all)")
	})
	t.Run("daemon", func(t *testing.T) {
		startInProcess(t, e)
		rep := waitStatus(t, e, "the daemon's catch-up is over", func(rep map[string]any) bool {
			d, _ := rep["daemon"].(map[string]any)
			return d != nil && d["catchUp"].(map[string]any)["over"] == true
		})
		raw, _ := json.Marshal(rep)
		check(t, rep, string(raw), "daemon", 10)
		rep, out := statusJSON(t, flags, "--all")
		check(t, rep, out, "disk", n)
		if rep["daemon"] == nil {
			t.Errorf("status --all leaves out the daemon's status:\n%s", out)
		}
		text(t, []string{"status"}, 10, "recent sessions (the newest 10 of 25; bottled "+strings.Join(flags, " ")+" status --all lists them all)")
		text(t, []string{"status", "--all"}, n, "recent sessions\n")
	})
}

// nulls lists where v, decoded JSON, holds a null, but at skip.
func nulls(v any, at string, skip map[string]bool) []string {
	var found []string
	switch v := v.(type) {
	case nil:
		if !skip[at] {
			found = append(found, at)
		}
	case map[string]any:
		for k, x := range v {
			found = append(found, nulls(x, at+"."+k, skip)...)
		}
	case []any:
		for i, x := range v {
			found = append(found, nulls(x, fmt.Sprintf("%s[%d]", at, i), skip)...)
		}
	}
	return found
}

// TestStatusJSONWithDaemon reads status --json from a daemon that rendered
// a session at its catch-up: no null but a missing daemon ("errors" is
// [] without errors), no zero time, and the catch-up's entry in recent
// names its transcript.
func TestStatusJSONWithDaemon(t *testing.T) {
	e := newEnv(t, true)
	flags := e.flags()
	stop := startInProcess(t, e)
	rep := waitStatus(t, e, "the catch-up rendered the session", func(rep map[string]any) bool {
		d, _ := rep["daemon"].(map[string]any)
		recent, _ := d["recent"].([]any)
		return d != nil && d["catchUp"].(map[string]any)["over"] == true && len(recent) == 1
	})
	raw, _ := json.Marshal(rep)
	if n := nulls(rep, "", nil); len(n) > 0 {
		t.Errorf("nulls at %q:\n%s", n, raw)
	}
	if strings.Contains(string(raw), "0001-01-01") {
		t.Errorf("a zero time:\n%s", raw)
	}
	s := rep["daemon"].(map[string]any)["recent"].([]any)[0].(map[string]any)
	if want := filepath.Join(e.claude, "projects", "-home-dev-app", sessionID+".jsonl"); s["session"] != sessionID || s["transcript"] != want {
		t.Errorf("recent[0] = %v; want session %s, transcript %s", s, sessionID, want)
	}
	// Without a daemon, only "daemon" is null.
	stop()
	waitStatus(t, e, "the daemon is gone", func(rep map[string]any) bool { return rep["daemon"] == nil })
	rep, out := statusJSON(t, flags)
	if n := nulls(rep, "", map[string]bool{".daemon": true}); len(n) > 0 {
		t.Errorf("without a daemon, nulls at %q:\n%s", n, out)
	}
}

// jsonFields lists the JSON names of t's fields and of the structs they
// hold, recursively.
func jsonFields(t reflect.Type, into map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() {
		return
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		into[name] = true
		jsonFields(f.Type, into)
	}
}

// TestStatusHelpNamesTopLevelFields: status --help names every top-level
// field of --json.
func TestStatusHelpNamesTopLevelFields(t *testing.T) {
	_, out, _ := bottled(t, nil, "status", "--help")
	for f := range reflect.TypeFor[statusReport]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && !strings.Contains(out, `"`+name+`"`) {
			t.Errorf("status --help does not name the field %q:\n%s", name, out)
		}
	}
}

// TestStatusREADMEFields compares the README's description of status
// --json with the code: every field it names is one the code writes, and
// every field the code writes is named (those of "unknown" in the
// paragraph after the block).
func TestStatusREADMEFields(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "`--json` prints one object")
	block, after, ok2 := strings.Cut(rest, "\n```\n\n")
	_, unknown, ok3 := strings.Cut(after, "`unknown` (absent when empty)")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no status --json block followed by a paragraph on unknown")
	}
	quoted := regexp.MustCompile(`"([A-Za-z][A-Za-z0-9]*)"`)
	named := map[string]bool{}
	for line := range strings.Lines(block) {
		line, _, _ = strings.Cut(line, "//") // comments quote values, not fields
		for _, m := range quoted.FindAllStringSubmatch(line, -1) {
			named[m[1]] = true
		}
	}
	para, _, _ := strings.Cut(unknown, "\n\n")
	for _, m := range regexp.MustCompile("`\\{([^`]*)\\}`").FindAllStringSubmatch(para, -1) {
		for _, f := range quoted.FindAllStringSubmatch(m[1], -1) {
			named[f[1]] = true
		}
	}
	code := map[string]bool{}
	jsonFields(reflect.TypeFor[statusReport](), code)
	delete(code, "bottles") // the daemon's survey: status moves it to "disk"
	for f := range code {
		if !named[f] {
			t.Errorf("the README does not name the field %q", f)
		}
	}
	for f := range named {
		if !code[f] {
			t.Errorf("the README names %q, which status --json does not write", f)
		}
	}
}

// TestStatusShowsProjectDirectory: the projects /tmp/项目 ü and /tmp/数据 ö
// share one key (-tmp-----), so the sessions list shows each session's
// working directory, from its bottle's header or, without a bottle, from
// its transcript; the key only when neither names one. The columns stay
// aligned with wide characters in them, and --json gives the directory.
func TestStatusShowsProjectDirectory(t *testing.T) {
	e := newEnv(t, false)
	const (
		rendered = "c1111111-0000-4000-8000-000000000001" // in /tmp/项目 ü, with a bottle
		unrender = "c2222222-0000-4000-8000-000000000002" // in /tmp/数据 ö, without one
		noCWD    = "c3333333-0000-4000-8000-000000000003" // no cwd in its records
	)
	dirs := map[string]string{rendered: "/tmp/项目 ü", unrender: "/tmp/数据 ö", noCWD: ""}
	key := sources.ProjectKey("/tmp/项目 ü")
	if key != sources.ProjectKey("/tmp/数据 ö") {
		t.Fatalf("the two projects have keys %q and %q; the test wants them shared", key, sources.ProjectKey("/tmp/数据 ö"))
	}
	proj := filepath.Join(e.claude, "projects", key)
	os.MkdirAll(proj, 0o700)
	t0 := time.Now().Add(-time.Hour)
	for i, id := range []string{rendered, unrender, noCWD} {
		rec := synth.Rec{Session: id, UUID: "u1", At: t0, CWD: dirs[id]}
		path := filepath.Join(proj, id+".jsonl")
		if err := os.WriteFile(path, []byte(rec.User("PROJECT-DIR hello")), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i)*time.Minute))
	}
	if code, _, errOut := e.run(t, "render", rendered); code != 0 {
		t.Fatal(errOut)
	}
	// A named pipe where a bottle would be is passed over, never waited on.
	if err := os.MkdirAll(filepath.Join(e.data, "bottles"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(e.data, "bottles", unrender+".md"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{rendered: "/tmp/项目 ü", unrender: "/tmp/数据 ö", noCWD: key}
	_, out, _ := e.run(t, "status")
	_, list, _ := strings.Cut(out, "recent sessions\n")
	ends := map[int]bool{}
	for line := range strings.Lines(list) {
		id := strings.TrimSpace(line)[:len(rendered)]
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasSuffix(line, "  "+want[id]) {
			t.Errorf("session %s: row %q does not end with its project %q", id, line, want[id])
		}
		ends[textcut.Width(line)-textcut.Width(want[id])] = true
	}
	if len(ends) != 1 {
		t.Errorf("the project column starts at columns %v, want one:\n%s", ends, list)
	}
	rep, raw := statusJSON(t, e.flags())
	for _, s := range rep["disk"].(map[string]any)["sessions"].([]any) {
		s := s.(map[string]any)
		if w := dirs[s["session"].(string)]; s["project"] != w && !(w == "" && s["project"] == nil) {
			t.Errorf("session %s: project %v, want %q:\n%s", s["session"], s["project"], w, raw)
		}
	}
}
