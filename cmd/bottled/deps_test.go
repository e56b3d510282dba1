package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMCPSDK: the bottled binary, which runs every hook, must not link
// the MCP SDK, whose start-up would slow each of them (it is bottled-mcp's
// alone); so no package of it may import the SDK or mcpserver. Nor the
// web view (bottled-view's): net/http and goldmark made the hook 1.7 ms
// slower (README).
func TestNoMCPSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, pkg := range deps {
		if strings.HasPrefix(pkg, "github.com/modelcontextprotocol/") || pkg == "github.com/bottled-dev/bottled/mcpserver" ||
			pkg == "net/http" || strings.HasPrefix(pkg, "github.com/yuin/goldmark") || pkg == "github.com/bottled-dev/bottled/view" {
			t.Errorf("bottled links %s", pkg)
		}
	}
}
