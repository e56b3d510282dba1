package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/growfile"
	"github.com/bottled-dev/bottled/internal/synth"
	"github.com/bottled-dev/bottled/internal/testbin"
)

// BenchmarkHookProcess measures what Claude Code waits for: the whole
// `bottled hook session-start` process, from exec to exit, median of 30
// runs, beside a Go hello-world binary built and run the same way in the
// same run (process start dominates a fresh hook, and varies by machine).
//
//   - fresh: the bottle is current; the hook checks it and prints the pointer.
//   - stale-10MB: a 10 MB transcript gained a message since its bottle; the
//     hook renders it inline first (the next run finds it fresh again, so
//     each run appends a message).
//
// "default" is a plain go build; "lean" is the build the README recommends
// (CGO_ENABLED=0, -ldflags=-s -w), which starts faster.
func BenchmarkHookProcess(b *testing.B) {
	testbin.EachFlavor(b, "github.com/bottled-dev/bottled/cmd/bottled", benchmarkHook)
}

func benchmarkHook(b *testing.B, dir, bin, hello string) {
	claude, data := filepath.Join(dir, "claude"), filepath.Join(dir, "mem")
	const id = "hookbench-0000-4000-8000-000000000000"
	transcript := filepath.Join(claude, "projects", "-bench", id+".jsonl")
	if _, err := synth.File(transcript, id, 10<<20, 3); err != nil {
		b.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]string{"session_id": id, "transcript_path": transcript, "hook_event_name": "SessionStart", "source": "compact"})
	hook := []string{bin, "--claude-dir", claude, "--data-dir", data, "hook", "session-start"}

	// runHook runs the hook once, after before (if any), and checks that
	// it printed a pointer.
	runHook := func(before func()) func() time.Duration {
		return func() time.Duration {
			if before != nil {
				before()
			}
			cmd := exec.Command(hook[0], hook[1:]...)
			cmd.Stdin = bytes.NewReader(payload)
			var out bytes.Buffer
			cmd.Stdout = &out
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			if !bytes.Contains(out.Bytes(), []byte("additionalContext")) {
				b.Fatalf("the hook printed no pointer: %q", out.String())
			}
			return took
		}
	}
	appendMessage := func() {
		line, _ := json.Marshal(map[string]any{"type": "user", "uuid": "bench-" + time.Now().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "user", "content": "one more message"}, "timestamp": "2026-03-02T10:00:00.000Z"})
		growfile.Append(b, transcript, append(line, '\n'))
	}
	for b.Loop() {
		testbin.Median(runHook(nil)) // warm the page cache and render the bottle once
		h := testbin.Median(func() time.Duration { return testbin.TimeRun(b, hello) })
		fresh := testbin.Median(runHook(nil))
		stale := testbin.Median(runHook(appendMessage))
		b.ReportMetric(float64(h.Microseconds())/1000, "hello-ms")
		b.ReportMetric(float64(fresh.Microseconds())/1000, "fresh-ms")
		b.ReportMetric(float64(fresh)/float64(h), "fresh/hello")
		b.ReportMetric(float64(stale.Microseconds())/1000, "stale-10MB-ms")
	}
}
