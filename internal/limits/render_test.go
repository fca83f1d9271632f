package limits

import (
	"bytes"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	c := MustDefault()
	x, err := c.ParseExpectation("azure:netapp-premium:2TiB", "Standard_DS2_v2", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.NewReport(x, []int64{4 << 10, 1 << 20}, "").WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"no published IOPS, 134.2 MB/s", "187.5 MB/s network for the share (1,500 Mbps)", "price   none: no price for azure:netapp-premium: Microsoft's list prices", "anf-service-levels: Service levels for Azure NetApp Files"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	if err := c.Entry("azure:P30").WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\nprices\n", "P30, $135.17 a month (unstated (US list), 2026; price-lucidity)", "price-lucidity: Understanding Azure Standard SSD vs Premium SSD Pricing"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("catalog entry lacks %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	sz, _ := c.Smallest("gcp", Target{IOPS: 3000, BWBytes: 100e6})
	if err := WriteSizingText(&b, sz); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(b.String(), "gcp:pd-balanced"), strings.Index(b.String(), "gcp:pd-ssd"); i < 0 || j < i {
		t.Errorf("sizing not ranked by price:\n%s", b.String())
	}
}

// IOPS print as whole numbers: a P15 at 256 KiB is bound by 125 MB/s,
// 476.8 IOs a second, printed 477.
func TestRenderWholeIOPS(t *testing.T) {
	c := MustDefault()
	x, err := c.ParseExpectation("azure:P15", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.NewReport(x, []int64{256 << 10, 1 << 20}, "").WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"256 KiB  477 ", "1 MiB    119 "} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "476.8") {
		t.Errorf("report prints fractional IOPS:\n%s", b.String())
	}
}
