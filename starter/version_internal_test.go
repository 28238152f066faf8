package starter

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuildComesFromTheLinkerThenTheBuildInfo(t *testing.T) {
	clone := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/weftworks/weft", Version: "v0.0.0-20261202182500-eb97aed1c2d3+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "eb97aed1c2d3"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/weftworks/weft", Version: "v1.4.0"}}
	devel := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/weftworks/weft", Version: "(devel)"}}
	for _, tc := range []struct {
		name              string
		info              *debug.BuildInfo
		version, revision string
		want              Build
		line              string
	}{
		{"a build in a clone", clone, "", "", Build{Version: "v0.0.0-20261202182500-eb97aed1c2d3+dirty", Revision: "eb97aed1c2d3", Modified: true, GoVersion: "go1.26.8"},
			"v0.0.0-20261202182500-eb97aed1c2d3+dirty (revision eb97aed1c2d3, modified, go1.26.8)"},
		{"go install of a tag", installed, "", "", Build{Version: "v1.4.0", GoVersion: "go1.26.8"}, "v1.4.0 (go1.26.8)"},
		{"make release's -ldflags win", clone, "v1.5.0", "0123abcd", Build{Version: "v1.5.0", Revision: "0123abcd", Modified: true, GoVersion: "go1.26.8"},
			"v1.5.0 (revision 0123abcd, modified, go1.26.8)"},
		{"a docker build: no .git, -ldflags only", devel, "v1.5.0", "0123abcd", Build{Version: "v1.5.0", Revision: "0123abcd", GoVersion: "go1.26.8"},
			"v1.5.0 (revision 0123abcd, go1.26.8)"},
		{"nothing recorded", devel, "", "", Build{Version: "dev", GoVersion: "go1.26.8"}, "dev (go1.26.8)"},
		{"no build info at all", nil, "", "", Build{Version: "dev"}, "dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := buildOf(tc.info, tc.version, tc.revision)
			require.Equal(t, tc.want, b)
			require.Equal(t, tc.line, b.String())
		})
	}
}

// weft dev without weft-stack says to install the weft-stack of weft's own version.
func TestStackVersionMatchesWeft(t *testing.T) {
	for v, want := range map[string]string{"v1.4.0": "v1.4.0", "v0.0.0-20261202182500-eb97aed1c2d3": "v0.0.0-20261202182500-eb97aed1c2d3",
		"v0.0.0-20261202182500-eb97aed1c2d3+dirty": "latest", "dev": "latest", "eb97aed-dirty": "latest"} {
		require.Equal(t, want, stackVersion(v), v)
	}
}
