package buildinfo

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestRevision(t *testing.T) {
	info := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	tests := []struct {
		name, ldflag string
		info         *debug.BuildInfo
		ok           bool
		want         string
	}{
		{"ldflags win", "def456", info, true, "def456"},
		{"stamped, modified", "", info, true, "abc123-dirty"},
		{"clean", "", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}, true, "abc123"},
		{"no build info", "", nil, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := Commit
			Commit = tc.ldflag
			defer func() { Commit = old }()
			if got := revision(tc.info, tc.ok); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fio")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho fio-9.87\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	v := Read(context.Background(), fake)
	if v.Fio != "fio-9.87" || v.FioError != "" || v.Version != Version || v.Go != runtime.Version() {
		t.Errorf("%+v", v)
	}
	v = Read(context.Background(), filepath.Join(dir, "nofio"))
	if v.Fio != "" || v.FioError == "" {
		t.Errorf("missing fio: %+v", v)
	}
}
