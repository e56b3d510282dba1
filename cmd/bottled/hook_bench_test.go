package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"bottled/internal/synth"
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
// (-tags urfave_cli_no_docs -ldflags=-s -w), which starts faster.
func BenchmarkHookProcess(b *testing.B) {
	for _, build := range []struct {
		name  string
		flags []string
		env   []string
	}{
		{"default", nil, nil},
		{"lean", []string{"-tags", "urfave_cli_no_docs", "-ldflags=-s -w"}, []string{"CGO_ENABLED=0"}},
	} {
		b.Run(build.name, func(b *testing.B) { benchmarkHook(b, build.flags, build.env) })
	}
}

func benchmarkHook(b *testing.B, flags, env []string) {
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello")
	if err := os.WriteFile(filepath.Join(dir, "hello.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "bottled")
	for _, build := range [][]string{{"build", "-o", hello, filepath.Join(dir, "hello.go")}, append(append([]string{"build"}, flags...), "-o", bin, "bottled/cmd/bottled")} {
		cmd := exec.Command("go", build...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go %v: %v\n%s", build, err, out)
		}
	}
	claude, data := filepath.Join(dir, "claude"), filepath.Join(dir, "mem")
	const id = "hookbench-0000-4000-8000-000000000000"
	transcript := filepath.Join(claude, "projects", "-bench", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(transcript)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := synth.Transcript(f, id, 10<<20, 3); err != nil {
		b.Fatal(err)
	}
	f.Close()
	payload, _ := json.Marshal(map[string]string{"session_id": id, "transcript_path": transcript, "hook_event_name": "SessionStart", "source": "compact"})
	hook := []string{bin, "--claude-dir", claude, "--data-dir", data, "hook", "session-start"}

	const runs = 30
	median := func(before func(i int), args []string, stdin []byte) time.Duration {
		var ds []time.Duration
		for i := range runs {
			if before != nil {
				before(i)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stdin = bytes.NewReader(stdin)
			var out bytes.Buffer
			cmd.Stdout = &out
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
			if len(stdin) > 0 && !bytes.Contains(out.Bytes(), []byte("additionalContext")) {
				b.Fatalf("the hook printed no pointer: %q", out.String())
			}
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	appendMessage := func(i int) {
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		line, _ := json.Marshal(map[string]any{"type": "user", "uuid": "bench-" + time.Now().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "user", "content": "one more message"}, "timestamp": "2026-03-02T10:00:00.000Z"})
		f.Write(append(line, '\n'))
	}
	for b.Loop() {
		median(nil, hook, payload) // warm the page cache and render the bottle once
		h := median(nil, []string{hello}, nil)
		fresh := median(nil, hook, payload)
		stale := median(appendMessage, hook, payload)
		b.ReportMetric(float64(h.Microseconds())/1000, "hello-ms")
		b.ReportMetric(float64(fresh.Microseconds())/1000, "fresh-ms")
		b.ReportMetric(float64(fresh)/float64(h), "fresh/hello")
		b.ReportMetric(float64(stale.Microseconds())/1000, "stale-10MB-ms")
	}
}
