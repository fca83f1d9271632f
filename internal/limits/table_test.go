package limits

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// Several disks on one VM: a row per disk with the same figures the
// single-disk report gives, each note once, lines under 160 characters;
// the CSV has a record per disk.
func TestDiskComparisonTable(t *testing.T) {
	c := MustDefault()
	var xs []*Expectation
	for _, spec := range []string{"azure:P10", "azure:P15", "azure:P30", "azure:premium-ssd-v2:256GiB", "azure:E15", "azure:ultra:256GiB"} {
		x, err := c.ParseExpectation(spec, "Standard_D8s_v3", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	tab := c.NewDiskTable(xs, 16<<10, "")
	// P30 at 1 MiB on a D8s_v3: the VM's 192 MB/s uncached (az-vm-dsv3),
	// below the disk's 200.
	if r := tab.Rows[2]; r.Read.IOPS != 5000 || r.Read.BWBytes != 192e6 || r.BWBinds != "VM throughput" {
		t.Errorf("P30 row %+v", r)
	}
	// Ultra with nothing given: the CSI driver's 500 IOPS and 100 MB/s.
	if r := tab.Rows[5]; r.Read.IOPS != 500 || r.Read.BWBytes != 100e6 {
		t.Errorf("Ultra row %+v", r)
	}
	var b bytes.Buffer
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if len(l) >= 160 {
			t.Errorf("line of %d characters: %q", len(l), l)
		}
	}
	if n := strings.Count(out, "the price's source is not the provider's own"); n != 1 {
		t.Errorf("the third-party note is printed %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "azure:P30  ") || !strings.Contains(out, "$135.17 (2026)*") || !strings.Contains(out, "disk IOPS / VM tput") {
		t.Errorf("table:\n%s", out)
	}
	b.Reset()
	if err := tab.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 7 || recs[3][0] != "azure:P30" || recs[3][6] != "192" {
		t.Errorf("csv %v %q", err, recs)
	}
}

// A sizing's rows carry the VM's verdict in the wide and CSV forms.
func TestSizingTable(t *testing.T) {
	c := MustDefault()
	sz, err := c.Smallest("gcp", Target{IOPS: 15000, VM: "gcp:n2-standard-4"})
	if err != nil {
		t.Fatal(err)
	}
	tab := c.SizingTable(sz)
	var b bytes.Buffer
	tab.WriteWide(&b)
	if !strings.Contains(b.String(), "on gcp:n2-standard-4  needs gcp:n2-standard-64") || !strings.Contains(b.String(), "on gcp:n2-standard-4  sustained") {
		t.Errorf("wide:\n%s", b.String())
	}
	b.Reset()
	WriteSizingText(&b, sz)
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) >= 160 {
			t.Errorf("sizing line of %d characters: %q", len(l), l)
		}
	}
}

// A mixed table of every provider's disks, with split reads and writes
// and long specs, stays under 160 characters.
func TestDiskTableWidth(t *testing.T) {
	c := MustDefault()
	var xs []*Expectation
	for _, spec := range []string{"azure:P15", "azure:ultra:1TiB", "azure:premium-ssd-v2:100GiB", "azure:E10", "aws:gp3:100GiB", "aws:gp2:100GiB",
		"aws:io2:100GiB:iops=max", "aws:st1:1TiB", "gcp:pd-balanced:100GiB", "gcp:pd-standard:10TiB", "ibm:sdp:100GB", "ibm:general-purpose:1000GB"} {
		x, err := c.ParseExpectation(spec, "", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	var b bytes.Buffer
	if err := c.NewDiskTable(xs, 16<<10, "").WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if len(l) >= 160 {
			t.Errorf("line of %d characters: %q", len(l), l)
		}
	}
	// pd-standard: reads 1,200 MiB/s, writes 400 MiB/s (Google's
	// per-instance caps), printed read/write.
	if !strings.Contains(b.String(), "1258.3/419.4") {
		t.Errorf("pd-standard's read/write split missing:\n%s", b.String())
	}
}
