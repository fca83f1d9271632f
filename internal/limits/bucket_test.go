package limits

import (
	"math"
	"testing"
)

// Azure P15: 1,100 IOPS, 3,500 while credits last, a full bucket 30
// minutes at the burst rate: 2,400 x 1,800 = 4,320,000 IOs.
func TestBucketP15(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.ParseDisk("azure:P15")
	if err != nil {
		t.Fatal(err)
	}
	ios, bytes := d.Burst.Buckets(1)
	if ios == nil || bytes == nil || ios.Size != 4.32e6 || ios.Baseline != 1100 || ios.Burst != 3500 {
		t.Fatalf("P15 buckets %+v %+v", ios, bytes)
	}
	// At the burst rate the bucket drains 2,400 IOs a second: 1/1,800
	// of it, and lasts 30 minutes from full.
	if l := ios.LeftS(3500); math.Abs(l-1800) > 1e-9 {
		t.Errorf("a full bucket lasts %v s at 3,500 IOPS", l)
	}
	ios.Step(3500, 18)
	if math.Abs(ios.Level()-0.99) > 1e-12 || ios.Limit() != 3500 {
		t.Errorf("after 18 s at 3,500: level %v, limit %v", ios.Level(), ios.Limit())
	}
	// At the baseline nothing moves; below it the bucket refills, never
	// past full.
	ios.Step(1100, 100)
	if math.Abs(ios.Level()-0.99) > 1e-12 {
		t.Errorf("at the baseline the level moved to %v", ios.Level())
	}
	ios.Step(0, 1e6)
	if ios.Level() != 1 || ios.LeftS(1100) != -1 {
		t.Errorf("refilled: level %v, left %v", ios.Level(), ios.LeftS(1100))
	}
	ios.Empty()
	if ios.Limit() != 1100 {
		t.Errorf("empty: limit %v", ios.Limit())
	}
	// The same bucket from its rates.
	b := NewCreditBurst(Rate{IOPS: 1100, BWBytes: 125e6}, Rate{IOPS: 3500, BWBytes: 170e6}, 1800)
	if b.BucketIOs != 4.32e6 || b.BucketBytes != 45e6*1800 {
		t.Errorf("from rates: %+v", b)
	}
}
