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

// Use is Step for counted units: what was done over dt, refilled by the
// baseline's share of dt, within 0 and the size.
func TestBucketUse(t *testing.T) {
	k := &Bucket{Baseline: 100, Burst: 1000, Size: 5000, Credits: 1000}
	k.Use(1100, 2) // 550/s for 2 s: 900 above the baseline's 200
	if k.Credits != 100 {
		t.Errorf("drained to %g, want 100", k.Credits)
	}
	k.Use(0, 10) // idle: 1000 back
	if k.Credits != 1100 {
		t.Errorf("refilled to %g, want 1100", k.Credits)
	}
	k.Use(0, 1000)
	if k.Credits != 5000 {
		t.Errorf("refilled past its size: %g", k.Credits)
	}
	k.Use(1e9, 1)
	if k.Credits != 0 {
		t.Errorf("drained below empty: %g", k.Credits)
	}
	a, b := &Bucket{Baseline: 100, Size: 5000, Credits: 2500}, &Bucket{Baseline: 100, Size: 5000, Credits: 2500}
	a.Use(1500, 3)
	b.Step(500, 3)
	if math.Abs(a.Credits-b.Credits) > 1e-9 {
		t.Errorf("Use %g and Step %g disagree on the same IO", a.Credits, b.Credits)
	}
}
