package watch

import "testing"

func TestParseExpect(t *testing.T) {
	c, err := ParseExpect("name=P10,iops=500,bw=100MB/s,burst-iops=3500,burst-bw=170MB,burst-s=1800,vm-bw=48MiB", "")
	if err != nil {
		t.Fatal(err)
	}
	want := Ceiling{Name: "P10", IOPS: 500, BWBytes: 100e6, BurstIOPS: 3500, BurstBWBytes: 170e6, BurstSeconds: 1800, VMBWBytes: 48 << 20}
	if *c != want {
		t.Errorf("got %+v, want %+v", *c, want)
	}
	// Catalog names: a P10 bursts from 500 to 3500 IOPS for 30 minutes.
	c, err = ParseExpect("azure:P10", "Standard_DS2_v2")
	if err != nil {
		t.Fatal(err)
	}
	if c.IOPS != 500 || c.BWBytes != 100e6 || c.BurstIOPS != 3500 || c.BurstSeconds != 1800 || c.VMIOPS != 6400 || c.VMBWBytes != 96e6 {
		t.Errorf("azure:P10 on Standard_DS2_v2: got %+v", *c)
	}
	if c, err = ParseExpect("aws:gp3", ""); err != nil || c.IOPS != 3000 || c.BurstSeconds != 0 {
		t.Errorf("aws:gp3: %+v, %v", c, err)
	}
	if c, err = ParseExpect("aws:gp3:iops=6000,throughput=250", ""); err != nil || c.IOPS != 6000 || c.BWBytes != 250<<20 {
		t.Errorf("aws:gp3:iops=6000,throughput=250: %+v, %v", c, err)
	}
	for _, bad := range []string{"iops", "iops=x", "bw=10XB", "speed=3", "burst-s=10", "azure:P99", "nosuch:disk"} {
		if _, err := ParseExpect(bad, ""); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
