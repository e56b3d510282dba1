package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=…"; without
// it the module version from the build information is used.
var version = ""

// buildInfo reads what the Go toolchain recorded in the binary; a
// variable so that tests can give other records.
var buildInfo = debug.ReadBuildInfo

// versionString says exactly what binary is running, for bug reports and
// status: the version, the VCS revision and its time (and whether the
// tree had uncommitted changes), and the Go version and platform.
func versionString() string {
	v := version
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
