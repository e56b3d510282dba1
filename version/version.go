// Package version says exactly which bottled binary is running, for bug
// reports and status: the module version, the VCS revision and time it was
// built from, and the Go version and platform. Both commands (bottled and
// bottled-mcp) print it; it sits outside the data flow.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set is set at build time with -ldflags "-X github.com/bottled-dev/bottled/version.Set=…";
// without it the module version from the build information is used.
var Set = ""

// buildInfo reads what the Go toolchain recorded in the binary; a
// variable so that tests can give other records.
var buildInfo = debug.ReadBuildInfo

// String says exactly what binary is running: the version, the VCS
// revision and its time (and whether the tree had uncommitted changes),
// and the Go version and platform.
func String() string {
	v := Set
	var rev, when string
	modified := false
	info, ok := buildInfo()
	if ok {
		if v == "" && info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	var vcs []string
	if rev != "" {
		vcs = append(vcs, "revision "+rev[:min(12, len(rev))])
	}
	if when != "" {
		vcs = append(vcs, when)
	}
	if modified {
		vcs = append(vcs, "modified")
	}
	out := v
	if len(vcs) > 0 {
		out += " (" + strings.Join(vcs, ", ") + ")"
	}
	goVersion := runtime.Version()
	if ok && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	return fmt.Sprintf("%s %s %s/%s", out, goVersion, runtime.GOOS, runtime.GOARCH)
}
