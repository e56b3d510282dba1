package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/testbin"
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
	testbin.EachFlavor(b, "github.com/bottled-dev/bottled/cmd/bottled-mcp", benchmarkMCP)
}

func benchmarkMCP(b *testing.B, dir, bin, hello string) {
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
		testbin.Median(firstAnswer(requests["discover"])) // warm the page cache
		h := testbin.Median(func() time.Duration { return testbin.TimeRun(b, hello) })
		discover := testbin.Median(firstAnswer(requests["discover"]))
		initialize := testbin.Median(firstAnswer(requests["initialize"]))
		b.ReportMetric(float64(h.Microseconds())/1000, "hello-ms")
		b.ReportMetric(float64(discover.Microseconds())/1000, "discover-ms")
		b.ReportMetric(float64(initialize.Microseconds())/1000, "initialize-ms")
		b.ReportMetric(float64(max(discover, initialize))/float64(h), "first/hello")
	}
}
