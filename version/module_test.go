package version

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestModulePathInstallable checks that go.mod names the module by a host
// path: `go install <module>/cmd/bottled@latest` refuses a module path
// whose first element has no dot ("missing dot in first path element").
func TestModulePathInstallable(t *testing.T) {
	f, err := os.Open("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var module string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if rest, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			module = strings.Trim(strings.TrimSpace(rest), `"`)
			break
		}
	}
	if module == "" {
		t.Fatal("go.mod has no module line")
	}
	first, _, _ := strings.Cut(module, "/")
	if !strings.Contains(first, ".") || strings.Count(module, "/") < 2 {
		t.Errorf("module path %q: go install needs a host path such as github.com/<owner>/bottled", module)
	}
}
