package limits

import (
	"bytes"
	"strings"
	"testing"
)

func sizing(t *testing.T, provider string, tg Target) *Sizing {
	t.Helper()
	sz, err := MustDefault().Smallest(provider, tg)
	if err != nil {
		t.Fatal(err)
	}
	return sz
}

func optionOf(sz *Sizing, family string, burst bool) *Option {
	for i, o := range sz.Options {
		if o.Disk.Family.ID == family && (o.VMBurstSeconds > 0) == burst && (burst || o.VMBinds == "") {
			return &sz.Options[i]
		}
	}
	return nil
}

// Nothing that falls short is listed: every option reaches the target
// for reads and for writes, exactly.
func TestSizingNeverListsWhatFallsShort(t *testing.T) {
	sz := sizing(t, "aws", Target{IOPS: 10000})
	for _, o := range sz.Options {
		if o.Read.IOPS < 10000 || o.Write.IOPS < 10000 {
			t.Errorf("%s listed with %g read / %g write IOPS", o.Spec, o.Read.IOPS, o.Write.IOPS)
		}
	}
	// gp2 gives 3 IOPS per GiB: 3,333 GiB is 9,999 IOPS, short by one.
	if o := optionOf(sz, "aws:gp2", false); o == nil || o.Spec != "aws:gp2:3334GiB" {
		t.Errorf("gp2: %+v, want aws:gp2:3334GiB (10,002 IOPS)", o)
	}
	// EFS Bursting: 1 GiB gives 1 MiB/s, 64 IOPS of 16 KiB; and its
	// writes stop at 7,000 IOPS at any size.
	if o := optionOf(sz, "aws:efs-bursting", false); o != nil {
		t.Errorf("EFS Bursting listed for 10,000 IOPS: %s, %g / %g IOPS", o.Spec, o.Read.IOPS, o.Write.IOPS)
	}
	// gp3 needs throughput for 10,000 IOPS of 16 KiB: 156.25 MiB/s.
	if o := optionOf(sz, "aws:gp3", false); o == nil || !strings.Contains(o.Spec, "iops=10000,throughput=157") {
		t.Errorf("gp3: %+v", o)
	}
	// The same on a share judged by throughput alone: 1 MiB/s at 16 KiB
	// is 64 IOPS; a 200 GiB EFS Elastic share is enough for reads and
	// writes (50,000).
	sz = sizing(t, "aws", Target{IOPS: 20000, IOSize: 16 << 10})
	if o := optionOf(sz, "aws:efs-elastic", false); o == nil || o.Write.IOPS < 20000 {
		t.Errorf("EFS Elastic: %+v", o)
	}
	// NetApp publishes no IOPS: not judged against an IOPS target, but
	// sized for a throughput one (64 MiB/s per TiB: 2 TiB for 128 MiB/s).
	sz = sizing(t, "azure", Target{IOPS: 5000})
	if o := optionOf(sz, "azure:netapp-premium", false); o != nil || !strings.Contains(strings.Join(sz.NotJudged, ","), "azure:netapp-premium (no published IOPS figure)") {
		t.Errorf("NetApp against an IOPS target: %+v, not judged %v", o, sz.NotJudged)
	}
	sz = sizing(t, "azure", Target{BWBytes: 128 << 20})
	if o := optionOf(sz, "azure:netapp-premium", false); o == nil || o.Spec != "azure:netapp-premium:2048GiB" {
		t.Errorf("NetApp for 128 MiB/s: %+v", o)
	}
}

func TestSizingHeaderSaysOnlyWhatWasAsked(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSizingText(&b, sizing(t, "aws", Target{IOPS: 10000})); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(b.String(), "\n")
	if head != "aws disks that sustain 10,000 IOPS at 16 KiB, reads and writes each, cheapest first (unpriced after)" {
		t.Errorf("header %q", head)
	}
	b.Reset()
	WriteSizingText(&b, sizing(t, "aws", Target{BWBytes: 300e6}))
	if head, _, _ := strings.Cut(b.String(), "\n"); strings.Contains(head, "IOPS") || !strings.Contains(head, "300 MB/s") {
		t.Errorf("header %q", head)
	}
}

// --cache is honoured: on a D4s_v3 with ReadOnly caching, a Premium SSD
// gets the VM's cached limit, 64 MB/s, not the uncached 96; the VM's burst
// (200 MB/s for 30 min, uncached only) is an option of its own.
func TestSizingCacheAndVMBurst(t *testing.T) {
	sz := sizing(t, "azure", Target{IOPS: 5000, BWBytes: 200e6, VM: "D4s_v3", Cache: "readonly"})
	if sz.Target.VM != "azure:Standard_D4s_v3" || sz.Target.Cache != CacheReadOnly {
		t.Fatalf("target %+v", sz.Target)
	}
	var p30 *Option
	for i, o := range sz.Options {
		if o.Spec == "azure:P30" && o.VMBurstSeconds == 0 {
			p30 = &sz.Options[i]
		}
		if o.Spec == "azure:P30" && o.VMBurstSeconds > 0 {
			t.Errorf("cached limits do not burst, yet P30 is a burst option: %+v", o)
		}
	}
	if p30 == nil || p30.Read.BWBytes != 64e6 || !strings.Contains(p30.VMBinds, "64 MB/s (VM cached throughput)") {
		t.Fatalf("P30 with ReadOnly on D4s_v3: %+v", p30)
	}
	// Premium SSD v2 cannot cache: the uncached 96 MB/s binds, and the
	// VM bursts to 200 MB/s for 30 min.
	b := optionOf(sz, "azure:premium-ssd-v2", true)
	if b == nil || b.VMBurstSeconds != 1800 || b.Read.BWBytes < 200e6 {
		t.Errorf("Premium SSD v2 on D4s_v3's burst: %+v", b)
	}
	// Uncached, the note says 96 MB/s.
	sz = sizing(t, "azure", Target{IOPS: 5000, BWBytes: 200e6, VM: "Standard_D4s_v3"})
	for _, o := range sz.Options {
		if o.Spec == "azure:P30" && o.VMBurstSeconds == 0 && !strings.Contains(o.VMBinds, "throughput at 96 MB/s (VM throughput)") {
			t.Errorf("P30 uncached on D4s_v3: %q", o.VMBinds)
		}
	}
}

// Per-TiB minimums: Hyperdisk Throughput provisions at least 10 MiB/s per
// TiB of size.
func TestPerTiBMinimum(t *testing.T) {
	c := MustDefault()
	if _, err := c.ParseDisk("gcp:hyperdisk-throughput:4TiB:throughput=20"); err == nil || !strings.Contains(err.Error(), "at least 10 per TiB") {
		t.Errorf("20 MiB/s on 4 TiB accepted: %v", err)
	}
	d, err := c.ParseDisk("gcp:hyperdisk-throughput:4TiB")
	if err != nil || d.Tput != 40 || !strings.Contains(strings.Join(d.Notes, ";"), "below this size's floor") {
		t.Errorf("default on 4 TiB: %v %+v", err, d)
	}
	if d, err := c.ParseDisk("gcp:hyperdisk-throughput:4TiB:throughput=40"); err != nil || d.Read.IOPS != 160 {
		t.Errorf("40 MiB/s on 4 TiB: %v", err)
	}
	// Sizing keeps to the floor at every size it tries.
	sz := sizing(t, "gcp", Target{BWBytes: 30 << 20})
	if o := optionOf(sz, "gcp:hyperdisk-throughput", false); o == nil || o.Spec != "gcp:hyperdisk-throughput:2048GiB:throughput=30" {
		t.Errorf("Hyperdisk Throughput for 30 MiB/s: %+v", o)
	}
}
