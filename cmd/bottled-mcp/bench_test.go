package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkMCPProcess measures what Claude Code waits for when it starts
// bottled's MCP server (bottled-mcp, as install registers it): from exec
// to the answer to its first request, median of 30 runs, beside a Go
// hello-world binary run to exit the same way in the same run. Claude
// Code 2.1.332's first request is server/discover (then initialize for
// servers that do not know it); both are timed. The builds are those of
// bottled's BenchmarkHookProcess.
//
//	go test ./cmd/bottled-mcp -run '^$' -bench MCPProcess -benchtime 1x
func BenchmarkMCPProcess(b *testing.B) {
	for _, build := range []struct {
		name  string
		flags []string
		env   []string
	}{
		{"default", nil, nil},
		{"lean", []string{"-tags", "urfave_cli_no_docs", "-ldflags=-s -w"}, []string{"CGO_ENABLED=0"}},
	} {
		b.Run(build.name, func(b *testing.B) { benchmarkMCP(b, build.flags, build.env) })
	}
}

func benchmarkMCP(b *testing.B, flags, env []string) {
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello")
	if err := os.WriteFile(filepath.Join(dir, "hello.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "bottled-mcp")
	for _, build := range [][]string{{"build", "-o", hello, filepath.Join(dir, "hello.go")}, append(append([]string{"build"}, flags...), "-o", bin, "bottled/cmd/bottled-mcp")} {
		cmd := exec.Command("go", build...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go %v: %v\n%s", build, err, out)
		}
	}
	server := []string{bin, "--claude-dir", filepath.Join(dir, "claude"), "--data-dir", filepath.Join(dir, "mem")}
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "claude-code", "version": "2.1.332"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{"listChanged": true}},
	}
	requests := map[string][]byte{}
	requests["discover"], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "d1", "method": "server/discover", "params": map[string]any{"_meta": meta}})
	requests["initialize"], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "claude-code", "version": "2.1.332"}}})

	const runs = 30
	median := func(run func() time.Duration) time.Duration {
		var ds []time.Duration
		for range runs {
			ds = append(ds, run())
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	helloRun := func() time.Duration {
		start := time.Now()
		if err := exec.Command(hello).Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	firstAnswer := func(req []byte) func() time.Duration {
		return func() time.Duration {
			cmd := exec.Command(server[0], server[1:]...)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			start := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			stdin.Write(append(req, '\n'))
			line, err := bufio.NewReader(stdout).ReadBytes('\n')
			took := time.Since(start)
			if err != nil || !bytes.Contains(line, []byte(`"result"`)) {
				b.Fatalf("first answer %q: %v", line, err)
			}
			stdin.Close()
			cmd.Wait()
			return took
		}
	}
	for b.Loop() {
		median(firstAnswer(requests["discover"])) // warm the page cache
		h := median(helloRun)
		discover := median(firstAnswer(requests["discover"]))
		initialize := median(firstAnswer(requests["initialize"]))
		b.ReportMetric(float64(h.Microseconds())/1000, "hello-ms")
		b.ReportMetric(float64(discover.Microseconds())/1000, "discover-ms")
		b.ReportMetric(float64(initialize.Microseconds())/1000, "initialize-ms")
		b.ReportMetric(float64(max(discover, initialize))/float64(h), "first/hello")
	}
}
