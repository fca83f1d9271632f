package limits

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func mkResult(rw string, bs int64, qd int, iops, latMs float64) *result.Result {
	d := &result.DirResult{IOPS: iops, BWBytes: iops * float64(bs), Lat: result.Latency{MeanNs: latMs * 1e6}}
	r := &result.Result{Status: "ok", Test: result.TestSpec{RW: rw, BlockSize: bs, IODepth: qd, NumJobs: 1, Direct: true}}
	if strings.Contains(rw, "write") {
		r.Write = d
	} else {
		r.Read = d
	}
	return r
}

func TestDiagnose(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		name            string
		disk, vm, cache string
		attached        []string
		r               *result.Result
		verdict         string
		sev             string
		contains        []string
		extraFindings   int
	}{
		{name: "seed 000 test 3: QD1 at 2.5 ms", disk: "azure:P15", r: mkResult("write", 4096, 1, 400, 2.5), verdict: result.CodeLatency, sev: "info",
			contains: []string{"latency-bound", "2.5 ms at QD1 allows at most 400 IOPS; the cap is 1,100", "raise iodepth"}},
		{name: "seed 000 test 4: QD16 at the cap", disk: "azure:P15", r: mkResult("write", 4096, 16, 1098, 14.5), verdict: result.CodeDiskIOPS, sev: "info",
			contains: []string{"at the disk IOPS cap", "100%", "azure:P20 gives 2,300 IOPS"}},
		{name: "256 KiB at the bandwidth cap", disk: "azure:P15", r: mkResult("randwrite", 256<<10, 16, 470, 34), verdict: result.CodeDiskBandwidth,
			contains: []string{"at the disk bandwidth cap", "azure:P20 gives 2,300 IOPS, 150 MB/s"}},
		{name: "DS2_v2 caps a P30 at 96 MB/s", disk: "azure:P30", vm: "Standard_DS2_v2", r: mkResult("read", 1<<20, 8, 91, 88), verdict: result.CodeVMCap,
			contains: []string{"the VM cap binds", "VM throughput", "Standard_D8s_v5 (12,800 IOPS, 290 MB/s)"}},
		{name: "seed 002: 4 vCPU node share", disk: "ibm:10iops-tier:300GiB", vm: "ibm:bx2-4x16", r: mkResult("randrw", 256<<10, 64, 765, 80), verdict: result.CodeNodeShare,
			contains: []string{"node bandwidth share binds", "1,607", "ibm:bx2-"}},
		{name: "seed 002: two volumes", disk: "ibm:10iops-tier:300GiB", vm: "ibm:bx2-16x64", attached: []string{"ibm:10iops-tier:300GiB"}, r: mkResult("read", 256<<10, 64, 1800, 35), verdict: result.CodeNodeShare,
			contains: []string{"fewer volumes"}},
		{name: "fresh P15 bursting", disk: "azure:P15", r: mkResult("randread", 4096, 32, 3400, 9), verdict: result.CodeAboveCeiling, sev: "warn",
			contains: []string{"above the ceiling", "burst credits", "--until-steady"}},
		{name: "buffered IO above the ceiling", disk: "azure:P15", r: func() *result.Result {
			r := mkResult("write", 1<<20, 1, 600, 1)
			r.Test.Direct = false
			return r
		}(), verdict: result.CodeAboveCeiling, contains: []string{"page cache"}},
		{name: "unexplained shortfall", disk: "aws:gp3:iops=6000,throughput=250", r: mkResult("randread", 4096, 32, 1500, 1), verdict: result.CodeBelowCeiling, sev: "warn",
			contains: []string{"well below the ceiling", "noisy neighbour"}},
		// Written no faster than the disk drains (120 IOPS of 4 KiB): no
		// backlog builds, so no stall is predicted.
		{name: "ReadWrite cache and random writes at the disk's rate", disk: "azure:P4", vm: "Standard_D8s_v3", cache: "readwrite", r: mkResult("randwrite", 4096, 16, 120, 130), verdict: result.CodeDiskIOPS,
			contains: []string{"at the disk IOPS cap"}},
		// Seed 003: dd of 100 KiB blocks to a P4 with ReadWrite caching on a
		// D8s v3 wrote near 128 MiB/s, then stalled for minutes.
		{name: "seed 003: ReadWrite cache and sequential writes", disk: "azure:P4", vm: "Standard_D8s_v3", cache: "readwrite", r: mkResult("write", 100<<10, 9, 1280, 7), verdict: result.CodeAboveCeiling, extraFindings: 1},
		// Seed 000 test 1: sequential 4 KiB direct writes at QD1 on the OS
		// disk (ReadWrite): 11,500 IOPS at first, then hangs.
		{name: "seed 000 test 1: ReadWrite cache and sequential 4 KiB writes", disk: "azure:P4", cache: "readwrite", r: mkResult("write", 4096, 1, 11500, 0.08), verdict: result.CodeAboveCeiling, extraFindings: 1},
		// etcd's test: buffered 2,300 B writes, each followed by an
		// fdatasync of about 19 ms on a P30. The write itself lands in the
		// page cache in 29 µs; the sync is what bounds the rate, and only
		// a lower sync latency helps: no "below the ceiling" unexplained,
		// no deeper queue, no latency model of the disk's IO compared with
		// the page cache's.
		{name: "fdatasync-bound etcd test", disk: "azure:P30", r: func() *result.Result {
			r := mkResult("write", 2300, 1, 51.9, 0.0293)
			r.Test.Direct, r.Test.Fdatasync = false, 1
			r.Sync = &result.DirResult{IOPS: 51.9, Lat: result.Latency{MeanNs: 19.2e6}}
			return r
		}(), verdict: result.CodeLatency, sev: "info", contains: []string{"latency-bound", "the sync 19.2 ms", "only from a lower sync latency"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := c.ParseExpectation(tc.disk, tc.vm, tc.attached, tc.cache)
			if err != nil {
				t.Fatal(err)
			}
			fs := c.Diagnose(tc.r, x)
			if len(fs) != 1+tc.extraFindings {
				t.Fatalf("%d findings, want %d: %+v", len(fs), 1+tc.extraFindings, fs)
			}
			f := fs[0]
			if f.Kind != KindCeiling || f.Code != tc.verdict {
				t.Errorf("verdict %v, want %v: %s", f.Code, tc.verdict, f.Summary)
			}
			if tc.sev != "" && f.Severity != tc.sev {
				t.Errorf("severity %s, want %s", f.Severity, tc.sev)
			}
			for _, s := range tc.contains {
				if !strings.Contains(f.Summary, s) {
					t.Errorf("summary lacks %q:\n%s", s, f.Summary)
				}
			}
			if tc.r.Sync != nil && (strings.Contains(f.Summary, "latency model") || strings.Contains(f.Summary, "iodepth")) {
				t.Errorf("a sync-bound test compared with the disk's latency model or told to go deeper: %s", f.Summary)
			}
			if tc.extraFindings > 0 && !strings.Contains(fs[1].Summary, "cachingMode: None") {
				t.Errorf("no advice to disable the ReadWrite cache: %s", fs[1].Summary)
			}
			if tc.extraFindings > 0 && (fs[1].Code != result.CodeHostCacheRW || fs[1].Dir != "write") {
				t.Errorf("ReadWrite finding code %q dir %q", fs[1].Code, fs[1].Dir)
			}
			if tc.extraFindings > 0 && !strings.HasPrefix(tc.r.Test.RW, "rand") && !strings.Contains(fs[1].Summary, "sequential writes") {
				t.Errorf("the ReadWrite finding does not say the writes were sequential: %s", fs[1].Summary)
			}
		})
	}
	// A failed test gets no ceiling finding.
	r := mkResult("read", 4096, 1, 100, 1)
	r.Status = "failed"
	if fs := c.Diagnose(r, &Expectation{}); fs != nil {
		t.Errorf("failed result diagnosed: %+v", fs)
	}
}

func TestSmallest(t *testing.T) {
	c := MustDefault()
	sz, err := c.Smallest("azure", Target{IOPS: 5000, BWBytes: 200e6, VM: "Standard_D4s_v3"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Option{}
	for _, o := range sz.Options {
		got[o.Disk.Family.ID] = o
	}
	// By hand: Premium SSD P30 (5,000 / 200); Standard SSD E70 is the
	// first with 200 MB/s but has 4,000 IOPS, so E80; Premium SSD v2 at
	// 10 GiB (500 IOPS/GiB) with 5,000 IOPS and 200 MB/s.
	want := map[string]string{
		"azure:premium-ssd":    "azure:P30",
		"azure:standard-ssd":   "azure:E80",
		"azure:premium-ssd-v2": "azure:premium-ssd-v2:10GiB:iops=5000,throughput=200",
	}
	for fam, spec := range want {
		if got[fam].Spec != spec {
			t.Errorf("%s: %q, want %q", fam, got[fam].Spec, spec)
		}
	}
	if o, ok := got["azure:standard-hdd"]; ok {
		t.Errorf("no Standard HDD tier has 5,000 IOPS, got %s", o.Spec)
	}
	if o := got["azure:premium-ssd"]; !strings.Contains(o.VMBinds, "Standard_D4s_v3") {
		t.Errorf("D4s_v3 (6,400 IOPS, 96 MB/s) cannot carry 200 MB/s: %q", o.VMBinds)
	}
}

func TestBiggerKeepsTheOtherResource(t *testing.T) {
	c := MustDefault()
	for _, tc := range []struct {
		disk string
		iops bool
	}{
		{"azure:premium-ssd-v2:iops=16000,throughput=150", true},
		{"azure:premium-ssd-v2:iops=16000,throughput=150", false},
		{"aws:gp3:iops=6000,throughput=250", true},
		{"aws:gp3:iops=6000,throughput=250", false},
		{"aws:gp2:100GiB", true},
	} {
		d, err := c.ParseDisk(tc.disk)
		if err != nil {
			t.Fatal(err)
		}
		nd := c.Bigger(d, tc.iops)
		if nd == nil {
			t.Errorf("%s: nothing bigger", tc.disk)
			continue
		}
		more, same := nd.Read.IOPS/d.Read.IOPS, nd.Read.BWBytes/d.Read.BWBytes
		if !tc.iops {
			more, same = same, more
		}
		if more < 2*0.9999 || same < 0.9999 {
			t.Errorf("%s (iops %v): %s gives %.0f IOPS, %.0f B/s", tc.disk, tc.iops, nd.Spec, nd.Read.IOPS, nd.Read.BWBytes)
		}
	}
}
