package starter

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version and Revision may be set at build time with -ldflags "-X
// github.com/weftworks/weft/starter.Version=v1.2.3 -X github.com/weftworks/weft/starter.Revision=SHA"
// (make release and the Dockerfile do, since a build without .git records no revision). Left
// empty, they come from what `go build` and `go install` record in the binary (BuildInfo).
var Version, Revision string

// Build is what a binary knows about how it was built: weft --version prints it, the gateway's
// /health answers it.
type Build struct {
	// Version is the module version: a tag (v1.2.3) for `go install …@v1.2.3`, a pseudo-version
	// for a build in a clone, "dev" when nothing recorded one.
	Version string
	// Revision is the VCS commit the binary was built from ("" when unknown, as for go install
	// of a module: the module proxy serves no .git); Modified says the work tree had changes.
	Revision string
	Modified bool
	// GoVersion is the toolchain that built it.
	GoVersion string
}

// CurrentBuild is this binary's Build: the -ldflags values first, then the build info.
func CurrentBuild() Build {
	info, _ := debug.ReadBuildInfo()
	return buildOf(info, Version, Revision)
}

// buildOf reads info (nil: a binary without build info) under the values set with -ldflags.
func buildOf(info *debug.BuildInfo, version, revision string) Build {
	b := Build{Version: version, Revision: revision}
	if info != nil {
		b.GoVersion = info.GoVersion
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Revision == "" {
					b.Revision = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// String is the line weft --version prints after "weft version ".
func (b Build) String() string {
	var about []string
	if b.Revision != "" {
		rev := "revision " + b.Revision
		if b.Modified {
			rev += ", modified"
		}
		about = append(about, rev)
	}
	if b.GoVersion != "" {
		about = append(about, b.GoVersion)
	}
	if len(about) == 0 {
		return b.Version
	}
	return fmt.Sprintf("%s (%s)", b.Version, strings.Join(about, ", "))
}
