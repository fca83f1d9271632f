package runner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
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

	// The 2019 AKS write-up's jobs.fio: libaio, thread, group_reporting,
	// cpus_allowed=1, one shared 10 GiB file (size=10g, binary as fio
	// reads it) and runtime=300s without time_based, so each test stops
	// when it has written 10 GiB or after 300 s, whichever comes first.
	// Its tests change one knob at a time.
	aks := []result.TestSpec{
		withDesc(aks2019("test1-write-4k-qd1-direct", "write", k4, 1, true), "sequential 4k writes, OS cache off (the write-up ran it on a host-cached OS disk)"),
		withDesc(aks2019("test2-write-4k-qd1-buffered", "write", k4, 1, false), "OS cache on: fio sees page-cache speed, the disk sees merged writes"),
		withDesc(aks2019("test3-write-4k-qd1-direct", "write", k4, 1, true), "OS cache off: latency caps IOPS at QD1"),
		withDesc(aks2019("test4-write-4k-qd16-direct", "write", k4, 16, true), "queue depth 16 reaches the IOPS cap"),
		withDesc(aks2019("test5-write-128k-qd1-direct", "write", k128, 1, true), "larger blocks at QD1"),
		withDesc(aks2019("test6-write-256k-qd1-buffered", "write", k256, 1, false), "buffered: writes go on after fio ends"),
		withDesc(aks2019("test7-randwrite-4k-qd1-buffered", "randwrite", k4, 1, false), "buffered random writes: IOPS-limited writeback"),
		withDesc(aks2019("test8-randwrite-256k-qd16-buffered", "randwrite", k256, 16, false), "large buffered random writes: bandwidth-limited"),
	}

	// IBM's 2023 OpenShift write-up: libaio, direct, --size=5G (5 GiB as
	// fio reads it), time_based, 180 s after a 10 s ramp, group_reporting.
	// Its figures 2-4 are the read/write mix with 256 KiB blocks, which
	// showed the VSI's volume bandwidth split.
	ibm := []result.TestSpec{
		ibmVPC(t("4k-64depth-read", "randread", k4, 64, 180, 10)),
		ibmVPC(t("1m-64depth-read", "read", m1, 64, 180, 10)),
		ibmVPC(t("4k-64depth-write", "randwrite", k4, 64, 180, 10)),
		ibmVPC(mix(t("4k-64depth-read-write", "randrw", k4, 64, 180, 10), 50)),
		ibmVPC(t("4k-1depth-read", "randread", k4, 1, 180, 10)),
		withDesc(ibmVPC(mix(t("256k-64depth-read-write", "randrw", k256, 64, 180, 10), 50)), "the write-up's figures 2-4: 256 KiB blocks reach the bandwidth cap (or the VSI's share of it) before the IOPS cap"),
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
		{Name: "aks-2019", Description: "the 8 tests of the 2019 AKS Premium SSD write-up: a 10 GiB file, each test stops at 10 GiB or 300 s (scale with --size and --runtime)", Tests: aks},
		{Name: "ibm-vpc", Description: "the 6 tests of IBM's OpenShift VPC block write-up: a 5 GiB file, 180 s each after a 10 s ramp (scale with --size and --runtime)", Tests: ibm},
		{Name: "sustained-write", Description: "10-minute direct and buffered sequential writes (scale with --runtime)", Tests: []result.TestSpec{sw, swb}},
	}
}

const (
	aksSize = 10 << 30
	ibmSize = 5 << 30
)

// aks2019 is one test of the 2019 AKS write-up's jobs.fio.
func aks2019(name, rw string, bs int64, qd int, direct bool) result.TestSpec {
	s := t(name, rw, bs, qd, 300, 0)
	s.Direct, s.StopAtSize, s.SizeBytes = direct, true, aksSize
	s.Options = []result.Option{{Key: "thread"}, {Key: "cpus_allowed", Value: "1"}}
	return s
}

func ibmVPC(s result.TestSpec) result.TestSpec {
	s.SizeBytes = ibmSize
	return s
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

// SuiteNames lists the built-in suite names, sorted.
func SuiteNames() []string {
	var out []string
	for _, s := range builtinSuites() {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// UnknownTestError names a test a suite does not have.
type UnknownTestError struct {
	Suite, Name string
	Tests       []string
}

func (e *UnknownTestError) Error() string {
	return fmt.Sprintf("suite %q has no test %q", e.Suite, e.Name)
}

// Hint lists the suite's tests.
func (e *UnknownTestError) Hint() string {
	return "tests of " + e.Suite + ": " + strings.Join(e.Tests, ", ") + " ('iolens suites' shows each)"
}

// SelectTests keeps the tests of s that names name, in the suite's order
// (seed 000 ran its first test alone, on the OS disk). Each name must be a
// test of the suite; none keeps them all.
func SelectTests(s result.Suite, names []string) (result.Suite, error) {
	if len(names) == 0 {
		return s, nil
	}
	var all []string
	have := map[string]bool{}
	for _, t := range s.Tests {
		all = append(all, t.Name)
		have[t.Name] = true
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !have[n] {
			return s, &UnknownTestError{Suite: s.Name, Name: n, Tests: all}
		}
		want[n] = true
	}
	out := s
	out.Tests = nil
	for _, t := range s.Tests {
		if want[t.Name] {
			out.Tests = append(out.Tests, t)
		}
	}
	return out, nil
}
