package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	defer func(old func() (*debug.BuildInfo, bool), v string) { buildInfo, Set = old, v }(buildInfo, Set)
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{"built from a clean checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "34901cf0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-30T21:00:00Z"}, {Key: "vcs.modified", Value: "false"},
		}}, "v0.3.1 (revision 34901cf01234, 2026-11-30T21:00:00Z) go1.26.8 " + platform},
		{"uncommitted changes", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261130210000-34901cf01234+dirty"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "34901cf0123456789abcdef"}, {Key: "vcs.modified", Value: "true"},
		}}, "v0.0.0-20261130210000-34901cf01234+dirty (revision 34901cf01234, modified) go1.26.8 " + platform},
		{"no VCS information", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "(devel) go1.26.8 " + platform},
		{"version set at link time", "1.2.0", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "1.2.0 go1.26.8 " + platform},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			Set = tc.ldflags
			buildInfo = func() (*debug.BuildInfo, bool) { return tc.info, true }
			if got := String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
	buildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	Set = ""
	if got := String(); !strings.HasPrefix(got, "(devel) "+runtime.Version()) {
		t.Errorf("without build information: %q", got)
	}
}
