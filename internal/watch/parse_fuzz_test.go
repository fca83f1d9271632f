package watch

import (
	"math"
	"testing"
)

// Hostile cgroup files: a value the kernel never writes (NaN, Inf, a
// sign, an exponent, a float, an overflow) is never a counter or a cap.
var cgroupSeeds = []string{
	"7:3 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
	"7:3 rbps=max wbps=20000000 riops=max wiops=1\n",
	"7:3 rbytes=NaN wbytes=Inf rios=-1 wios=1e300\n",
	"7:3 rbps=NaN wbps=-5 riops=+Inf wiops=0x10\n",
	"7:3 rbytes=99999999999999999999999 wbytes=18446744073709551615\n",
	"7:3 Read 4096\n7:3 Write 8192\n7:3 Total 12288\n",
	"7:3 Read NaN\n7:3 Write -1\n",
	"7:3 1048576\n",
	"7:3 NaN\n7:3 -1\n7:3 1e9\n",
	"7:3\n\n=\n7:3 =\n7:3 a=b=c\n",
	"7:3 " + string(make([]byte, 70000)) + "\n",
}

func finite(t *testing.T, what string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Fatalf("%s = %v", what, v)
	}
}

var fuzzMajMin = map[string]string{"7:3": "loop3", "8:0": "sda"}

func FuzzParseIOStat(f *testing.F) {
	for _, s := range cgroupSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for dev := range parseIOStat(b, fuzzMajMin) {
			if _, ok := fuzzMajMin[dev]; !ok {
				t.Fatalf("counters for unwatched device %q", dev)
			}
		}
	})
}

func FuzzParseIOMax(f *testing.F) {
	for _, s := range cgroupSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("7:3 rbps=NaN\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for dev, l := range parseIOMax(b, fuzzMajMin) {
			if _, ok := fuzzMajMin[dev]; !ok || !l.any() {
				t.Fatalf("caps %+v for %q", l, dev)
			}
			for _, v := range []float64{l.rbps, l.wbps, l.riops, l.wiops} {
				finite(t, "io.max cap", v)
			}
		}
	})
}

func FuzzParseBlkio(f *testing.F) {
	for _, s := range cgroupSeeds {
		f.Add([]byte(s), []byte(s))
	}
	f.Fuzz(func(t *testing.T, bytesFile, iosFile []byte) {
		for dev := range parseBlkio(bytesFile, iosFile, fuzzMajMin) {
			if _, ok := fuzzMajMin[dev]; !ok {
				t.Fatalf("counters for unwatched device %q", dev)
			}
		}
	})
}

func FuzzParseBlkioCaps(f *testing.F) {
	for _, s := range cgroupSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for dev, v := range parseBlkioCaps(b, fuzzMajMin) {
			if _, ok := fuzzMajMin[dev]; !ok || v <= 0 {
				t.Fatalf("cap %v for %q", v, dev)
			}
			finite(t, "blkio cap", v)
		}
	})
}

// The kernel's values are unsigned integers; anything else is ignored,
// where NaN used to become a cap and -1 a huge counter.
func TestCgroupParsersRefuseNonIntegers(t *testing.T) {
	if got := parseIOMax([]byte("7:3 rbps=NaN wbps=-5 riops=+Inf wiops=1e3\n"), fuzzMajMin); len(got) != 0 {
		t.Errorf("io.max = %+v, want no caps", got)
	}
	if got := parseBlkioCaps([]byte("7:3 NaN\n8:0 1e9\n"), fuzzMajMin); len(got) != 0 {
		t.Errorf("blkio caps = %+v, want none", got)
	}
	got := parseIOStat([]byte("7:3 rbytes=NaN wbytes=-1 rios=1.5 wios=7\n"), fuzzMajMin)
	if c := got["7:3"]; c.rbytes != 0 || c.wbytes != 0 || c.rios != 0 || c.wios != 7 {
		t.Errorf("io.stat = %+v", c)
	}
}
