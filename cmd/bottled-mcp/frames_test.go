package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bottled-dev/bottled/internal/testbin"
)

// mcpProcess is a bottled-mcp process on pipes, as Claude Code runs it.
type mcpProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	out    *bufio.Reader
}

// startMCP starts bin with its Claude directory and data directory in dir
// and env added to its environment, and initializes the session.
func startMCP(t *testing.T, bin, dir string, env ...string) *mcpProcess {
	t.Helper()
	cmd := exec.Command(bin, "--claude-dir", filepath.Join(dir, "claude"), "--data-dir", filepath.Join(dir, "mem"))
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testbin.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mcpProcess{t: t, cmd: cmd, stdin: stdin, stdout: stdout.(*os.File), out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("bottled-mcp's stderr:\n%s", stderr.String())
		}
	})
	p.call(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *mcpProcess) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write to bottled-mcp: %v", err)
	}
}

// reply is a JSON-RPC response as it came.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	line string
}

// next reads the next line the server writes, within a generous deadline
// (nothing here measures time).
func (p *mcpProcess) next() reply {
	p.t.Helper()
	p.stdout.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("no answer from bottled-mcp: %v (exited: %v)", err, p.cmd.ProcessState)
	}
	r := reply{line: strings.TrimSpace(line)}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.t.Fatalf("answer %q: %v", line, err)
	}
	return r
}

// call sends a request and returns its answer, which must be a result.
func (p *mcpProcess) call(req string) reply {
	p.t.Helper()
	p.send(req)
	r := p.next()
	if r.Result == nil {
		p.t.Fatalf("%s: answered %s", req, r.line)
	}
	return r
}

// ping checks that the server still answers.
func (p *mcpProcess) ping(n int) {
	p.t.Helper()
	r := p.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, n))
	if string(r.ID) != strconv.Itoa(n) {
		p.t.Fatalf("ping %d: answered %s", n, r.line)
	}
}

// TestBadFrames sends bottled-mcp, built as users run it, lines that are
// not JSON-RPC requests: each gets a JSON-RPC error (with the request's id
// when one can be read from it, else null), and the server answers the
// next request.
func TestBadFrames(t *testing.T) {
	dir := t.TempDir()
	testbin.Build(t, dir, nil, nil, "github.com/bottled-dev/bottled/cmd/bottled-mcp")
	p := startMCP(t, filepath.Join(dir, "bottled-mcp"), dir)
	for i, tc := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"not JSON", `{bad`, -32700, "null"},
		{"cut short", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read"`, -32700, "7"},
		{"trailing data", `{"jsonrpc":"2.0","id":"t","method":"ping"} and more`, -32700, `"t"`},
		{"binary", "\x00\xff\xfe garbage", -32700, "null"},
		{"a string", `"ping"`, -32600, "null"},
		{"a number", `42`, -32600, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, -32600, "8"},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"an empty batch", `[]`, -32600, "null"},
		{"a batch", `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600, "null"},
	} {
		p.send(tc.line)
		r := p.next()
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id {
			t.Errorf("%s: answered %s, want error %d with id %s", tc.name, r.line, tc.code, tc.id)
		}
		p.ping(100 + i)
	}
	// Blank lines, CRLF line ends and a byte-order mark are not errors.
	p.send("")
	p.send("\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":200,"method":"ping"}` + "\r")
	if r := p.next(); string(r.ID) != "200" || r.Result == nil {
		t.Errorf("a request after a blank line, with a BOM and CRLF: answered %s", r.line)
	}
}

// TestOverlongFrames sends bottled-mcp a request over the 16 MiB a frame
// may hold, then a line of 320 MiB: each is answered with an error and
// skipped, the server answers the next request, and its memory does not
// grow with the line.
func TestOverlongFrames(t *testing.T) {
	dir := t.TempDir()
	testbin.Build(t, dir, nil, nil, "github.com/bottled-dev/bottled/cmd/bottled-mcp")
	p := startMCP(t, filepath.Join(dir, "bottled-mcp"), dir)

	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"read","arguments":{"session":"` +
		strings.Repeat("a", 17<<20) + `"}}}`
	p.send(big)
	if r := p.next(); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != `"big"` {
		t.Errorf("a 17 MiB request: answered %.300s, want error -32600 with its id", r.line)
	}
	p.ping(1)

	// A string that never ends, written while the server reads.
	const longMiB = 320
	chunk := strings.Repeat("x", 1<<20)
	go func() {
		io.WriteString(p.stdin, `{"jsonrpc":"2.0","method":"tools/call","params":"`)
		for range longMiB {
			io.WriteString(p.stdin, chunk)
		}
		io.WriteString(p.stdin, "\n")
	}()
	if r := p.next(); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" {
		t.Errorf("a %d MiB line: answered %.300s, want error -32600 with id null", longMiB, r.line)
	}
	p.ping(2)
	peak := peakMiB(t, p.cmd.Process.Pid)
	t.Logf("peak resident memory %d MiB", peak)
	if peak > longMiB/2 {
		t.Errorf("bottled-mcp held %d MiB at its peak, skipping a line of %d MiB: it must not grow with the line", peak, longMiB)
	}
}

// peakMiB is the most memory the process has held (VmHWM).
func peakMiB(t *testing.T, pid int) int {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read the server's memory from: %v", err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if f := strings.Fields(v); len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.Atoi(f[0]); err == nil {
					return kb >> 10
				}
			}
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
