package limits

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

const (
	mib = 1 << 20
	mb  = 1e6
)

// Cases computed by hand from the provider rules quoted in catalog.yaml.
func TestDiskTable(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		spec                string
		readIOPS, writeIOPS float64
		readBW, writeBW     float64 // bytes/s
		burstIOPS, burstBW  float64
		burstSeconds        float64
	}{
		// Azure
		{spec: "azure:P10", readIOPS: 500, readBW: 100 * mb, burstIOPS: 3500, burstBW: 170 * mb, burstSeconds: 1800},
		{spec: "azure:premium-ssd:129GiB", readIOPS: 1100, readBW: 125 * mb, burstIOPS: 3500, burstBW: 170 * mb, burstSeconds: 1800},
		{spec: "azure:P30", readIOPS: 5000, readBW: 200 * mb, burstIOPS: 30000, burstBW: 1000 * mb}, // on-demand, opt-in
		{spec: "azure:standard-hdd:1TiB", readIOPS: 500, readBW: 60 * mb},
		{spec: "azure:E30", readIOPS: 500, readBW: 60 * mb, burstIOPS: 1000, burstBW: 250 * mb, burstSeconds: 1800},
		{spec: "azure:E4@2019", readIOPS: 120, readBW: 25 * mib},
		{spec: "azure:standard-ssd@2019-06:200GiB", readIOPS: 500, readBW: 60 * mib},
		{spec: "azure:premium-ssd-v2:100GiB:iops=10000,throughput=600", readIOPS: 10000, readBW: 600 * mb},
		{spec: "azure:premium-ssd-v2:8GiB", readIOPS: 3000, readBW: 125 * mb},
		{spec: "azure:ultra:1024GiB:iops=max,throughput=max", readIOPS: 400000, readBW: 10000 * mb},
		{spec: "azure:ultra@2022:100GiB:iops=max,throughput=max", readIOPS: 30000, readBW: 4000 * mb},
		// Provisioned figures left out are the provider's defaults, never
		// the maxima: the Azure Disk CSI driver's DiskIOPSReadWrite 500 and
		// DiskMBpsReadWrite 100 (docs/driver-parameters.md), IBM sdp's
		// 1,000 Mbps floor, gp3's and Premium SSD v2's 3,000 IOPS and 125.
		{spec: "azure:ultra:1024GiB", readIOPS: 500, readBW: 100 * mb},
		{spec: "azure:ultra@2019:1TiB", readIOPS: 500, readBW: 100 * mb},
		{spec: "ibm:sdp:100GB", readIOPS: 3000, readBW: 125 * mb},
		{spec: "aws:gp3:100GiB", readIOPS: 3000, readBW: 125 * mib},
		{spec: "azure:premium-ssd-v2:100GiB", readIOPS: 3000, readBW: 125 * mb},
		{spec: "azure:files-premium:1024GiB", readIOPS: 4024, readBW: 203 * mib, burstIOPS: 10000, burstSeconds: 3600},
		{spec: "azure:files-premium@2020:1024GiB", readIOPS: 1424, readBW: 121.44 * mib, writeBW: 80.96 * mib, burstIOPS: 4000, burstSeconds: 3600},
		{spec: "azure:files-standard:10TiB", readIOPS: 20000, readBW: 300 * mib},
		// AWS
		{spec: "aws:gp2:100GiB", readIOPS: 300, readBW: 128 * mib, burstIOPS: 3000, burstSeconds: 2000},
		{spec: "aws:gp2:20GiB", readIOPS: 100, readBW: 128 * mib, burstIOPS: 3000, burstSeconds: 5.4e6 / 2900},
		{spec: "aws:gp2:200GiB", readIOPS: 600, readBW: 128 * mib, burstIOPS: 3000, burstBW: 250 * mib, burstSeconds: 5.4e6 / 2400},
		{spec: "aws:gp2:1000GiB", readIOPS: 3000, readBW: 250 * mib},
		{spec: "aws:gp2:5334GiB", readIOPS: 16000, readBW: 250 * mib},
		{spec: "aws:gp2@2018-01:5000GiB", readIOPS: 10000, readBW: 160 * mib},
		{spec: "aws:gp3:iops=6000,throughput=250", readIOPS: 6000, readBW: 250 * mib},
		{spec: "aws:gp3:100GiB", readIOPS: 3000, readBW: 125 * mib},
		{spec: "aws:io1:100GiB:iops=5000", readIOPS: 5000, readBW: 500 * mib},
		{spec: "aws:io1:1280GiB:iops=64000", readIOPS: 64000, readBW: 1000 * mib},
		{spec: "aws:io2-bx:256GiB:iops=256000", readIOPS: 256000, readBW: 4000 * mib},
		{spec: "aws:st1:1TiB", readIOPS: 500, readBW: 40 * mib, burstBW: 250 * mib, burstSeconds: float64(1<<40) / (210 * mib)},
		{spec: "aws:sc1:16TiB", readIOPS: 250, readBW: 192 * mib, burstBW: 250 * mib, burstSeconds: float64(16<<40) / (58 * mib)},
		// GCP
		{spec: "gcp:pd-ssd:500GiB", readIOPS: 21000, readBW: 480 * mib},
		{spec: "gcp:pd-balanced:100GiB", readIOPS: 3600, readBW: 168 * mib},
		{spec: "gcp:pd-standard:1000GiB", readIOPS: 750, writeIOPS: 1500, readBW: 120 * mib},
		{spec: "gcp:hyperdisk-throughput:2TiB:throughput=500", readIOPS: 2000, readBW: 500 * mib},
		// IBM
		{spec: "ibm:general-purpose:100GB", readIOPS: 3000, readBW: 3000 * 16 * 1024},
		{spec: "ibm:general-purpose:2000GB", readIOPS: 6000, readBW: 6000 * 16 * 1024},
		{spec: "ibm:5iops-tier:9600GB", readIOPS: 48000, readBW: 768 * mb},
		{spec: "ibm:10iops-tier:600GB", readIOPS: 6000, readBW: 1024 * mb},
		{spec: "ibm:custom:300GB:iops=6000", readIOPS: 6000, readBW: 1024 * mb},
		{spec: "ibm:custom:30GB:iops=500", readIOPS: 500, readBW: 500 * 256 * 1024},
		{spec: "ibm:10iops-tier@2019:200GB", readIOPS: 2000, readBW: 2000 * 256 * 1024},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			d, err := c.ParseDisk(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if tc.writeIOPS == 0 {
				tc.writeIOPS = tc.readIOPS
			}
			if tc.writeBW == 0 {
				tc.writeBW = tc.readBW
			}
			if !near(d.Read.IOPS, tc.readIOPS, 0.01) || !near(d.Write.IOPS, tc.writeIOPS, 0.01) {
				t.Errorf("IOPS read %g write %g, want %g %g", d.Read.IOPS, d.Write.IOPS, tc.readIOPS, tc.writeIOPS)
			}
			if !near(d.Read.BWBytes, tc.readBW, 1) || !near(d.Write.BWBytes, tc.writeBW, 1) {
				t.Errorf("bandwidth read %g write %g, want %g %g", d.Read.BWBytes, d.Write.BWBytes, tc.readBW, tc.writeBW)
			}
			b := d.Burst
			if tc.burstIOPS == 0 && tc.burstBW == 0 {
				if b != nil {
					t.Errorf("burst %+v, want none", b)
				}
				return
			}
			if b == nil {
				t.Fatalf("no burst, want %g IOPS %g B/s", tc.burstIOPS, tc.burstBW)
			}
			if !near(b.IOPS, tc.burstIOPS, 0.01) || !near(b.BWBytes, tc.burstBW, 1) || !near(b.Seconds, tc.burstSeconds, 0.5) {
				t.Errorf("burst %g IOPS %g B/s %g s, want %g %g %g", b.IOPS, b.BWBytes, b.Seconds, tc.burstIOPS, tc.burstBW, tc.burstSeconds)
			}
		})
	}
}

func TestCeilingTable(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		name, disk, vm, cache string
		ioSize                int64
		write                 bool
		iops                  float64
		binds                 string
		burstIOPS             float64 // 0: no burst ceiling
		cacheHitIOPS          float64
	}{
		{name: "gp2 1 MiB IO counts as 4", disk: "aws:gp2:100GiB", ioSize: mib, iops: 75, binds: "disk IOPS", burstIOPS: 128},
		{name: "P10 1 MiB: throughput before counting", disk: "azure:P10", ioSize: mib, iops: 100 * mb / mib, binds: "disk throughput", burstIOPS: 170 * mb / mib},
		{name: "P30 on-demand burst not assumed", disk: "azure:P30", ioSize: 4096, iops: 5000, binds: "disk IOPS"},
		{name: "m5.large baseline binds gp3", disk: "aws:gp3:iops=16000,throughput=1000", vm: "m5.large", ioSize: 16 << 10, iops: 3600, binds: "VM IOPS", burstIOPS: 16000},
		{name: "m5.large throughput at 1 MiB", disk: "aws:gp3:iops=16000,throughput=1000", vm: "aws:m5.large", ioSize: mib, iops: 81.25 * mb / mib, binds: "VM throughput", burstIOPS: 593.75 * mb / mib},
		{name: "n2-standard-4 caps pd-ssd IOPS", disk: "gcp:pd-ssd:500GiB", vm: "n2-standard-4", ioSize: 4096, iops: 15000, binds: "VM IOPS"},
		{name: "n2-standard-4 caps pd-ssd MB/s", disk: "gcp:pd-ssd:500GiB", vm: "n2-standard-4", ioSize: mib, iops: 240, binds: "VM throughput"},
		{name: "n2-standard-4 pd-standard writes", disk: "gcp:pd-standard:20000GiB", vm: "n2-standard-4", ioSize: mib, write: true, iops: 240, binds: "VM throughput"},
		// Google caps pd-standard writes at 400 MiB/s per instance (gcpdiag's
		// N2 table, 8 vCPUs and up): the disk itself never writes faster,
		// whatever its size, so no VM is needed to see it.
		{name: "pd-standard writes cap at 400 MiB/s without a VM", disk: "gcp:pd-standard:20000GiB", ioSize: mib, write: true, iops: 400, binds: "disk throughput"},
		{name: "pd-standard reads cap at 1,200 MiB/s without a VM", disk: "gcp:pd-standard:20000GiB", ioSize: mib, iops: 1200, binds: "disk throughput"},
		{name: "DS2_v2 ReadOnly: hits up to the cached limit", disk: "azure:P15", vm: "Standard_DS2_v2", cache: "readonly", ioSize: 4096, iops: 1100, binds: "disk IOPS", burstIOPS: 3500, cacheHitIOPS: 8000},
		{name: "DS2_v2 ReadOnly writes count against cached MB/s", disk: "azure:P30", vm: "Standard_DS2_v2", cache: "readonly", ioSize: mib, write: true, iops: 64 * mb / mib, binds: "VM cached throughput"},
		{name: "B2s uncached", disk: "azure:P30", vm: "Standard_B2s", ioSize: 4096, iops: 1280, binds: "VM IOPS", burstIOPS: 4000},
		{name: "IBM 2x8: 607 Mbps for one volume", disk: "ibm:general-purpose:1000GB", vm: "ibm:bx2-2x8", ioSize: 256 << 10, iops: 393.216e6 / 8 / (256 << 10), binds: "disk throughput"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := c.ParseExpectation(tc.disk, tc.vm, nil, tc.cache)
			if err != nil {
				t.Fatal(err)
			}
			ce := x.At(tc.ioSize, tc.write)
			if !near(ce.IOPS, tc.iops, 0.01) || ce.Binds.Name != tc.binds {
				t.Errorf("%.3f IOPS bound by %q, want %.3f by %q (limits %+v)", ce.IOPS, ce.Binds.Name, tc.iops, tc.binds, ce.Limits)
			}
			if !near(ce.BWBytes, ce.IOPS*float64(tc.ioSize), 1) {
				t.Errorf("bandwidth %g is not IOPS x size", ce.BWBytes)
			}
			switch {
			case tc.burstIOPS == 0 && ce.Burst != nil:
				t.Errorf("burst %+v, want none", ce.Burst)
			case tc.burstIOPS > 0 && (ce.Burst == nil || !near(ce.Burst.IOPS, tc.burstIOPS, 0.01)):
				t.Errorf("burst %+v, want %g IOPS", ce.Burst, tc.burstIOPS)
			}
			if tc.cacheHitIOPS > 0 && (ce.CacheHit == nil || !near(ce.CacheHit.IOPS, tc.cacheHitIOPS, 0.01)) {
				t.Errorf("cache hit %+v, want %g IOPS", ce.CacheHit, tc.cacheHitIOPS)
			}
		})
	}
}

func TestIBMAllocation(t *testing.T) {
	// The IBM bandwidth doc's example: 3,607 Mbps for data volumes over
	// limits 1,179/1,966/1,179/786 gives 832/1,388/832/555.
	got := Allocate(3607, []float64{1179, 1966, 1179, 786})
	for i, want := range []float64{832, 1388, 832, 555} {
		if math.Abs(got[i]-want) > 1 {
			t.Errorf("volume %d: %.1f Mbps, want %.0f", i, got[i], want)
		}
	}
	// Limits that fit are given in full.
	if got := Allocate(3607, []float64{1179, 1966}); got[0] != 1179 || got[1] != 1966 {
		t.Errorf("fitting limits: %v", got)
	}
	// Seed 002: 300 GB and 600 GB 10iops-tier volumes on a 16 vCPU node.
	// By the profile rules their limits are 6,291 and 8,192 Mbps (1,024
	// MB/s cap), not 1:2 as the write-up assumed.
	c := MustDefault()
	x, err := c.ParseExpectation("ibm:10iops-tier:300GiB", "ibm:bx2-16x64", []string{"ibm:10iops-tier:600GiB"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if a := x.Share.AllocMbps; math.Abs(a[0]-7607*6291.456/(6291.456+8192)) > 1 || math.Abs(a[0]+a[1]-7607) > 0.01 {
		t.Errorf("300+600 GB allocation %v", a)
	}
}

func TestSpecErrors(t *testing.T) {
	c := MustDefault()
	tests := []struct{ spec, msg, hint string }{
		{"nope:P15", "unknown provider", "azure"},
		{"azure:P99", "no disk family or tier", "P15"},
		{"azure", "want PROVIDER:NAME", "azure:P15"},
		{"azure:premium-ssd", "needs a tier or a size", "P15 (256 GiB)"},
		{"azure:premium-ssd:40TiB", "larger than the largest tier", "P80"},
		{"azure:P15:iops=5000", "fixed tiers", "P20"},
		{"aws:gp3:10GiB:iops=6000", "outside 3000-5000", "iops=N"},
		{"aws:gp3@2020:100GiB:iops=20000", "outside 3000-16000", ""},
		{"aws:gp3:200GiB:iops=4000,throughput=1001", "outside 125-1000", ""},
		{"aws:gp2", "needs a size", "size 1-16384"},
		{"azure:premium-ssd-v2@2024:100GiB:iops=10000,throughput=1500", "outside 125-1200", ""},
		{"ibm:5iops-tier:12000GB", "outside 10-9600", ""},
		{"ibm:custom:300GB:iops=7000", "outside 100-6000", ""},
		{"aws:gp2:100XB", "unit must be", "500GiB"},
		{"aws:gp3:iops=NaN", "not a positive number", "iops=6000"},
		{"aws:gp3:iops=Inf", "not a positive number", "iops=6000"},
		{"aws:gp3:throughput=NaN", "not a positive number", "throughput=250"},
		{"aws:gp3:size=NaN", "not a positive number", "size=500GiB"},
		{"aws:gp2@1999:100GiB", "", ""}, // before the oldest edition: the oldest applies
	}
	for _, tc := range tests {
		_, err := c.ParseDisk(tc.spec)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.spec, err)
			}
			continue
		}
		se, ok := err.(*SpecError)
		if !ok || !strings.Contains(se.Msg, tc.msg) || !strings.Contains(se.Hint(), tc.hint) {
			t.Errorf("%s: error %v (hint %q), want %q with hint containing %q", tc.spec, err, hintOf(err), tc.msg, tc.hint)
		}
	}
	if _, err := c.ParseExpectation("azure:P15", "aws:m5.large", nil, ""); err == nil {
		t.Error("an AWS VM accepted an Azure disk")
	}
	if _, err := c.ParseExpectation("azure:P15", "", nil, "writeback"); err == nil {
		t.Error("cache mode writeback accepted")
	}
	x, err := c.ParseExpectation("azure:P50", "Standard_D8s_v3", nil, "readonly")
	if err != nil || x.Cache != CacheNone || len(x.Notes) == 0 {
		t.Errorf("4 TiB disk with readonly cache: %+v %v", x, err)
	}
}

func hintOf(err error) string {
	if se, ok := err.(*SpecError); ok {
		return se.Hint()
	}
	return ""
}

func TestCatalogValidation(t *testing.T) {
	c := MustDefault()
	if len(c.Families) < 20 || len(c.VMs) < 20 {
		t.Fatalf("catalog has %d families and %d VMs", len(c.Families), len(c.VMs))
	}
	bad := []struct{ name, edit, want string }{
		{"unit without base", "unit: MB/s\n        io_unit_kib: 256\n        caching_below_gib: 4096\n        sla: provisioned (99.9% of the time)", "must be MB/s or MiB/s"},
		{"unknown source", "sources: [az-premium-sizes, az-bursting, az-disks-types-2026]", "unknown source"},
		{"unknown field", "schema: iolens.catalog/v1", "not found"},
	}
	repl := []string{
		"unit: MBps\n        io_unit_kib: 256\n        caching_below_gib: 4096\n        sla: provisioned (99.9% of the time)",
		"sources: [az-premium-sizes, az-bursting, az-nowhere]",
		"schema: iolens.catalog/v1\nsurprise: 1",
	}
	for i, b := range bad {
		src := strings.Replace(string(embedded), b.edit, repl[i], 1)
		if src == string(embedded) {
			t.Fatalf("%s: edit did not apply", b.name)
		}
		if _, err := Load(strings.NewReader(src)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want %q", b.name, err, b.want)
		}
	}
	// Every family resolves at its smallest size in every edition.
	for _, f := range c.Families {
		for _, e := range f.Editions {
			if len(e.Tiers) > 0 {
				continue
			}
			if e.SizeGiB == nil {
				continue
			}
			spec := f.ID + "@" + e.From + ":" + strconv.FormatFloat(e.SizeGiB.Max, 'f', -1, 64) + f.sizeUnit()
			if e.IOPS.Provisioned && e.IOPS.Default == 0 {
				// No default: the figure must be given (or max).
				spec += ":iops=max"
			}
			if _, err := c.ParseDisk(spec); err != nil {
				t.Errorf("%s: %v", spec, err)
			}
		}
	}
}
