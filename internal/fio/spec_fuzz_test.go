package fio

import (
	"strings"
	"testing"
)

// FuzzSpecFromOptions: fio's "job options" in an output anyone may hand
// to 'iolens report'. The spec rebuilt from them has a positive block
// size, depth and job count, a read share of 0 to 100 and no negative
// time, whatever the strings say.
func FuzzSpecFromOptions(f *testing.F) {
	for _, s := range []string{"bs=4k;iodepth=32;numjobs=4;rw=randread;runtime=30", "bs=0;iodepth=-5;numjobs=0", "rwmixread=150;runtime=NaN;ramp_time=-1s",
		"blocksize=1e9;iodepth=99999999999", "bs=4k-64k;runtime=1h", "fdatasync=-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := map[string]string{}
		for _, kv := range strings.Split(s, ";") {
			k, v, _ := strings.Cut(kv, "=")
			o[k] = v
		}
		sp, _ := specOf(test{name: "j", jobs: []Job{{JobName: "j", JobOptions: o}}})
		if sp.BlockSize <= 0 || sp.IODepth < 1 || sp.NumJobs < 1 || sp.RWMixRead < 0 || sp.RWMixRead > 100 || sp.Fdatasync < 0 ||
			!(sp.RuntimeS >= 0) || !(sp.RampS >= 0) || sp.RW == "" {
			t.Fatalf("options %v gave %+v", o, sp)
		}
	})
}
