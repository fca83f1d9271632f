package limits

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// One case per figure the seed write-ups quote. Each states the seed's
// number, and the catalog's where it differs, with why. Expected values
// are the seeds' own numbers or worked by hand from the provider rules in
// catalog.yaml, never read back from the catalog.
func TestSeedFigures(t *testing.T) {
	c := MustDefault()
	x := func(t *testing.T, disk, vm, cache string, attached ...string) *Expectation {
		t.Helper()
		e, err := c.ParseExpectation(disk, vm, attached, cache)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	type figure struct {
		what      string
		got, want float64
		tol       float64
	}
	tests := []struct {
		name string
		// seed is the write-up's number and what it says; differs is why
		// the catalog's figure is not the seed's ("" when it is).
		seed, differs string
		figures       func(t *testing.T) []figure
	}{
		{name: "P15", seed: "000: a 250 GB claim is a P15, 1,100 IOPS and 125 MB/s",
			figures: func(t *testing.T) []figure {
				d := x(t, "azure:premium-ssd:250GB", "", "").Disk
				return []figure{{"tier size GiB", d.SizeGiB, 256, 0}, {"IOPS", d.Read.IOPS, 1100, 0}, {"MB/s", d.Read.BWBytes / 1e6, 125, 0}}
			}},
		{name: "P20", seed: "001: 500 GB Premium SSD, 2,300 IOPS and 150 MBps; 000: 512 GB, 2,300 IOPS and 150 MB/s",
			figures: func(t *testing.T) []figure {
				d := x(t, "azure:premium-ssd:500GB", "", "").Disk
				return []figure{{"tier size GiB", d.SizeGiB, 512, 0}, {"IOPS", d.Read.IOPS, 2300, 0}, {"MB/s", d.Read.BWBytes / 1e6, 150, 0}}
			}},
		{name: "P4", seed: "003 (2019-02): P4, 32 GB, 25 MiB/sec; 000: 25 MB/s and 120 IOPS",
			differs: "today's table says 25 MB/s (10^6); the 2019 table labelled the same figure MiB/sec, so azure:P4@2019-02 gives 26.2 MB/s",
			figures: func(t *testing.T) []figure {
				now := x(t, "azure:P4", "", "").Disk
				then := x(t, "azure:P4@2019-02", "", "").Disk
				return []figure{{"IOPS", now.Read.IOPS, 120, 0}, {"MB/s today", now.Read.BWBytes / 1e6, 25, 0}, {"MiB/s in 2019", then.Read.BWBytes / (1 << 20), 25, 0}}
			}},
		{name: "P30 on D8s_v3, ReadOnly cache", seed: "004: D8s_v3, 1 TB Premium SSD (P30) 5,000 IOPS / 200 MB/s, caching ReadOnly",
			differs: "the disk's own figures match; with ReadOnly caching every IO also counts against the VM's cached limit, 128 MB/s, so large IOs top out there, and uncached the VM allows 192 MB/s",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:P30", "Standard_D8s_v3", "readonly")
				mb := e.At(1<<20, false)
				return []figure{{"disk IOPS", e.Disk.Read.IOPS, 5000, 0}, {"disk MB/s", e.Disk.Read.BWBytes / 1e6, 200, 0},
					{"1 MiB read ceiling MB/s", mb.BWBytes / 1e6, 128, 0.01}}
			}},
		{name: "DS2_v2 uncached and NIC", seed: "001: DS2_v2 max 6,400 IOPS and 96 MBps uncached; NICs 1,500 Mbps, roughly 187.5 MBps",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:P30", "Standard_DS2_v2", "")
				r, _ := e.VMRate(false)
				share := x(t, "azure:files-premium:10TiB", "Standard_DS2_v2", "")
				ce := share.At(1<<20, false)
				return []figure{{"uncached IOPS", r.IOPS, 6400, 0}, {"uncached MB/s", r.BWBytes / 1e6, 96, 0},
					{"a 10 TiB premium share on DS2_v2, MB/s (the NIC binds)", ce.BWBytes / 1e6, 187.5, 0.01}}
			}},
		{name: "Azure Files at the DS2_v2's NIC", seed: "001: Azure Files read at 193 MBps, slightly above the NIC's 187.5 MBps",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:files-premium:10TiB", "Standard_DS2_v2", "")
				fs := c.DiagnoseMeasured(Measured{IOPS: 193e6 / (1 << 20), BWBytes: 193e6, BlockSize: 1 << 20, IODepth: 16, NumJobs: 1, MeanLatNs: 85e6, Read: true, Direct: true}, e)
				vmCap := 0.0
				if len(fs) > 0 && fs[0].Code == result.CodeVMCap && strings.Contains(fs[0].Summary, "VM network") {
					vmCap = 1
				}
				return []figure{{"% of the ceiling", fs[0].Evidence["ceiling_pct"], 193 / 187.5 * 100, 0.01}, {"the VM's network binds", vmCap, 1, 0}}
			}},
		{name: "D64s_v3 cached and uncached", seed: "001: ES and DS v3 at most 128,000 IOPS cached or 80,000 uncached, 1,024 MBps cached or 1,200 uncached (D64s_v3)",
			figures: func(t *testing.T) []figure {
				v := c.VM("Standard_D64s_v3")
				return []figure{{"uncached IOPS", v.Uncached.IOPS, 80000, 0}, {"uncached MB/s", v.Uncached.Tput, 1200, 0},
					{"cached IOPS", v.Cached.IOPS, 128000, 0}, {"cached MB/s", v.Cached.Tput, 1024, 0}}
			}},
		{name: "D8s_v3 cached", seed: "003 and 004 ran on D8s_v3 with host caching; neither quotes its cached limit",
			differs: "no seed figure: the catalog's 16,000 IOPS / 128 MB/s and 200 GiB cache are the Dsv3 table's",
			figures: func(t *testing.T) []figure {
				v := c.VM("Standard_D8s_v3")
				return []figure{{"cached IOPS", v.Cached.IOPS, 16000, 0}, {"cached MB/s", v.Cached.Tput, 128, 0}, {"cache GiB", v.Cached.CacheGiB, 200, 0}}
			}},
		{name: "D2s_v5", seed: "none of the seeds uses a D2s_v5",
			differs: "no seed figure: the catalog's 3,750 IOPS / 85 MB/s uncached (10,000 / 1,200 burst) are the Dsv5 table's",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:P30", "Standard_D2s_v5", "")
				ce := e.At(1<<20, false)
				return []figure{{"uncached IOPS", e.VM.Uncached.IOPS, 3750, 0}, {"1 MiB ceiling MB/s with a P30", ce.BWBytes / 1e6, 85, 0.01}}
			}},
		{name: "Standard HDD 500 GB", seed: "001: Standard HDD pegged at 500 IOPS and 60 MBps (measured 555 IOPS, ~62 MBps)",
			figures: func(t *testing.T) []figure {
				d := x(t, "azure:standard-hdd:500GB", "", "").Disk
				return []figure{{"IOPS", d.Read.IOPS, 500, 0}, {"MB/s", d.Read.BWBytes / 1e6, 60, 0}}
			}},
		{name: "Azure Files standard 5 TiB", seed: "001: standard Azure Files pegged at 1,000 IOPS regardless of size, 5 TB at most",
			figures: func(t *testing.T) []figure {
				d := x(t, "azure:files-standard:5TiB", "", "").Disk
				return []figure{{"IOPS", d.Read.IOPS, 1000, 0}, {"size GiB", d.SizeGiB, 5120, 0}}
			}},
		{name: "Ultra 1 TiB at GA", seed: "001 (2019): Ultra at GA, 160,000 IOPS and 2,000 MBps for a 1 TB disk",
			differs: "today's rules give 400,000 IOPS and 10,000 MB/s; the 2019-08 edition reproduces the seed",
			figures: func(t *testing.T) []figure {
				then := x(t, "azure:ultra@2019:1TiB:iops=max,throughput=max", "", "").Disk
				now := x(t, "azure:ultra:1TiB:iops=max,throughput=max", "", "").Disk
				return []figure{{"IOPS at GA", then.Read.IOPS, 160000, 0}, {"MB/s at GA", then.Read.BWBytes / 1e6, 2000, 0},
					{"IOPS today", now.Read.IOPS, 400000, 0}, {"MB/s today", now.Read.BWBytes / 1e6, 10000, 0}}
			}},
		{name: "IBM 10iops-tier 300 GB", seed: "002: a 300Gi claim, 3,000 IOPS; 750 MB/sec (3000 x 256KB)",
			differs: "IBM computes the limit with KiB: 3,000 x 262,144 B = 786.4 MB/s (6,291 Mbps); the seed's 750 took 256 KB as 250,000 B",
			figures: func(t *testing.T) []figure {
				d := x(t, "ibm:10iops-tier:300GiB", "", "").Disk
				return []figure{{"size GB", d.SizeGiB, 300, 0}, {"IOPS", d.Read.IOPS, 3000, 0}, {"MB/s", d.Read.BWBytes / 1e6, 786.432, 0.001}}
			}},
		{name: "IBM 4-core split", seed: "002: 4 cores, 8,000 Mbps, 2,000 for volumes, 393 for boot, 1,607 Mbps left, 200 MB/sec",
			figures: func(t *testing.T) []figure {
				e := x(t, "ibm:10iops-tier:300GB", "ibm:bx2.4x16", "")
				return []figure{{"available Mbps", e.Share.AvailableMbps, 1607, 0}, {"256 KiB ceiling MB/s", e.At(256<<10, false).BWBytes / 1e6, 200.875, 0.001}}
			}},
		{name: "IBM 16-core split, two 300 GB volumes", seed: "002: 16 cores, 8 Gbit/s for volumes, 7,607 Mbps split evenly, 3,803 Mbps = 475 MB/sec each",
			figures: func(t *testing.T) []figure {
				e := x(t, "ibm:10iops-tier:300GB", "ibm:bx2.16x64", "", "ibm:10iops-tier:300GB")
				return []figure{{"allocated Mbps", e.Share.AllocMbps[0], 3803.5, 0.01}, {"MB/s", e.ShareBWBytes() / 1e6, 475.4375, 0.001}}
			}},
		{name: "IBM 16-core split, 300 GB + 600 GB", seed: "002: a 300 GB and a 600 GB volume split 7,607 Mbps 1:2, 2,536 / 5,071 Mbps",
			differs: "IBM weights by each volume's maximum bandwidth and caps 10iops-tier at 1,024 MB/s (8,192 Mbps), in the documents in force at the seed's date and today: 6,291:8,192 gives 3,304 / 4,303; limits says so",
			figures: func(t *testing.T) []figure {
				e := x(t, "ibm:10iops-tier:300GB", "ibm:bx2.16x64", "", "ibm:10iops-tier:600GB")
				note := 0.0
				for _, n := range e.Notes {
					if strings.Contains(n, "2,536/5,071") && strings.Contains(n, "did not change") {
						note = 1
					}
				}
				return []figure{{"300 GB Mbps", e.Share.AllocMbps[0], 7607 * 6291.456 / (6291.456 + 8192), 0.01},
					{"600 GB Mbps", e.Share.AllocMbps[1], 7607 * 8192 / (6291.456 + 8192), 0.01},
					{"note gives the seed's split", note, 1, 0}}
			}},
		{name: "Prices: 10 TB Premium SSD against Premium Files", seed: "001 (2019): 10 TB of Premium SSD $1,638 a month, 10 TB of Premium Files $1,536",
			figures: func(t *testing.T) []figure {
				ssd := c.DiskCost(x(t, "azure:premium-ssd:10TB", "", "").Disk, "2019")
				files := c.DiskCost(x(t, "azure:files-premium:10TiB", "", "").Disk, "2019")
				if ssd == nil || files == nil {
					t.Fatal("no 2019 price")
				}
				return []figure{{"Premium SSD $/month", ssd.Price.USDPerMonth, 1638, 0}, {"Premium Files $/month", files.Price.USDPerMonth, 1536, 0.001}}
			}},
		{name: "Price: D64s_v3", seed: "001 (2019): a D64s_v3 runs about $3.07 per hour",
			figures: func(t *testing.T) []figure {
				p := c.VMPrice(c.VM("Standard_D64s_v3"), "2019")
				if p == nil {
					t.Fatal("no price")
				}
				return []figure{{"$/hour", p.USDPerHour, 3.07, 0}}
			}},
		{name: "Price: Standard SSD over HDD", seed: "001: Standard SSDs cost about 30% more than Standard HDD",
			differs: "no stored source gives a Standard HDD price, so none is shipped and the ratio cannot be reproduced",
			figures: func(t *testing.T) []figure {
				hdd := c.DiskCost(x(t, "azure:standard-hdd:1TiB", "", "").Disk, "")
				shipped := 0.0
				if hdd != nil {
					shipped = 1
				}
				return []figure{{"Standard HDD prices shipped", shipped, 0, 0}}
			}},
		{name: "QD1 on a P15", seed: "000 test 3: 2-3 ms per 4 KiB direct write at QD1, about 400 IOPS against the 1,100 cap; test 4: QD16 reaches the cap",
			figures: func(t *testing.T) []figure {
				p := x(t, "azure:P15", "", "").PredictLatency(4096, true)
				return []figure{{"QD1 IOPS (2.5 ms)", p.QD1IOPS, 400, 0.5}, {"QD1 IOPS at 3 ms", p.QD1LoIOPS, 333.3, 0.5}, {"QD1 IOPS at 2 ms", p.QD1HiIOPS, 500, 0.5},
					{"queue depth for the cap, at most", float64(p.DepthHi), 4, 0}}
			}},
		{name: "ReadWrite cache: P20 behind a D8s_v3", seed: "003: no stall could be reproduced on a P20 (512 GiB) with ReadWrite caching",
			figures: func(t *testing.T) []figure {
				cf, _ := x(t, "azure:P20", "Standard_D8s_v3", "readwrite").HostCacheFill(1<<20, 0)
				grows := 0.0
				if cf.Grows {
					grows = 1
				}
				return []figure{{"backlog grows", grows, 0, 0}, {"drain MB/s", cf.DrainBPS / 1e6, 150, 0}, {"fill MB/s", cf.FillBPS / 1e6, 128, 0}}
			}},
		{name: "ReadWrite cache: P4 behind a D8s_v3", seed: "003: near 128 MiB/s for 20-30 s, then 0 for 2 minutes and more, over and over",
			differs: "the fill, 3 GiB at 128 MB/s less the drain, is the seed's half a minute; the stall, 3 GiB drained at the 2019 P4's 25 MiB/s (2 min), rests on the 3 GiB backlog iolens assumes from that same fill",
			figures: func(t *testing.T) []figure {
				// The 2019 table's P4: 25 MiB/s.
				cf, _ := x(t, "azure:P4@2019-02", "Standard_D8s_v3", "readwrite").HostCacheFill(1<<20, 0)
				return []figure{{"fill s ('after half a minute or so')", cf.FillSeconds, 30, 2.5}, {"stall s", cf.StallSeconds, float64(3<<30) / (25 << 20), 0.01}}
			}},
		{name: "DS2_v2 ReadOnly cache hits", seed: "001: 8,159 IOPS random read on a DS2_v2 (6,400 IOPS uncached), 'some caching going on'",
			differs: "the 8,000 IOPS cached limit of the DS2_v2 that the managed-premium class's ReadOnly caching reaches",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:P20", "Standard_DS2_v2", "readonly")
				fs := c.DiagnoseMeasured(Measured{IOPS: 8159, BWBytes: 8159 * 4096, BlockSize: 4096, IODepth: 64, NumJobs: 1, MeanLatNs: 7.8e6, Read: true, Direct: true, Random: true}, e)
				vmCap := 0.0
				if fs[0].Code == result.CodeVMCap && strings.Contains(fs[0].Summary, "cached limit") {
					vmCap = 1
				}
				return []figure{{"cache-hit ceiling IOPS", e.At(4096, false).CacheHit.IOPS, 8000, 0}, {"called the VM's cached limit", vmCap, 1, 0}}
			}},
		{name: "IBM two volumes with --volumes-per-node 2", seed: "002: two 300 GB volumes on a 16-core node get 475 MB/sec each, not 750",
			figures: func(t *testing.T) []figure {
				e := x(t, "ibm:10iops-tier:300GB", "ibm:bx2.16x64", "", "ibm:10iops-tier:300GB")
				e.SetConcurrent(2)
				return []figure{{"256 KiB ceiling MB/s", e.At(256<<10, false).BWBytes / 1e6, 475.4375, 0.001}}
			}},
		{name: "etcd fdatasync p99 on a P30", seed: "004: p99 of fdatasync 5.59 to 15.18 ms over 31 regions; westus 10.945 ms",
			figures: func(t *testing.T) []figure {
				m := x(t, "azure:P30", "Standard_D8s_v3", "readonly").LatencyModel()
				within := 0.0
				if m.FsyncP99LoNs <= 10.945e6 && 10.945e6 <= m.FsyncP99HiNs && m.Etcd() == "uncertain" {
					within = 1
				}
				return []figure{{"band low ms", m.FsyncP99LoNs / 1e6, 5.59, 0}, {"band high ms", m.FsyncP99HiNs / 1e6, 15.18, 0}, {"westus in the band, etcd uncertain", within, 1, 0}}
			}},
		{name: "ReadWrite cache, sequential 4 KiB writes into a P4", seed: "000 test 1 (2019-02): 11,500 IOPS of sequential 4 KiB direct writes at first, then hangs of up to 108 s",
			differs: "the cache drains sequential writes merged, at the P4's 26.2 MB/s (2019 table, 25 MiB/s): 3 GiB (the backlog fitted to seed 003) takes about 123 s, 14% over the seed's longest; drained at 120 IOs of 4 KiB it would take 1.8 h",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:P4@2019-02", "", "readwrite")
				e.Cache = CacheReadWrite // no VM given: the seed's OS disk
				seq, _ := e.HostCacheFillPattern(4096, 11500*4096, true)
				rnd, _ := e.HostCacheFillPattern(4096, 11500*4096, false)
				return []figure{{"sequential stall s", seq.StallSeconds, 3.0 * (1 << 30) / (25 * (1 << 20)), 0.5},
					{"random stall h", rnd.StallSeconds / 3600, 3 * (1 << 30) / (120 * 4096) / 3600.0, 0.01}}
			}},
		{name: "P4 ReadWrite on D8s_v3 today: the verdict agrees with the burst table", seed: "003 (2019-02): the P4 stalled after half a minute at 128 MiB/s",
			differs: "today's P4 bursts to 170 MB/s for 30 min (az-bursting), faster than the 128 MB/s the D8s_v3's cache takes: no backlog while the credits last, the same 30 min the burst table shows; once they are spent, 31 s of filling and 2.1 min of stall as in 2019",
			figures: func(t *testing.T) []figure {
				e := x(t, "azure:P4", "Standard_D8s_v3", "readwrite")
				cf, _ := e.HostCacheFill(1<<20, 0)
				table := e.At(1<<20, true).Burst.Seconds
				return []figure{{"no backlog while credits last (burst fill s)", cf.BurstFillSeconds, 0, 0},
					{"credits last as in the burst table, s", cf.BurstSeconds, table, 0}, {"burst table s", table, 1800, 0},
					{"fill s after the credits", cf.FillSeconds, 3 * (1 << 30) / (128e6 - 25e6), 0.5}}
			}},
		{name: "Standard_B2s a month", seed: "000 (2019-02): a B2s costs roughly $38 a month",
			figures: func(t *testing.T) []figure {
				p := c.VMPrice(c.VM("B2s"), "2019")
				now := c.VMPrice(c.VM("B2s"), "")
				shown := 0.0
				if now != nil {
					shown = 1
				}
				return []figure{{"$/hour in 2019", p.USDPerHour, 0.052, 0}, {"2019 price among today's", shown, 0, 0}}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range tc.figures(t) {
				if f.got < f.want-f.tol || f.got > f.want+f.tol {
					msg := "seed " + tc.seed
					if tc.differs != "" {
						msg += "; catalog differs: " + tc.differs
					}
					t.Errorf("%s: got %g, want %g (%s)", f.what, f.got, f.want, msg)
				}
			}
		})
	}
}
