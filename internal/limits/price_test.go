package limits

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Prices worked by hand from the entries' rates in catalog.yaml.
func TestDiskCost(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		spec, date   string
		month        float64
		asOf, region string
		perIOPS      float64
		note         string
	}{
		{spec: "azure:P30", month: 135.17, asOf: "2026", perIOPS: 135.17 / 5000},
		{spec: "azure:P30", date: "2019", month: 135.17, asOf: "2016"},
		{spec: "azure:premium-ssd:500GiB", date: "2016", month: 73.22, asOf: "2016"},
		{spec: "azure:P70@2019", month: 1638, asOf: "2019", region: "eastus2"},
		{spec: "azure:files-premium:1024GiB", date: "2019", month: 0.15 * 1024, asOf: "2019"},
		// gp3: capacity plus IOPS above the 3,000 included and throughput
		// above the 125 included.
		{spec: "aws:gp3:100GiB:iops=6000", month: 100*0.08 + 3000*0.005, asOf: "2025-05", region: "us-east-1"},
		{spec: "aws:gp3:100GiB:iops=3000,throughput=250", month: 8 + 125*0.04},
		{spec: "aws:gp3:100GiB:iops=3000,throughput=250", date: "2023-12", month: 8, asOf: "2023-07", note: "no sourced rate for provisioned throughput"},
		{spec: "aws:gp2:500GiB", month: 50, asOf: "2026"},
		// io1 at one rate, io2 in bands above 32,000 and 64,000 IOPS.
		{spec: "aws:io1:100GiB:iops=3000", month: 12.5 + 3000*0.065, asOf: "2026"},
		{spec: "aws:io2:100GiB:iops=5000", month: 12.5 + 5000*0.065},
		{spec: "aws:io2:100GiB:iops=100000", month: 12.5 + 32000*0.065 + 32000*0.046 + 36000*0.032},
		// Premium SSD v2: capacity, IOPS above 3,000, MB/s above 125.
		{spec: "azure:premium-ssd-v2:100GiB:iops=5000,throughput=200", month: 100*0.0803 + 2000*0.00511 + 75*0.04015, region: "eastus"},
		{spec: "gcp:pd-ssd:200GiB", month: 34, asOf: "2026"},
		{spec: "gcp:pd-standard:200GiB", month: 8},
	}
	for _, tc := range tests {
		t.Run(tc.spec+"@"+tc.date, func(t *testing.T) {
			d, err := c.ParseDisk(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			co := c.DiskCost(d, tc.date)
			if co == nil {
				t.Fatal("no price")
			}
			p := co.Price
			if math.Abs(p.USDPerMonth-tc.month) > 1e-6 {
				t.Errorf("$%g a month, want $%g", p.USDPerMonth, tc.month)
			}
			if tc.asOf != "" && p.AsOf != tc.asOf || tc.region != "" && p.Region != tc.region {
				t.Errorf("as of %s in %s, want %s in %s", p.AsOf, p.Region, tc.asOf, tc.region)
			}
			if p.Source == "" || p.Region == "" || p.AsOf == "" {
				t.Errorf("price without source, region or date: %+v", p)
			}
			if tc.perIOPS > 0 && math.Abs(co.USDPerIOPS-tc.perIOPS) > 1e-9 {
				t.Errorf("$%g per IOPS, want $%g", co.USDPerIOPS, tc.perIOPS)
			}
			if tc.note != "" && !strings.Contains(strings.Join(p.Notes, "; "), tc.note) {
				t.Errorf("notes %q lack %q", p.Notes, tc.note)
			}
		})
	}
	// No source states these: nothing is shipped.
	for _, spec := range []string{"ibm:10iops-tier:300GB", "azure:standard-hdd:1TiB", "aws:st1:1TiB"} {
		d, err := c.ParseDisk(spec)
		if err != nil {
			t.Fatal(err)
		}
		if co := c.DiskCost(d, ""); co != nil {
			t.Errorf("%s: unsourced price shipped: %+v", spec, co.Price)
		}
	}
	if p := c.VMPrice(c.VM("aws:m5.large"), ""); p != nil {
		t.Errorf("unsourced VM price shipped: %+v", p)
	}
}

// Prices of one era: the default leaves older prices out and says why;
// a sized family asked for without its size gets rates, never "$0.0000".
func TestPriceEraAndGaps(t *testing.T) {
	c := MustDefault()
	gap := func(spec, date string) string {
		t.Helper()
		d, err := c.ParseDisk(spec)
		if err != nil {
			t.Fatal(err)
		}
		if co := c.DiskCost(d, date); co != nil {
			t.Fatalf("%s@%s priced: %+v", spec, date, co.Price)
		}
		return c.PriceGap(d, date)
	}
	// The issue: 2016 P20 and 2019 P70 / Premium Files beside 2026 prices.
	for spec, want := range map[string]string{
		"azure:P20":                   "the newest sourced is $73.22 a month (2016): --price-as-of 2016 uses it",
		"azure:P70":                   "the newest sourced is $1,638 a month (2019): --price-as-of 2019 uses it",
		"azure:files-premium:1024GiB": "--price-as-of 2019",
		"ibm:10iops-tier:300GB":       "no price for ibm:10iops-tier: IBM's catalog prices",
		"azure:standard-hdd:1TiB":     "no price for azure:S30: Microsoft's list prices",
	} {
		if g := gap(spec, ""); !strings.Contains(g, want) {
			t.Errorf("%s: gap %q, want %q", spec, g, want)
		}
	}
	if g := gap("azure:P30", "2010"); !strings.Contains(g, "no price for azure:P30 in force at 2010; the oldest sourced is $135.17 a month (2016)") {
		t.Errorf("too early: %q", g)
	}
	if p := c.VMPrice(c.VM("Standard_D64s_v3"), ""); p != nil {
		t.Errorf("a 2019 VM price among today's: %+v", p)
	}
	d, _ := c.ParseDisk("aws:gp3")
	co := c.DiskCost(d, "")
	if co == nil || !co.Price.NoTotal || co.Price.USDPerMonth != 0 || !strings.Contains(co.Price.Rates, "$0.08 per GiB-month, $0.005 per IOPS-month above 3,000, $0.04 per MiB/s-month above 125") {
		t.Fatalf("gp3 without a size: %+v", co)
	}
	b, _ := json.Marshal(co)
	if strings.Contains(string(b), "usd_per_month") || !strings.Contains(string(b), `"rates":"$0.08 per GiB-month`) {
		t.Errorf("gp3 without a size, JSON %s", b)
	}
	for _, x := range []float64{0.00511, 0.0000123, 0.004, 0.27, 3, 1638} {
		u := units.USD(x)
		if v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimPrefix(u, "$"), ",", ""), 64); err != nil || v <= 0 || math.Abs(v-x)/x > 0.05 {
			t.Errorf("units.USD(%g) = %s", x, u)
		}
	}
	if units.USD(0.00511) != "$0.0051" || units.USD(0.0000123) != "$0.000012" || units.USD(0) != "$0" {
		t.Errorf("usd: %s %s %s", units.USD(0.00511), units.USD(0.0000123), units.USD(0))
	}
}

func TestPerMeasured(t *testing.T) {
	c := MustDefault()
	d, _ := c.ParseDisk("azure:P30")
	co := c.DiskCost(d, "")
	// $135.17 for 4,000 IOPS and 150 MB/s measured.
	i, m := co.PerMeasured(4000, 150e6)
	if math.Abs(i-135.17/4000) > 1e-12 || math.Abs(m-135.17/150) > 1e-12 {
		t.Errorf("%g %g", i, m)
	}
	if i, m := (*Cost)(nil).PerMeasured(1, 1); i != 0 || m != 0 {
		t.Error("no price gives a cost")
	}
}

func TestValidPriceDate(t *testing.T) {
	for s, want := range map[string]bool{"2019": true, "2023-09": true, "2019-13": false, "2019-00": false, "19": false, "2019-1": false, "2019-09-01": false, "abcd": false, "": false} {
		if ValidPriceDate(s) != want {
			t.Errorf("%q: %v", s, !want)
		}
	}
}

func TestPriceJSON(t *testing.T) {
	c := MustDefault()
	d, _ := c.ParseDisk("azure:P30")
	b, err := json.Marshal(c.DiskCost(d, ""))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Price map[string]any `json:"price"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Price["usd_per_month"] != 135.17 || got.Price["region"] == nil || got.Price["as_of"] != "2026" || !strings.Contains(got.Price["source"].(string), "http") {
		t.Errorf("disk price JSON %s", b)
	}
	if _, ok := got.Price["usd_per_hour"]; ok {
		t.Errorf("a monthly price carries usd_per_hour: %s", b)
	}
	b, _ = json.Marshal(c.VMPrice(c.VM("Standard_D64s_v3"), "2019"))
	var vm map[string]any
	if err := json.Unmarshal(b, &vm); err != nil {
		t.Fatal(err)
	}
	if vm["usd_per_hour"] != 3.07 || vm["usd_per_month"] != nil || vm["as_of"] != "2019" {
		t.Errorf("VM price JSON %s", b)
	}
}

func TestPriceFile(t *testing.T) {
	c := MustDefault()
	good := `sources:
  contract: {title: "our 2026 agreement", note: "internal"}
prices:
  - {family: azure:premium-ssd, tier: P30, usd_per_month: 99, region: westeurope, as_of: "2026-03", source: contract}
  - {family: ibm:10iops-tier, usd_per_gib_month: 0.2, region: eu-de, as_of: "2026-03", source: contract}
  - {vm: ibm:bx2-16x64, usd_per_hour: 0.9, region: eu-de, as_of: "2026-03", source: contract}
`
	pf, err := c.ParsePriceFile(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	uc, err := c.WithPrices(pf)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := uc.ParseDisk("azure:P30")
	if co := uc.DiskCost(d, ""); co == nil || co.Price.USDPerMonth != 99 || co.Price.Region != "westeurope" || !strings.Contains(co.Price.Source, "our 2026 agreement") {
		t.Errorf("the user's price does not win: %+v", co)
	}
	d, _ = uc.ParseDisk("ibm:10iops-tier:300GB")
	if co := uc.DiskCost(d, ""); co == nil || math.Abs(co.Price.USDPerMonth-60) > 1e-9 {
		t.Errorf("IBM 300 GB at $0.20/GB: %+v", co)
	}
	// The built-in catalog is untouched.
	if co := c.DiskCost(d, ""); co != nil {
		t.Errorf("WithPrices changed the catalog: %+v", co)
	}
	bad := map[string]string{
		"no source":       `prices: [{family: azure:premium-ssd, tier: P30, usd_per_month: 1, region: x, as_of: "2026"}]`,
		"unlisted source": `prices: [{family: azure:premium-ssd, tier: P30, usd_per_month: 1, region: x, as_of: "2026", source: nowhere}]`,
		"no region":       `{sources: {s: {title: t}}, prices: [{family: azure:premium-ssd, tier: P30, usd_per_month: 1, as_of: "2026", source: s}]}`,
		"bad date":        `{sources: {s: {title: t}}, prices: [{family: azure:premium-ssd, tier: P30, usd_per_month: 1, region: x, as_of: "last year", source: s}]}`,
		"NaN":             `{sources: {s: {title: t}}, prices: [{family: azure:premium-ssd, tier: P30, usd_per_month: .nan, region: x, as_of: "2026", source: s}]}`,
		"negative":        `{sources: {s: {title: t}}, prices: [{family: aws:gp3, usd_per_gib_month: -1, region: x, as_of: "2026", source: s}]}`,
		"unknown family":  `{sources: {s: {title: t}}, prices: [{family: azure:floppy, usd_per_month: 1, region: x, as_of: "2026", source: s}]}`,
		"unknown tier":    `{sources: {s: {title: t}}, prices: [{family: azure:premium-ssd, tier: P99, usd_per_month: 1, region: x, as_of: "2026", source: s}]}`,
		"monthly VM":      `{sources: {s: {title: t}}, prices: [{vm: azure:Standard_DS2_v2, usd_per_month: 1, region: x, as_of: "2026", source: s}]}`,
		"unknown field":   `{sources: {s: {title: t}}, prices: [{family: aws:gp3, usd_per_gb: 1, region: x, as_of: "2026", source: s}]}`,
		"empty":           ``,
		"too large":       "# " + strings.Repeat("x", maxPriceFile),
	}
	for name, in := range bad {
		if _, err := c.ParsePriceFile(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if pe, ok := err.(*PriceError); !ok || pe.Hint() == "" {
			t.Errorf("%s: %v is not a PriceError with a hint", name, err)
		}
	}
}

func FuzzParsePriceFile(f *testing.F) {
	f.Add(`{sources: {s: {title: t}}, prices: [{family: aws:gp3, usd_per_gib_month: 0.08, region: x, as_of: "2026", source: s}]}`)
	f.Add(`{"sources": {"s": {"title": "t"}}, "prices": [{"vm": "ibm:bx2.4x16", "usd_per_hour": 1e308, "region": "x", "as_of": "2026-01-01", "source": "s"}]}`)
	f.Add("prices:\n  - &a {family: azure:premium-ssd}\n  - *a\n")
	f.Add("prices: [~]")
	c := MustDefault()
	f.Fuzz(func(t *testing.T, in string) {
		pf, err := c.ParsePriceFile(strings.NewReader(in))
		if err != nil {
			return
		}
		uc, err := c.WithPrices(pf)
		if err != nil {
			return
		}
		// Whatever was accepted prices every disk with finite figures.
		for _, p := range pf.Prices {
			if p.Family == "" {
				continue
			}
			for _, f := range uc.Families {
				if !strings.EqualFold(f.ID, p.Family) || len(f.Editions[0].Tiers) == 0 {
					continue
				}
				d, err := uc.ParseDisk(f.Provider + ":" + f.Editions[0].Tiers[0].Name)
				if err != nil {
					continue
				}
				if co := uc.DiskCost(d, ""); co != nil && (math.IsNaN(co.Price.USDPerMonth) || math.IsInf(co.Price.USDPerMonth, 0) || co.Price.USDPerMonth < 0) {
					t.Errorf("price %v from %q", co.Price.USDPerMonth, in)
				}
			}
		}
	})
}

func TestSmallestByPrice(t *testing.T) {
	c := MustDefault()
	sz, err := c.Smallest("gcp", Target{IOPS: 3000, BWBytes: 100e6})
	if err != nil {
		t.Fatal(err)
	}
	opts := sz.Options
	// pd-balanced 1 GiB at $0.10, pd-ssd 1 GiB at $0.17, pd-standard 4,000
	// GiB (0.75 IOPS/GiB) at $160; the unpriced families after them.
	var priced []string
	seenUnpriced := false
	for _, o := range opts {
		if o.Cost == nil {
			seenUnpriced = true
			continue
		}
		if seenUnpriced {
			t.Errorf("%s priced after an unpriced option", o.Spec)
		}
		priced = append(priced, o.Disk.Family.ID)
	}
	want := []string{"gcp:pd-balanced", "gcp:pd-ssd", "gcp:pd-standard"}
	if strings.Join(priced, ",") != strings.Join(want, ",") {
		t.Errorf("priced order %v, want %v", priced, want)
	}
}

func TestSizingProposesVM(t *testing.T) {
	c := MustDefault()
	sz, err := c.Smallest("azure", Target{IOPS: 5000, BWBytes: 200e6, VM: "Standard_D4s_v3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range sz.Options {
		if o.Disk.Family.ID != "azure:premium-ssd" || o.VMBurstSeconds > 0 {
			continue
		}
		// D4s_v3 allows 96 MB/s; by vCPU, D8s_v3 (192 MB/s) still falls
		// short and D8s_v5 (290 MB/s) is the first to carry 200.
		if o.VMBinds == "" || o.ProposedVM != "azure:Standard_D8s_v5" {
			t.Errorf("P30 on D4s_v3: binds %q, proposed %q", o.VMBinds, o.ProposedVM)
		}
		return
	}
	t.Fatal("no Premium SSD option")
}

func TestIBMFlavourSpellings(t *testing.T) {
	c := MustDefault()
	for _, id := range []string{"bx2.16x64", "ibm:bx2.16x64", "bx2-16x64", "IBM:BX2.16X64"} {
		if v := c.VM(id); v == nil || v.ID != "ibm:bx2-16x64" {
			t.Errorf("%s: %v", id, v)
		}
	}
	if v := c.VM("m5.large"); v == nil || v.ID != "aws:m5.large" {
		t.Errorf("AWS names keep their dot: %v", v)
	}
	if _, err := c.ParseExpectation("ibm:10iops-tier:300GB", "bx2.4x16", nil, ""); err != nil {
		t.Errorf("node label spelling refused: %v", err)
	}
}

// File shares: worked by hand from the service-level rules.
func TestFileShares(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		disk, vm   string
		ioSize     int64
		write      bool
		wantMBps   float64 // ceiling, MB/s
		wantBinds  string
		wantIOPSOf float64 // the share's own IOPS (0: none published)
	}{
		// ANF: 64 MiB/s per TiB; the service-levels page's two examples.
		{disk: "azure:netapp-premium:2TiB", ioSize: 1 << 20, wantMBps: 128 * 1.048576, wantBinds: "share throughput"},
		{disk: "azure:netapp-premium:100GiB", ioSize: 1 << 20, wantMBps: 6.25 * 1.048576, wantBinds: "share throughput"},
		// Ultra 4 TiB is 512 MiB/s; a DS2_v2's NIC carries 1,500 Mbps.
		{disk: "azure:netapp-ultra:4TiB", vm: "Standard_DS2_v2", ioSize: 1 << 20, wantMBps: 187.5, wantBinds: "VM network"},
		// EFS bursting: 50 MiB/s per TiB; one client at most 500 MiB/s.
		{disk: "aws:efs-bursting:1TiB", ioSize: 1 << 20, wantMBps: 50 * 1.048576, wantBinds: "share throughput", wantIOPSOf: 35000},
		{disk: "aws:efs-bursting:20TiB", ioSize: 1 << 20, wantMBps: 500 * 1.048576, wantBinds: "share throughput", wantIOPSOf: 35000},
		{disk: "aws:efs-bursting:20TiB", ioSize: 4096, write: true, wantMBps: 7000 * 4096 / 1e6, wantBinds: "share IOPS", wantIOPSOf: 35000},
		// Filestore zonal 1 TiB: writes 88 MiB/s.
		{disk: "gcp:filestore-zonal:1TiB", ioSize: 1 << 20, write: true, wantMBps: 88 * 1.048576, wantBinds: "share throughput", wantIOPSOf: 9200},
		// IBM regional share on a 4 vCPU VSI: 75% of 8,000 Mbps is network.
		{disk: "ibm:file-regional:500GB:throughput=1024", vm: "ibm:bx2.4x16", ioSize: 1 << 20, wantMBps: 750, wantBinds: "VM network", wantIOPSOf: 35000},
		// dp2: bandwidth = IOPS x 256 KiB, 1,024 MB/s at most.
		{disk: "ibm:file-dp2:1000GB:iops=2000", vm: "ibm:bx2.16x64", ioSize: 1 << 20, wantMBps: 2000 * 262144 / 1e6, wantBinds: "share throughput", wantIOPSOf: 2000},
		{disk: "ibm:file-dp2:1000GB:iops=20000", vm: "ibm:bx2.16x64", ioSize: 1 << 20, wantMBps: 1024, wantBinds: "share throughput", wantIOPSOf: 20000},
	}
	for _, tc := range tests {
		t.Run(tc.disk+" "+tc.vm, func(t *testing.T) {
			x, err := c.ParseExpectation(tc.disk, tc.vm, nil, "readonly")
			if err != nil {
				t.Fatal(err)
			}
			if x.Cache != CacheNone || x.Share != nil {
				t.Errorf("a share has no host cache or volume split: %+v", x)
			}
			if x.Disk.Read.IOPS != tc.wantIOPSOf {
				t.Errorf("share IOPS %g, want %g", x.Disk.Read.IOPS, tc.wantIOPSOf)
			}
			ce := x.At(tc.ioSize, tc.write)
			if math.Abs(ce.BWBytes/1e6-tc.wantMBps) > 0.001 || ce.Binds.Name != tc.wantBinds {
				t.Errorf("%.3f MB/s bound by %q, want %.3f by %q", ce.BWBytes/1e6, ce.Binds.Name, tc.wantMBps, tc.wantBinds)
			}
		})
	}
	// One client gets at most 48,000 IOPS from a dp2 share.
	if _, err := c.ParseDisk("ibm:file-dp2:16000GB:iops=96000"); err == nil {
		t.Error("dp2 above the single-client 48,000 IOPS accepted")
	}
	// A share measured at the NIC: the VM binds, through its network.
	x, _ := c.ParseExpectation("azure:netapp-ultra:4TiB", "Standard_DS2_v2", nil, "")
	fs := c.DiagnoseMeasured(Measured{IOPS: 180, BWBytes: 180 * (1 << 20), BlockSize: 1 << 20, IODepth: 16, NumJobs: 1, MeanLatNs: 88e6, Read: true, Direct: true}, x)
	// The share alone allows 512 MiB/s (537 MB/s); by vCPU, the first VM
	// size whose network carries that is D2s_v5 (12,500 Mbps on the Dsv5
	// page, 1,562.5 MB/s): D2s_v3's 1,000 Mbps is 125 MB/s.
	if len(fs) == 0 || fs[0].Code != result.CodeVMCap || !strings.Contains(fs[0].Summary, "VM network") ||
		!strings.Contains(fs[0].Summary, "the share alone allows 512 IOPS, 537 MB/s") || !strings.Contains(fs[0].Summary, "network carries the share: azure:Standard_D2s_v5 (1,563 MB/s)") {
		t.Errorf("share at the NIC: %+v", fs)
	}
}

// Every family in the catalog has a price or says why it has none: a
// family added without either fails here.
func TestEveryFamilyPricedOrExplained(t *testing.T) {
	c := MustDefault()
	priced := map[string]bool{}
	for _, p := range c.Prices {
		priced[strings.ToLower(p.Family)] = true
	}
	for _, f := range c.Families {
		has := priced[strings.ToLower(f.ID)]
		switch {
		case !has && f.PriceGap == "":
			t.Errorf("%s: no price and no price_gap saying why", f.ID)
		case has && f.PriceGap != "":
			t.Errorf("%s: priced, yet its price_gap says there is none", f.ID)
		}
	}
}

// --region keeps only that region's prices; a region with none is an
// error listing those there are.
func TestInRegion(t *testing.T) {
	c := MustDefault()
	r, err := c.InRegion("US-EAST-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Prices {
		if !strings.EqualFold(p.Region, "us-east-1") {
			t.Errorf("price of %s in region %q kept", p.Family+p.VM, p.Region)
		}
	}
	d, _ := r.ParseDisk("aws:gp3:100GiB")
	if co := r.DiskCost(d, ""); co == nil || co.Price.Region != "us-east-1" {
		t.Errorf("gp3 in us-east-1: %+v", co)
	}
	if d, _ := r.ParseDisk("gcp:pd-ssd:100GiB"); r.DiskCost(d, "") != nil {
		t.Error("a GCP price kept for us-east-1")
	}
	if _, err := c.InRegion("mars-1"); err == nil || !strings.Contains(err.(*SpecError).Hint(), "us-east-1") {
		t.Errorf("unknown region: %v", err)
	}
	if len(c.Prices) == len(r.Prices) {
		t.Error("the receiver's prices were filtered, or nothing was")
	}
}
