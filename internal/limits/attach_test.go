package limits

import (
	"strings"
	"testing"
)

// A VM the catalog holds no figure for never carries an option as
// sustained, and a family the provider does not let the VM use is listed
// only on a VM size that may use it.
func TestSizingOnVMWithoutFigures(t *testing.T) {
	c := MustDefault()
	tests := []struct {
		name     string
		provider string
		target   Target
		family   string
		// notJudged: the family is listed as not judged, the reason
		// containing this; binds: the family is listed on another VM
		// size, saying this, with proposed as that size.
		notJudged, binds, proposed string
	}{
		// EFS Elastic: one client reads up to 1,500 MiB/s (efs-perf); AWS
		// documents m5.large's network only as "up to 10 Gbps" on credits
		// (general-purpose-instances.md), no baseline.
		{name: "EFS on m5.large", provider: "aws", target: Target{BWBytes: 500e6, VM: "aws:m5.large"}, family: "aws:efs-elastic", notJudged: "only 'up to' 10,000 Mbps"},
		// Google: Extreme PD on N2 only with 64 or more vCPUs
		// (extreme-persistent-disk page).
		{name: "pd-extreme on n2-standard-4", provider: "gcp", target: Target{IOPS: 15000, VM: "gcp:n2-standard-4"}, family: "gcp:pd-extreme", binds: "N2 needs 64 or more vCPUs", proposed: "gcp:n2-standard-64"},
		{name: "pd-extreme on e2-medium", provider: "gcp", target: Target{IOPS: 5000, VM: "gcp:e2-medium"}, family: "gcp:pd-extreme", binds: "N2 (64 or more vCPUs), M2 and M3 only", proposed: "gcp:n2-standard-64"},
		// Hyperdisk reaches its provisioned figures only where the VM
		// supports them (Hyperdisk Balanced page); the catalog holds no
		// VM's Hyperdisk limits.
		{name: "Hyperdisk Balanced on n2-standard-4", provider: "gcp", target: Target{IOPS: 15000, VM: "gcp:n2-standard-4"}, family: "gcp:hyperdisk-balanced", notJudged: "lacks gcp:n2-standard-4's limits for Hyperdisk Balanced"},
		{name: "Filestore on n2-standard-4", provider: "gcp", target: Target{BWBytes: 100e6, VM: "gcp:n2-standard-4"}, family: "gcp:filestore-zonal", notJudged: "network bandwidth"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sz, err := c.Smallest(tc.provider, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			var got *Option
			for i := range sz.Options {
				if sz.Options[i].Disk.Family.ID == tc.family {
					got = &sz.Options[i]
				}
			}
			if tc.notJudged != "" {
				if got != nil {
					t.Fatalf("%s listed as an option (%s), want not judged", tc.family, got.Spec)
				}
				found := false
				for _, n := range sz.NotJudged {
					found = found || strings.HasPrefix(n, tc.family+" ") && strings.Contains(n, tc.notJudged)
				}
				if !found {
					t.Errorf("not judged %q, want %s with %q", sz.NotJudged, tc.family, tc.notJudged)
				}
				return
			}
			if got == nil {
				t.Fatalf("%s not listed; options %d, not judged %q", tc.family, len(sz.Options), sz.NotJudged)
			}
			if !strings.Contains(got.VMBinds, tc.binds) || got.ProposedVM != tc.proposed {
				t.Errorf("%s: binds %q, proposed %q; want %q and %s", got.Spec, got.VMBinds, got.ProposedVM, tc.binds, tc.proposed)
			}
		})
	}
}

func TestAttachRules(t *testing.T) {
	c := MustDefault()
	// Google: 2,500 to 120,000 provisioned IOPS for Extreme PD.
	if _, err := c.ParseDisk("gcp:pd-extreme:100GiB:iops=2000"); err == nil || !strings.Contains(err.Error(), "2500") {
		t.Errorf("pd-extreme at 2,000 IOPS: error %v, want the 2,500 floor", err)
	}
	if _, err := c.ParseDisk("gcp:pd-extreme:100GiB"); err == nil {
		t.Error("pd-extreme with no iops=: no error, want one (Google sets no default)")
	}
	x, err := c.ParseExpectation("gcp:pd-extreme:500GiB:iops=10000", "gcp:n2-standard-4", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(x.Notes, "\n"), "cannot use gcp:pd-extreme") {
		t.Errorf("notes %q, want the attach rule", x.Notes)
	}
	for _, tc := range []struct {
		vm string
		ok bool
	}{{"gcp:n2-standard-64", true}, {"gcp:n2-standard-32", false}, {"gcp:e2-medium", false}} {
		if ok, why := c.Family("gcp", "pd-extreme").Attachable(c.VM(tc.vm)); ok != tc.ok {
			t.Errorf("pd-extreme on %s: %v (%s), want %v", tc.vm, ok, why, tc.ok)
		}
	}
}

// Google caps pd-standard writes at 400 MiB/s per instance (gcpdiag's N2
// table): no pd-standard disk sustains 1,000 MB/s of writes.
func TestPDStandardWriteCap(t *testing.T) {
	sz, err := MustDefault().Smallest("gcp", Target{BWBytes: 1000e6})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range sz.Options {
		if o.Disk.Family.ID == "gcp:pd-standard" {
			t.Errorf("%s listed for 1,000 MB/s, writes %.0f MB/s", o.Spec, o.Write.BWBytes/1e6)
		}
	}
}
