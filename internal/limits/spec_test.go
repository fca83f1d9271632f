package limits

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
)

// roundTrip checks that a printed spec reads back as the same disk.
func roundTrip(t *testing.T, c *Catalog, d *Disk, from string) {
	t.Helper()
	back, err := c.ParseDisk(d.Spec)
	if err != nil {
		t.Errorf("%s prints %q, which does not read back: %v", from, d.Spec, err)
		return
	}
	if back.Spec != d.Spec || back.Family != d.Family || back.Edition != d.Edition || back.Tier != d.Tier || back.Read != d.Read || back.Write != d.Write {
		t.Errorf("%s prints %q, which reads back as %q (%s, %+v)", from, d.Spec, back.Spec, back.Family.ID, back.Read)
	}
}

// Every spec iolens prints reads back: tiers of every edition, families
// at sizes, sizing options, fits, storage-class mappings.
func TestEverySpecRoundTrips(t *testing.T) {
	c := MustDefault()
	for _, f := range c.Families {
		for _, e := range f.Editions {
			date := ""
			if !e.Current() {
				date = e.From
			}
			for _, tr := range e.Tiers {
				spec := f.ID + ":" + tr.Name
				if date != "" {
					spec = f.ID + "@" + date + ":" + tr.Name
				}
				d, err := c.ParseDisk(spec)
				if err != nil {
					t.Errorf("%s: %v", spec, err)
					continue
				}
				roundTrip(t, c, d, spec)
			}
		}
	}
	// azure:default names the AKS default class (Standard SSD); the
	// standard Azure Files share's default tier prints as a spec that
	// reads back as the share.
	d, err := c.ParseDisk("azure:files-standard:5TiB")
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec != "azure:files-standard:default" || d.Family.ID != "azure:files-standard" {
		t.Errorf("5 TiB standard share prints %q", d.Spec)
	}
	roundTrip(t, c, d, "azure:files-standard:5TiB")
	if d, err := c.ParseDisk("azure:default:1TiB"); err != nil || d.Family.ID != "azure:standard-ssd" {
		t.Errorf("azure:default:1TiB is %v %v, want the AKS default class's Standard SSD", d, err)
	}
	for _, p := range c.ProviderNames() {
		for _, tg := range []Target{{IOPS: 3000}, {BWBytes: 200e6}, {IOPS: 20000, BWBytes: 500e6}} {
			sz, err := c.Smallest(p, tg)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range sz.Options {
				roundTrip(t, c, o.Disk, "sizing "+p)
			}
		}
	}
	for _, f := range c.Fits(1100, 125e6, 50) {
		if f.Disk != "" {
			d, err := c.ParseDisk(f.Disk)
			if err != nil {
				t.Errorf("fit %q: %v", f.Disk, err)
				continue
			}
			roundTrip(t, c, d, "fit")
		}
	}
	for _, sc := range []struct {
		prov   string
		params map[string]string
	}{
		{"file.csi.azure.com", map[string]string{"skuName": "Standard_LRS"}},
		{"disk.csi.azure.com", nil},
		{"ebs.csi.aws.com", map[string]string{"type": "io2", "iops": "5000"}},
		{"vpc.block.csi.ibm.io", nil},
	} {
		spec, ok := FromStorageClass(sc.prov, sc.params, 100<<30)
		if !ok {
			t.Errorf("%s: not mapped", sc.prov)
			continue
		}
		d, err := c.ParseDisk(spec)
		if err != nil {
			t.Errorf("%s maps to %q: %v", sc.prov, spec, err)
			continue
		}
		roundTrip(t, c, d, sc.prov)
	}
}

func TestVMShortNames(t *testing.T) {
	c := MustDefault()
	for _, id := range []string{"DS2_v2", "ds2_v2", "azure:DS2_v2", "Standard_DS2_v2", "azure:standard_ds2_v2"} {
		if v := c.VM(id); v == nil || v.ID != "azure:Standard_DS2_v2" {
			t.Errorf("%s: %v", id, v)
		}
	}
	if v := c.VM("D8s_v3"); v == nil || v.ID != "azure:Standard_D8s_v3" {
		t.Errorf("D8s_v3: %v", v)
	}
	if v := c.VM("aws:DS2_v2"); v != nil {
		t.Errorf("an Azure short name under aws: %v", v)
	}
	if _, err := c.ParseExpectation("azure:P30", "DS2_v2", nil, ""); err != nil {
		t.Error(err)
	}
}

// Numbers in specs go through units: NaN, infinities, negatives, hex and
// exponents are refused with a hint; editions need YYYY or YYYY-MM.
func TestSpecNumbers(t *testing.T) {
	c := MustDefault()
	for _, spec := range []string{
		"aws:gp3:iops=NaN", "aws:gp3:iops=Inf", "aws:gp3:iops=-5", "aws:gp3:iops=1e4", "aws:gp3:iops=0x10", "aws:gp3:throughput=+Inf",
		"aws:gp2:NaNGiB", "aws:gp2:-5GiB", "aws:gp2:1e3GiB", "aws:gp2:0GiB", "aws:gp2:InfTiB",
		"azure:P15@abc", "azure:P15@-1", "azure:P15@2019-13", "azure:P15@19", "azure:premium-ssd@:500GiB",
		"azure:files-standard:nothing",
	} {
		d, err := c.ParseDisk(spec)
		if err == nil {
			t.Errorf("%s accepted: %+v", spec, d.Read)
			continue
		}
		if se, ok := err.(*SpecError); !ok || se.Hint() == "" {
			t.Errorf("%s: %v without a hint", spec, err)
		}
	}
	for _, spec := range []string{"azure:P15@2019", "azure:ultra@2022-06:1TiB", "aws:gp2:1.5TiB", "aws:gp3:100GiB:iops=6000,throughput=250MiB/s"} {
		if _, err := c.ParseDisk(spec); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

// Catalog currency: each fix with its source.
func TestCatalogCurrency(t *testing.T) {
	c := MustDefault()
	disk := func(spec string) *Disk {
		t.Helper()
		d, err := c.ParseDisk(spec)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Every io2 volume is Block Express since 2025-04-30: 1,000 IOPS per
	// GiB up to 256,000, 0.256 MiB/s per IOPS up to 4,000 MiB/s, 64 TiB.
	io2 := disk("aws:io2:256GiB:iops=256000")
	if io2.Read.IOPS != 256000 || io2.Read.BWBytes != 4000*(1<<20) || !strings.Contains(strings.Join(io2.Edition.SourceKeys, ","), "aws-piops-2025") {
		t.Errorf("io2 today: %+v", io2.Read)
	}
	if disk("aws:io2:64TiB:iops=1000").SizeGiB != 65536 {
		t.Error("io2 to 64 TiB")
	}
	// The old figures stay as aws:io2@2024: 500 IOPS per GiB, 64,000, 16 TiB.
	if _, err := c.ParseDisk("aws:io2@2024:256GiB:iops=256000"); err == nil {
		t.Error("aws:io2@2024 took 256,000 IOPS")
	}
	if old := disk("aws:io2@2024:128GiB:iops=64000"); old.Read.BWBytes != 1000*(1<<20) {
		t.Errorf("io2@2024: %+v", old.Read)
	}
	if disk("aws:io2-bx:100GiB:iops=1000").Family.ID != "aws:io2" {
		t.Error("io2-bx is not io2")
	}
	// Network for every VM: a figure or why not. Dsv5/Esv5: 12,500 Mb/s.
	for _, v := range c.VMs {
		if v.NetworkMbps <= 0 && v.BandwidthMbps <= 0 && v.NetworkNote == "" {
			t.Errorf("%s: no network figure and no reason", v.ID)
		}
	}
	x, err := c.ParseExpectation("azure:files-premium:1TiB", "D4s_v5", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if x.NetworkBWBytes != 12500e6/8 {
		t.Errorf("D4s_v5 network %g B/s", x.NetworkBWBytes)
	}
	// D8s_v3: 4,000 Mbps in the 2020 table, 2,000 Mb/s on today's page.
	for spec, want := range map[string]float64{"azure:files-premium:1TiB": 2000, "azure:files-premium@2021:1TiB": 4000} {
		x, _ := c.ParseExpectation(spec, "Standard_D8s_v3", nil, "")
		if x.NetworkBWBytes != want*1e6/8 {
			t.Errorf("%s on D8s_v3: network %g Mbps, want %g", spec, x.NetworkBWBytes*8/1e6, want)
		}
	}
	// @2019: no VM burst, which the size tables show only from 2024-09.
	then, _ := c.ParseExpectation("azure:P30@2019-05", "Standard_D8s_v3", nil, "")
	if _, b := then.VMRate(false); b != nil || !strings.Contains(strings.Join(then.Notes, ";"), "VM-level burst is first documented 2024-09: none at 2019-05") {
		t.Errorf("@2019 on D8s_v3: burst %+v, notes %v", b, then.Notes)
	}
	now, _ := c.ParseExpectation("azure:P30", "Standard_D8s_v3", nil, "")
	if _, b := now.VMRate(false); b == nil || b.BWBytes != 400e6 {
		t.Errorf("D8s_v3 today: burst %+v", b)
	}
	// IBM sdp: the profile page's sdp table puts the floor at 3,000 IOPS
	// at every size (its overview table says 100); the catalog keeps 3,000
	// and says so.
	if _, err := c.ParseDisk("ibm:sdp:100GB:iops=100"); err == nil {
		t.Error("sdp took 100 IOPS")
	}
	if d := disk("ibm:sdp:100GB:iops=3000"); !strings.Contains(d.Edition.Note, "contradicts itself on the IOPS floor") || c.Sources["ibm-profiles"].Commit != "3fdff6f647da156dc034f2e2b0d11c61f1c86f3d" {
		t.Errorf("sdp note or source: %s", d.Edition.Note)
	}
}

// The disk spec parser reads specs from users, storage classes and
// annotations: it never panics, its figures are finite, and what it
// prints reads back.
func FuzzParseDisk(f *testing.F) {
	for _, s := range []string{"azure:P15", "azure:P15@2019", "aws:gp3:iops=6000,throughput=250", "ibm:10iops-tier:300GB",
		"azure:files-standard:default", "aws:gp2:NaNGiB", "gcp:hyperdisk-throughput:4TiB:throughput=40", "azure:premium-ssd@2019-05:500GiB", "a:b:c:d"} {
		f.Add(s)
	}
	c := MustDefault()
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := c.ParseDisk(spec)
		if err != nil {
			return
		}
		for _, x := range []float64{d.Read.IOPS, d.Read.BWBytes, d.Write.IOPS, d.Write.BWBytes, d.SizeGiB} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Fatalf("%q: figure %g", spec, x)
			}
		}
		back, err := c.ParseDisk(d.Spec)
		if err != nil || back.Spec != d.Spec {
			t.Fatalf("%q prints %q, which reads back as %v, %v", spec, d.Spec, back, err)
		}
	})
}

// The names shell completion offers read back as what they name, and a
// bigger tier of a share stays in its family.
func TestDiskNamesAndBiggerTiers(t *testing.T) {
	c := MustDefault()
	for _, n := range c.DiskNames() {
		if n == "azure:default" {
			t.Errorf("completion offers the ambiguous %q", n)
		}
		if d, err := c.ParseDisk(n); err == nil && d.Tier != nil && d.Spec != n {
			t.Errorf("completion offers %q, which reads as %q", n, d.Spec)
		}
	}
	d, err := c.ParseDisk("azure:files-standard:default")
	if err != nil {
		t.Fatal(err)
	}
	if nd := c.Bigger(d, true); nd == nil || nd.Family != d.Family || nd.Tier.Name != "large" {
		t.Errorf("bigger than the default standard share: %+v", nd)
	}
}

// hint.Of, which every command uses to print advice, finds the hints of
// spec and price errors through wrapping.
func TestHintOfLimitsErrors(t *testing.T) {
	c := MustDefault()
	_, err := c.ParseDisk("azure:P999")
	if h := hint.Of(fmt.Errorf("--expect: %w", err)); h == "" {
		t.Errorf("no hint for %v", err)
	}
	pe := error(&PriceError{Msg: "no prices", Advice: "list them under prices:"})
	if h := hint.Of(fmt.Errorf("x: %w", pe)); h != "list them under prices:" {
		t.Errorf("hint of a price error: %q", h)
	}
}
