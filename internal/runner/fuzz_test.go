package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// iolensOwnKeys are the options the runner writes itself.
var iolensOwnKeys = map[string]bool{
	"filename": true, "write_bw_log": true, "write_iops_log": true, "write_lat_log": true, "log_avg_msec": true,
	"percentile_list": true, "lat_percentiles": true, "clat_percentiles": true, "unlink": true, "randrepeat": true,
	"group_reporting": true, "time_based": true, "offset_increment": true, "refill_buffers": true,
}

// Whatever job file SuiteFromJobFile accepts, the job files iolens then
// hands to fio hold only allowed options, with values iolens checked, and
// touch no path but its own.
func FuzzSuiteFromJobFile(f *testing.F) {
	for _, set := range [][]struct{ name, text, names string }{hostileJobFiles, badNumbers} {
		for _, tc := range set {
			f.Add(tc.text)
		}
	}
	if b, err := os.ReadFile("testdata/seed000-jobs.fio"); err == nil {
		f.Add(string(b))
	}
	f.Add("[global]\nioengine=io_uring\ndirect=1\nruntime=2.5\ntime_based\n[t]\nrw=randrw\nrwmixwrite=30\nbssplit=4k/50:64k/\nrate=1m,2m\n")
	f.Add("[a]\nfilename=/etc/passwd:/etc/shadow\nrw=write\n")
	scratch := "/scratch/iolens-x"
	r := &runner{cfg: Config{SampleInterval: 1e9}, engine: "libaio", scratch: scratch, sharedFile: scratch + "/iolens.dat",
		target: result.Target{SizeBytes: 1 << 30, Path: "/scratch"}}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := SuiteFromJobFile("f.fio", in)
		if err != nil {
			if !strings.Contains(in, "%!") && strings.Contains(err.Error(), "%!") {
				t.Fatalf("badly formatted error: %v", err)
			}
			return
		}
		for _, tt := range s.Tests {
			if err := CheckSpec(tt); err != nil {
				t.Fatalf("accepted a test CheckSpec refuses: %v\n%q", err, in)
			}
			jf, err := r.jobFile(r.effective(tt), scratch+"/logs/t")
			var re *RegionError
			if errors.As(err, &re) {
				continue // a test whose IO would leave its file is refused
			}
			if err != nil {
				t.Fatalf("placing %q: %v", in, err)
			}
			job := jf.String()
			secs, err := fio.ParseJobFile(job)
			if err != nil {
				t.Fatalf("iolens wrote a job file it cannot read back: %v\n%s", err, job)
			}
			for _, sec := range secs {
				for _, kv := range sec.Options {
					if _, _, ok := canonicalName(kv.Key); !ok && !iolensOwnKeys[kv.Key] {
						t.Fatalf("option %s reaches fio from %q", kv.Key, in)
					}
					if kv.Key != "bssplit" && strings.Contains(kv.Value, "/") && !strings.HasPrefix(kv.Value, scratch+"/") {
						t.Fatalf("path %s=%s reaches fio from %q", kv.Key, kv.Value, in)
					}
				}
			}
		}
	})
}

// Whatever /proc/swaps and the mount tables hold, inspecting a device
// fails cleanly or names uses of that device only.
func FuzzInspectDevice(f *testing.F) {
	f.Add("/dev/loop3p1 partition 65532 0 -2\n", fmt.Sprintf(mountLine, "7:3", "/data", "loop3"))
	f.Add("/dev/loop3 partition NaN 0 -2\n", "40 22 7:3 / / rw - ext4 /dev/loop3 rw\n")
	f.Add("x\n", "40 22 7:3\n")
	f.Add("", fmt.Sprintf(mountLine, "259:0", "/a\\040b", "loop3p1"))
	f.Add("/dev/loop4 partition 1 0 -2\n", fmt.Sprintf(mountLine, "7:4", "/b", "loop4"))
	in := devTree(f, nil)
	f.Fuzz(func(t *testing.T, swaps, mountinfo string) {
		if err := os.WriteFile(filepath.Join(in.ProcRoot, "swaps"), []byte("Filename Type Size Used Priority\n"+swaps), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in.ProcRoot, "300", "mountinfo"), []byte(mountinfo), 0o644); err != nil {
			t.Fatal(err)
		}
		u, err := in.Inspect("7:3", "loop3")
		if err != nil {
			return
		}
		for _, s := range u.Swap {
			if b := filepath.Base(s); b != "loop3" && b != "loop3p1" {
				t.Fatalf("swap %q is not on loop3", s)
			}
		}
		for _, m := range u.Mounts {
			if !strings.HasPrefix(m, "loop3 at ") && !strings.HasPrefix(m, "loop3p1 at ") {
				t.Fatalf("mount %q is not of loop3", m)
			}
		}
	})
}
