package limits

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Expect attaches the disk's fellow volumes (seed 002: two 300 GB
// volumes on a bx2-16x64 get 475 MB/s each), and Sheet, Table and
// Priced resolve through it.
func TestPlacement(t *testing.T) {
	c := MustDefault()
	two := Placement{VM: "bx2.16x64", Volumes: 2}
	x, err := c.Expect("ibm:10iops-tier:300GB", two)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Attached) != 1 || x.Concurrent != 2 {
		t.Errorf("2 volumes: %d attached, concurrent %d; want 1 and 2", len(x.Attached), x.Concurrent)
	}
	if got := x.At(256<<10, false).BWBytes / 1e6; got < 475.43 || got > 475.44 {
		t.Errorf("2 volumes: %.4f MB/s at 256 KiB, want 475.4375", got)
	}
	if x, err := c.Expect("ibm:10iops-tier:300GB", Placement{VM: "bx2.16x64"}); err != nil || len(x.Attached) != 0 || x.Concurrent != 0 {
		t.Errorf("alone: %v, %+v", err, x)
	}
	var se *SpecError
	if _, err := c.Expect("azure:P15", Placement{VM: "no-such-vm"}); !errors.As(err, &se) {
		t.Errorf("unknown VM: %v, want a *SpecError", err)
	}

	// Buffered 100 KiB writes on a P4 merge (seed 003): the note is there
	// only when asked for.
	for _, buffered := range []bool{false, true} {
		rep, err := c.Sheet("azure:P4", Placement{}, []int64{100 << 10}, "", buffered)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rep.Expectation.Notes) > 0 && strings.Contains(strings.Join(rep.Expectation.Notes, " "), "buffered"); got != buffered {
			t.Errorf("buffered %v: notes %q", buffered, rep.Expectation.Notes)
		}
	}

	tab, err := c.Table([]string{"azure:P10", "azure:P15"}, Placement{VM: "Standard_DS2_v2"}, 4096, "")
	if err != nil || len(tab.Rows) != 2 || tab.VM != "azure:Standard_DS2_v2" || tab.IOSizeBytes != 4096 {
		t.Fatalf("table: %v, %+v", err, tab)
	}
	if _, err := c.Table([]string{"azure:P10", "azure:nope"}, Placement{}, 4096, ""); !errors.As(err, &se) {
		t.Errorf("table with an unknown disk: %v", err)
	}

	if p, err := c.Priced(nil, ""); err != nil || p != c {
		t.Errorf("no prices, no region: %v, another catalog", err)
	}
	var pe *PriceError
	if _, err := c.Priced(bytes.NewReader([]byte("prices: []\n")), ""); !errors.As(err, &pe) {
		t.Errorf("empty price file: %v, want a *PriceError", err)
	}
	if _, err := c.Priced(nil, "nowhere"); !errors.As(err, &se) {
		t.Errorf("unknown region: %v, want a *SpecError", err)
	}
}

// Smallest takes a provider in any case and a VM size without one.
func TestSmallestShortVM(t *testing.T) {
	sz, err := MustDefault().Smallest("Azure", Target{IOPS: 5000, VM: "Standard_D4s_v3", Cache: "readonly"})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Provider != "azure" || sz.Target.VM != "azure:Standard_D4s_v3" {
		t.Errorf("provider %q, VM %q", sz.Provider, sz.Target.VM)
	}
}
