// Package buildinfo says which iolens this is: the version and commit
// stamped at build time, the Go toolchain's own record, and the fio the
// binary would run.
package buildinfo

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/iolens/iolens/internal/fio"
)

// Version is set at build time with
// -ldflags "-X github.com/iolens/iolens/internal/buildinfo.Version=...".
var Version = "0.1.0-dev"

// Commit is the source revision, set at build time like Version; without
// it, the revision the Go toolchain stamped into the binary is used.
var Commit = ""

// Info is what 'iolens version' reports.
type Info struct {
	Version string `json:"version"`
	// Commit is the source revision ("" when the binary does not know it).
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// Fio is fio's own version string ("fio-3.33"), "" when fio could not
	// be run; FioError says why.
	Fio      string `json:"fio"`
	FioError string `json:"fio_error,omitempty"`
}

// Revision is Commit, or the VCS revision in the build info ("-dirty"
// appended for a modified work tree).
func Revision() string {
	info, ok := debug.ReadBuildInfo()
	return revision(info, ok)
}

func revision(info *debug.BuildInfo, ok bool) string {
	if Commit != "" {
		return Commit
	}
	if !ok {
		return ""
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

// Read gathers Info, asking fioBinary its version: the version a run
// records is the one found here. A hung binary gets 10 s.
func Read(ctx context.Context, fioBinary string) Info {
	v := Info{Version: Version, Commit: Revision(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fv, err := fio.Version(ctx, fioBinary)
	if err != nil {
		v.FioError = err.Error()
	} else {
		v.Fio = fv
	}
	return v
}
