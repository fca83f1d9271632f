package runner

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// samples are values of an allowed option to try: zero wherever it is
// allowed, the ends of a count's range, every word of an enum.
func samples(sp optSpec) []string {
	switch sp.kind {
	case kSize:
		if sp.min == 0 {
			return []string{"0", "1m"}
		}
		return []string{"1m"}
	case kCount:
		return []string{strconv.FormatInt(sp.min, 10), strconv.FormatInt(sp.max, 10)}
	case kBool:
		return []string{"0", "1"}
	case kFlag:
		return []string{"", "0", "1"}
	case kEnum:
		return sp.words
	case kSeconds, kMicros:
		return []string{"0", "1"}
	case kCPUs:
		return []string{"0"}
	case kBSSplit:
		return []string{"4k/50:8k/"}
	case kRange:
		return []string{"4k-8k"}
	case kSizePair:
		return []string{"0", "1m,2m"}
	case kCountPair:
		return []string{"0", "100,200"}
	case kDistribution:
		return []string{"random", "zipf:1.2"}
	case kPattern:
		return []string{"0xab", "7"}
	}
	return nil
}

// fioDefaults are what fio uses for the typed options iolens leaves out
// of a job when they hold fio's default.
var fioDefaults = map[string]string{"numjobs": "1", "fdatasync": "0", "direct": "0", "time_based": "0", "ramp_time": "0", "rwmixread": "50"}

// fioView is how fio reads a job file: global options, then the job's,
// the last setting of a key winning; aliases and the options that set
// another's value (buffered, rwmixwrite) folded into one key each.
func fioView(t *testing.T, job string) map[string]string {
	t.Helper()
	secs, err := fio.ParseJobFile(job)
	if err != nil {
		t.Fatalf("iolens wrote a job file it cannot read: %v\n%s", err, job)
	}
	view := map[string]string{}
	for _, sec := range secs {
		for _, kv := range sec.Options {
			k, v := fold(kv.Key, kv.Value)
			view[k] = v
		}
	}
	return view
}

// fold names an option by its canonical key and value.
func fold(key, val string) (string, string) {
	if name, _, ok := canonicalName(key); ok {
		key = name
	}
	if sp, ok := allowed[key]; ok && sp.kind == kFlag && val == "" {
		val = "1"
	}
	switch key {
	case "buffered":
		n, _ := strconv.Atoi(val)
		return "direct", strconv.Itoa(1 - n)
	case "rwmixwrite":
		n, _ := strconv.Atoi(val)
		return "rwmixread", strconv.Itoa(100 - n)
	}
	return key, val
}

// Every option a job file may carry reaches fio with its value, zero
// included, and through the record's spec: the job iolens writes from a
// spec read back from JSON is compared with the job file, option by
// option, for every allowed option and alias. (rwmixread=0 and
// rwmixwrite=100 once ran 50/50.)
func TestEveryAllowedOptionReachesFio(t *testing.T) {
	scratch := t.TempDir()
	r := &runner{cfg: Config{SampleInterval: 1e9}, engine: "libaio", scratch: scratch, sharedFile: filepath.Join(scratch, "iolens.dat"),
		target: result.Target{SizeBytes: 1 << 30, Path: scratch}}
	keys := make([]string, 0, len(allowed))
	for k := range allowed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tried := 0
	for _, key := range keys {
		_, sp, _ := canonicalName(key)
		for _, v := range samples(sp) {
			line := key
			if v != "" {
				line += "=" + v
			}
			in := "[global]\nrw=randrw\nruntime=10\nioengine=psync\n[t]\n" + line + "\n"
			suite, err := SuiteFromJobFile("o.fio", in)
			if err != nil {
				t.Errorf("%s: refused: %v", line, err)
				continue
			}
			// The record's spec, as saved and read back.
			b, err := json.Marshal(suite.Tests[0])
			if err != nil {
				t.Fatal(err)
			}
			var spec result.TestSpec
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			jf, err := r.jobFile(r.effective(spec), filepath.Join(scratch, "t"))
			if err != nil {
				t.Errorf("%s: %v", line, err)
				continue
			}
			job := jf.String()
			name, canon, _ := checkOption(key, v)
			wantKey, want := fold(name, canon)
			if wantKey == "runtime" && want == "0" {
				// fio's "no limit": iolens gives such a test its bound.
				want = strconv.Itoa(int(noRuntimeBound.Seconds()))
			}
			got, ok := fioView(t, job)[wantKey]
			if !ok {
				got, ok = fioDefaults[wantKey]
			}
			if !ok || got != want {
				t.Errorf("%s: fio reads %s=%q (set: %v), want %q; spec %s\n%s", line, wantKey, got, ok, want, b, job)
			}
			tried++
		}
	}
	t.Logf("%d option values compared", tried)
	if tried < 2*len(allowedOptions()) {
		t.Errorf("only %d values tried for %d options", tried, len(allowedOptions()))
	}
}

// A mixed test without a share says fio's 50 in its record; 0 stays 0.
func TestMixRecorded(t *testing.T) {
	for in, want := range map[string]int{
		"[t]\nrw=randrw\n":                 50,
		"[t]\nrw=randrw\nrwmixread=0\n":    0,
		"[t]\nrw=rw\nrwmixwrite=100\n":     0,
		"[t]\nrw=readwrite\nrwmixread=1\n": 1,
	} {
		s, err := SuiteFromJobFile("m.fio", in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s.Tests[0])
		var back result.TestSpec
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.RWMixRead != want || !json.Valid(b) || !containsKey(b, "rwmixread") {
			t.Errorf("%q: record %s, want rwmixread %d", in, b, want)
		}
	}
}

func containsKey(b []byte, key string) bool {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	_, ok := m[key]
	return ok
}

func ExampleRegionError() {
	fmt.Println((&RegionError{Test: "w", End: 500 << 30, Limit: 128 << 20, Of: "/dev/loop0", Device: true}).Error())
	// Output: test w: its IO reaches 500.0 GiB into /dev/loop0, past the 128.0 MiB iolens may use
}
