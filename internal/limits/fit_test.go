package limits

import "testing"

// Measured ceilings name the catalog disks that publish them; provisioned
// families, which fit anything in range, are never named.
func TestFits(t *testing.T) {
	c := MustDefault()
	for _, tc := range []struct {
		iops, bw float64
		first    string
	}{
		{1100, 125e6, "azure:P15"},
		{5000, 200e6, "azure:P30"},
		{1100, 0, "azure:P15"},
		{1500, 0, "aws:gp2:500GiB"},
	} {
		fs := c.Fits(tc.iops, tc.bw, 5)
		if len(fs) == 0 || fs[0].Disk != tc.first && fs[0].VM != tc.first {
			t.Errorf("%v IOPS %v B/s: fits %+v, want %s first", tc.iops, tc.bw, fs, tc.first)
			continue
		}
		for _, f := range fs {
			if f.Distance > fitWithin {
				t.Errorf("%+v is further than %v", f, fitWithin)
			}
			if d, err := c.ParseDisk(f.Disk); f.Disk != "" && (err != nil || d.Edition.IOPS != nil && d.Edition.IOPS.Provisioned) {
				t.Errorf("%s: %v, or provisioned", f.Disk, err)
			}
		}
	}
	if fs := c.Fits(3.3e6, 0, 5); len(fs) != 0 {
		t.Errorf("3.3 M IOPS fits %+v", fs)
	}
	if fs := c.Fits(0, 0, 5); fs != nil {
		t.Errorf("nothing measured fits %+v", fs)
	}
}
