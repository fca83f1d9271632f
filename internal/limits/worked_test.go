package limits

import (
	"math"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// The worked cases from the seed write-ups (issue 5).
func TestWorkedCases(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		name           string
		disk, vm       string
		attached       []string
		ioSize         int64
		write          bool
		wantIOPS       float64 // disk's own sustained IOPS
		wantMBps       float64 // disk's own throughput, MB/s (10^6)
		wantCeilIOPS   float64 // effective ceiling at ioSize (0: skip)
		wantBinds      string
		wantShareAlloc float64 // Mbps allocated to the disk (0: skip)
	}{
		{name: "P15 from a 250 GB claim", disk: "azure:premium-ssd:250GB", ioSize: 4096, wantIOPS: 1100, wantMBps: 125, wantCeilIOPS: 1100, wantBinds: "disk IOPS"},
		{name: "P15 by name", disk: "azure:P15", ioSize: 4096, wantIOPS: 1100, wantMBps: 125},
		{name: "500 GiB Premium SSD is P20", disk: "azure:premium-ssd:500GiB", ioSize: 4096, wantIOPS: 2300, wantMBps: 150},
		{name: "Standard HDD", disk: "azure:standard-hdd:1TiB", ioSize: 4096, wantIOPS: 500, wantMBps: 60},
		{name: "DS2_v2 uncached caps a P30 at 6400 IOPS", disk: "azure:P30", vm: "Standard_DS2_v2", ioSize: 4096, wantIOPS: 5000, wantMBps: 200, wantCeilIOPS: 5000, wantBinds: "disk IOPS"},
		{name: "DS2_v2 uncached throughput 96 MB/s", disk: "azure:P30", vm: "Standard_DS2_v2", ioSize: 1 << 20, wantIOPS: 5000, wantMBps: 200, wantCeilIOPS: 96e6 / (1 << 20), wantBinds: "VM throughput"},
		{name: "IBM 10iops-tier 300 GiB", disk: "ibm:10iops-tier:300GiB", ioSize: 16384, wantIOPS: 3000, wantMBps: 3000 * 256 * 1024 / 1e6},
		{name: "IBM 4 vCPU, one data volume", disk: "ibm:10iops-tier:300GiB", vm: "ibm:bx2-4x16", ioSize: 256 << 10, wantIOPS: 3000, wantMBps: 786.432, wantCeilIOPS: 1607e6 / 8 / (256 << 10), wantBinds: "volume bandwidth share", wantShareAlloc: 1607},
		{name: "IBM 16 vCPU, one data volume: its own limit binds", disk: "ibm:10iops-tier:300GiB", vm: "ibm:bx2-16x64", ioSize: 256 << 10, wantIOPS: 3000, wantMBps: 786.432, wantCeilIOPS: 3000, wantBinds: "disk IOPS", wantShareAlloc: 6291.456},
		{name: "IBM 16 vCPU, two equal volumes", disk: "ibm:10iops-tier:300GiB", vm: "ibm:bx2-16x64", attached: []string{"ibm:10iops-tier:300GiB"}, ioSize: 256 << 10, wantIOPS: 3000, wantMBps: 786.432, wantCeilIOPS: 3803.5e6 / 8 / (256 << 10), wantBinds: "volume bandwidth share", wantShareAlloc: 3803.5},
		{name: "IBM 16 vCPU, volumes with limits 1:2 (5iops-tier 1200 + 2400 GB)", disk: "ibm:5iops-tier:1200GB", vm: "ibm:bx2-16x64", attached: []string{"ibm:5iops-tier:2400GB"}, ioSize: 16384, wantIOPS: 6000, wantMBps: 6000 * 16384 / 1e6, wantShareAlloc: 786.432},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := c.ParseExpectation(tc.disk, tc.vm, tc.attached, "")
			if err != nil {
				t.Fatal(err)
			}
			d := x.Disk
			if !near(d.Read.IOPS, tc.wantIOPS, 0.5) || !near(d.Read.BWBytes/1e6, tc.wantMBps, 0.01) {
				t.Errorf("disk %s: %.1f IOPS %.3f MB/s, want %.1f %.3f", d.Spec, d.Read.IOPS, d.Read.BWBytes/1e6, tc.wantIOPS, tc.wantMBps)
			}
			ce := x.At(tc.ioSize, tc.write)
			if tc.wantCeilIOPS > 0 && (!near(ce.IOPS, tc.wantCeilIOPS, 0.5) || ce.Binds.Name != tc.wantBinds) {
				t.Errorf("ceiling at %d: %.1f IOPS bound by %q, want %.1f by %q", tc.ioSize, ce.IOPS, ce.Binds.Name, tc.wantCeilIOPS, tc.wantBinds)
			}
			if tc.wantShareAlloc > 0 && (x.Share == nil || !near(x.Share.AllocMbps[0], tc.wantShareAlloc, 0.5)) {
				t.Errorf("share %+v, want %.1f Mbps", x.Share, tc.wantShareAlloc)
			}
		})
	}
}
