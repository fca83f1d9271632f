package runner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// t builds a direct, time-based libaio test.
func t(name, rw string, bs int64, qd int, runtime, ramp float64) result.TestSpec {
	return result.TestSpec{Name: name, RW: rw, BlockSize: bs, IODepth: qd, NumJobs: 1, Direct: true, IOEngine: "libaio", RuntimeS: runtime, RampS: ramp}
}

const (
	k4   = 4 << 10
	k100 = 100 << 10
	k128 = 128 << 10
	k256 = 256 << 10
	m1   = 1 << 20
)

// fsyncTest is the etcd WAL pattern: small sequential writes, each followed
// by fdatasync, one at a time (IBM's recipe, used by etcd guidance).
func fsyncTest(name string, runtime float64) result.TestSpec {
	return result.TestSpec{Name: name, Description: "etcd WAL pattern: 2300-byte writes, fdatasync after each",
		RW: "write", BlockSize: 2300, IODepth: 1, NumJobs: 1, Direct: false, IOEngine: "sync",
		Fdatasync: 1, SizeBytes: 22 << 20, RuntimeS: runtime, OwnFile: true}
}

func quickTests(runtime, ramp float64) []result.TestSpec {
	return []result.TestSpec{
		t("randread-4k-qd32", "randread", k4, 32, runtime, ramp),
		t("randwrite-4k-qd32", "randwrite", k4, 32, runtime, ramp),
		t("read-1m-qd8", "read", m1, 8, runtime, ramp),
		t("write-1m-qd8", "write", m1, 8, runtime, ramp),
		t("randread-4k-qd1", "randread", k4, 1, runtime, ramp),
		fsyncTest("fdatasync-2300", runtime),
	}
}

func sweep(rw string, runtime, ramp float64) []result.TestSpec {
	var out []result.TestSpec
	for qd := 1; qd <= 64; qd *= 2 {
		s := t(fmt.Sprintf("%s-4k-sweep-qd%d", rw, qd), rw, k4, qd, runtime, ramp)
		s.Group = "qd-sweep:" + rw + "-4k"
		out = append(out, s)
	}
	return out
}

func withDirect(s result.TestSpec, direct bool, engine string) result.TestSpec {
	s.Direct = direct
	s.IOEngine = engine
	return s
}

func withDesc(s result.TestSpec, d string) result.TestSpec { s.Description = d; return s }

func builtinSuites() []result.Suite {
	standard := quickTests(20, 3)
	standard = append(standard, sweep("randread", 15, 2)...)
	standard = append(standard, sweep("randwrite", 15, 2)...)
	rw := t("randrw70-4k-qd32", "randrw", k4, 32, 20, 3)
	rw.RWMixRead = 70
	sustained := t("sustained-write-128k-qd16", "write", k128, 16, 120, 0)
	sustained.Description = "long sequential write: shows burst credits running out and cache stalls over time"
	standard = append(standard, rw, sustained)

	dbench := []result.TestSpec{
		t("read_iops", "randread", k4, 64, 15, 2),
		t("write_iops", "randwrite", k4, 64, 15, 2),
		t("read_bw", "randread", k128, 64, 15, 2),
		t("write_bw", "randwrite", k128, 64, 15, 2),
		t("read_latency", "randread", k4, 4, 15, 2),
		t("write_latency", "randwrite", k4, 4, 15, 2),
		seqJobs(t("read_seq", "read", m1, 16, 15, 2), 4),
		seqJobs(t("write_seq", "write", m1, 16, 15, 2), 4),
		mix(t("rw_mix", "randrw", k4, 64, 15, 2), 75),
	}

	// The 2019 AKS write-up ran 300 s per test with libaio, thread and
	// group_reporting; its tests change one knob at a time.
	aks := []result.TestSpec{
		withDesc(t("test1-write-4k-qd1-direct", "write", k4, 1, 300, 0), "sequential 4k writes, OS cache off (the write-up ran it on a host-cached OS disk)"),
		withDesc(withDirect(t("test2-write-4k-qd1-buffered", "write", k4, 1, 300, 0), false, "libaio"), "OS cache on: fio sees page-cache speed, the disk sees merged writes"),
		withDesc(t("test3-write-4k-qd1-direct", "write", k4, 1, 300, 0), "OS cache off: latency caps IOPS at QD1"),
		withDesc(t("test4-write-4k-qd16-direct", "write", k4, 16, 300, 0), "queue depth 16 reaches the IOPS cap"),
		withDesc(t("test5-write-128k-qd1-direct", "write", k128, 1, 300, 0), "larger blocks at QD1"),
		withDesc(withDirect(t("test6-write-256k-qd1-buffered", "write", k256, 1, 300, 0), false, "libaio"), "buffered: writes go on after fio ends"),
		withDesc(withDirect(t("test7-randwrite-4k-qd1-buffered", "randwrite", k4, 1, 300, 0), false, "libaio"), "buffered random writes: IOPS-limited writeback"),
		withDesc(withDirect(t("test8-randwrite-256k-qd16-buffered", "randwrite", k256, 16, 300, 0), false, "libaio"), "large buffered random writes: bandwidth-limited"),
	}

	// IBM's 2023 OpenShift write-up: 180 s, 10 s ramp, libaio, QD64.
	ibm := []result.TestSpec{
		t("4k-64depth-read", "randread", k4, 64, 180, 10),
		t("1m-64depth-read", "read", m1, 64, 180, 10),
		t("4k-64depth-write", "randwrite", k4, 64, 180, 10),
		mix(t("4k-64depth-read-write", "randrw", k4, 64, 180, 10), 50),
		t("4k-1depth-read", "randread", k4, 1, 180, 10),
	}

	sw := t("sustained-write-direct", "write", m1, 16, 600, 0)
	sw.Description = "sequential 1M writes, OS cache off, for 10 minutes: burst credits, write-cache stalls"
	swb := withDirect(t("sustained-write-buffered", "write", k100, 1, 600, 0), false, "psync")
	swb.Description = "the dd-style buffered 100k writer of the Azure P4 stall write-up; fio's figures include the page cache"
	swb.Options = []result.Option{{Key: "end_fsync", Value: "1"}}

	return []result.Suite{
		{Name: "quick", Description: "about a minute: random and sequential read/write, QD1 latency, fdatasync", Tests: quickTests(7, 2)},
		{Name: "standard", Description: "quick, plus QD sweeps 1..64, 70/30 random mix, and a sustained write", Tests: standard},
		{Name: "dbench", Description: "the nine tests dbench runs (without its gtod_reduce, so latency is measured)", Tests: dbench},
		{Name: "etcd", Description: "etcd's WAL pattern: write, sync engine, fdatasync=1, 22 MiB in 2300-byte writes", Tests: []result.TestSpec{fsyncTest("etcd-fdatasync", 0)}},
		{Name: "aks-2019", Description: "the 8 tests of the 2019 AKS Premium SSD write-up (300 s each; scale with --runtime)", Tests: aks},
		{Name: "ibm-vpc", Description: "the 5 tests of IBM's OpenShift VPC block write-up (180 s each; scale with --runtime)", Tests: ibm},
		{Name: "sustained-write", Description: "10-minute direct and buffered sequential writes (scale with --runtime)", Tests: []result.TestSpec{sw, swb}},
	}
}

func seqJobs(s result.TestSpec, n int) result.TestSpec {
	s.NumJobs = n
	return s
}

func mix(s result.TestSpec, read int) result.TestSpec { s.RWMixRead = read; return s }

// Suites lists the built-in suites.
func Suites() []result.Suite { return builtinSuites() }

// UnknownSuiteError names a suite that does not exist.
type UnknownSuiteError struct{ Name string }

func (e *UnknownSuiteError) Error() string { return fmt.Sprintf("unknown suite %q", e.Name) }

// Hint lists the valid names.
func (e *UnknownSuiteError) Hint() string {
	var names []string
	for _, s := range builtinSuites() {
		names = append(names, s.Name)
	}
	return "valid suites: " + strings.Join(names, ", ") + "; or pass --job FILE.fio ('iolens suites' shows each test)"
}

// LookupSuite returns a built-in suite by name.
func LookupSuite(name string) (result.Suite, error) {
	for _, s := range builtinSuites() {
		if s.Name == name {
			return s, nil
		}
	}
	return result.Suite{}, &UnknownSuiteError{Name: name}
}

// optionsIolensOwns are set by iolens for every test: where the data goes
// and what gets logged. A job file may not override them, so that iolens
// never writes outside its scratch space and always records what it needs.
var optionsIolensOwns = map[string]bool{
	"filename": true, "directory": true, "opendir": true, "filename_format": true,
	"write_bw_log": true, "write_iops_log": true, "write_lat_log": true, "write_hist_log": true,
	"log_avg_msec": true, "per_job_logs": true, "output": true, "output-format": true,
	"unlink": true, "gtod_reduce": true, "disable_lat": true, "disable_clat": true, "disable_slat": true,
}

// SuiteFromJobFile turns a fio job file into a suite: one test per job
// section, with the [global] options applied first. Options that decide
// where fio writes or what it logs are iolens's; a file that sets them is
// refused with the reason, rather than silently changed.
func SuiteFromJobFile(name, text string) (result.Suite, error) {
	jf, err := fio.ParseJobFile(text)
	if err != nil {
		return result.Suite{}, fmt.Errorf("job file %s: %w", name, err)
	}
	s := result.Suite{Name: "job:" + name, Description: "custom fio job file " + name}
	for _, sec := range jf.Jobs {
		opts := append(append([]fio.KV{}, jf.Global...), sec.Options...)
		spec := result.TestSpec{Name: sec.Name, NumJobs: 1, IODepth: 1, Direct: false, RW: "read", BlockSize: 4096}
		for _, kv := range opts {
			k := strings.ToLower(kv.Key)
			if optionsIolensOwns[k] {
				return result.Suite{}, &JobOptionError{File: name, Section: sec.Name, Key: kv.Key}
			}
			if err := applyKnown(&spec, k, kv.Value); err != nil {
				return result.Suite{}, fmt.Errorf("job file %s, section [%s]: %w", name, sec.Name, err)
			}
		}
		// A section that sets its own size gets a file of its own; the
		// others share the run's preconditioned file.
		spec.OwnFile = spec.SizeBytes > 0
		s.Tests = append(s.Tests, spec)
	}
	return s, nil
}

// applyKnown fills the typed fields fio's options map to, and keeps every
// other option verbatim, in order.
func applyKnown(s *result.TestSpec, k, v string) error {
	var err error
	switch k {
	case "rw", "readwrite":
		s.RW = v
	case "bs", "blocksize":
		if s.BlockSize, err = units.ParseSize(v); err != nil {
			return fmt.Errorf("bs: %w (iolens reads a single block size; use bssplit in the options for mixes)", err)
		}
	case "iodepth":
		s.IODepth, err = strconv.Atoi(v)
	case "numjobs":
		s.NumJobs, err = strconv.Atoi(v)
	case "rwmixread":
		s.RWMixRead, err = strconv.Atoi(v)
	case "direct":
		s.Direct = v == "1" || v == "true"
	case "buffered":
		s.Direct = !(v == "" || v == "1" || v == "true")
	case "ioengine":
		s.IOEngine = v
	case "fdatasync":
		s.Fdatasync, err = strconv.Atoi(v)
	case "size":
		if s.SizeBytes, err = units.ParseSize(v); err != nil {
			return fmt.Errorf("size: %w", err)
		}
	case "runtime":
		var d float64
		if d, err = parseSeconds(v); err == nil {
			s.RuntimeS = d
		}
	case "ramp_time":
		var d float64
		if d, err = parseSeconds(v); err == nil {
			s.RampS = d
		}
	case "time_based", "name", "description":
		// time_based follows from runtime; name is the section's.
		if k == "description" {
			s.Description = v
		}
	default:
		s.Options = append(s.Options, result.Option{Key: k, Value: v})
	}
	if err != nil {
		return fmt.Errorf("%s=%s: %w", k, v, err)
	}
	return nil
}

// parseSeconds reads fio time values: "300", "300s", "5m", "1h", "500ms".
func parseSeconds(v string) (float64, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	mult := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		mult, v = 0.001, strings.TrimSuffix(v, "ms")
	case strings.HasSuffix(v, "s"):
		v = strings.TrimSuffix(v, "s")
	case strings.HasSuffix(v, "m"):
		mult, v = 60, strings.TrimSuffix(v, "m")
	case strings.HasSuffix(v, "h"):
		mult, v = 3600, strings.TrimSuffix(v, "h")
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, err
	}
	return f * mult, nil
}

// JobOptionError is a job file option iolens must control itself.
type JobOptionError struct{ File, Section, Key string }

func (e *JobOptionError) Error() string {
	return fmt.Sprintf("job file %s, section [%s]: option %q is set by iolens", e.File, e.Section, e.Key)
}

// Hint says what to do instead.
func (e *JobOptionError) Hint() string {
	return "remove it: iolens places test files in its own scratch directory (choose it with the DIR argument or --device) and always records 1 s logs and latency histograms"
}

// SuiteNames lists the built-in suite names, sorted.
func SuiteNames() []string {
	var out []string
	for _, s := range builtinSuites() {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}
