package watch

import (
	"math"
	"testing"
)

func TestCreditP10(t *testing.T) {
	// P10: 500 IOPS baseline, 3500 burst, 30 min from a full bucket:
	// (3500-500) x 1800 = 5.4M IOs of credit. At 2800 IOPS the bucket
	// drains by 2300 a second; after 1628 s, 5.4M - 3,744,400 = 1,655,600
	// IOs are left, 720 s (12 minutes) at that rate.
	cr := newCredit(Ceiling{Name: "azure:P10", IOPS: 500, BurstIOPS: 3500, BurstSeconds: 1800, CreditStartPct: 100})
	var pct, cpct, left float64
	for i := 0; i < 1628; i++ {
		pct, cpct, left = cr.step(1, 2800, 0)
	}
	if math.Abs(left-720) > 1 {
		t.Errorf("left = %.1f s, want 720", left)
	}
	if math.Abs(cpct-1655600.0/5.4e6*100) > 0.01 {
		t.Errorf("credit = %.2f%%", cpct)
	}
	if math.Abs(pct-80) > 1e-9 { // 2800 of the 3500 burst ceiling
		t.Errorf("ceiling = %.1f%%, want 80", pct)
	}
	if got, want := BurstMessage("azure:P10", 2800, 0, left), "at 2,800 IOPS, a P10's burst credits last about 12 more minutes"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	// Below baseline the bucket refills at the headroom: 400 a second.
	_, c2, l2 := cr.step(10, 100, 0)
	if l2 != -1 || math.Abs(c2-(1655600.0+4000)/5.4e6*100) > 0.01 {
		t.Errorf("refill: credit %.3f%%, left %v", c2, l2)
	}
	// Empty: the ceiling in force is the baseline.
	cr.exhausted()
	if p, _, _ := cr.step(1, 500, 0); math.Abs(p-100) > 1e-9 {
		t.Errorf("at baseline with no credit: %.1f%% of ceiling, want 100", p)
	}
	// The VM's limit binds when lower.
	vm := newCredit(Ceiling{IOPS: 5000, VMIOPS: 3200})
	if p, c, _ := vm.step(1, 3200, 0); p != 100 || c != -1 {
		t.Errorf("VM cap: %.1f%%, credit %v", p, c)
	}
}

// A P15 (1,100 IOPS, 3,500 while credits last, a bucket of 2,400 x 1,800
// IOs) watched with the catalog's figures and the default assumption of
// a full bucket. Held at 1,100 IOPS it is at 100% of its ceiling, and
// the credit, which nothing drains, stays put; bursting at 3,500 it is
// at 100% of the burst ceiling, and the credit drains 2,400 IOs a
// second (1/1,800 of the bucket); held at 1,100 right after bursting,
// the bucket is known to be dry.
func TestCreditP15AtItsCap(t *testing.T) {
	c, err := ExpectFromCatalog("azure:P15", "")
	if err != nil {
		t.Fatal(err)
	}
	c.CreditStartPct = 100
	w := &Watcher{atBase: map[string]int{}, warned: map[string]bool{}}
	cr := newCredit(*c)
	tick := func(iops float64) (pct, cpct float64) {
		pct, cpct, left := cr.step(1, iops, iops*4096)
		w.burstCheck("sdc", cr, 0, iops, iops*4096, &cpct, &left)
		return pct, cpct
	}
	for i := 0; i < 10; i++ {
		if pct, cpct := tick(1100); math.Abs(pct-100) > 1e-9 || cpct != 100 {
			t.Fatalf("second %d at the cap: %.1f%% of ceiling, credit %.2f%%; want 100%% and 100%%", i, pct, cpct)
		}
	}
	for i := 1; i <= 10; i++ {
		pct, cpct := tick(3500)
		if want := 100 - 100*float64(i)/1800; math.Abs(pct-100) > 1e-9 || math.Abs(cpct-want) > 1e-9 {
			t.Fatalf("second %d bursting: %.1f%% of ceiling, credit %.4f%%; want 100%% and %.4f%%", i, pct, cpct, want)
		}
	}
	var cpct float64
	for i := 0; i < 4; i++ {
		_, cpct = tick(1100)
	}
	if pct, _ := tick(1100); math.Abs(pct-100) > 1e-9 || cpct != 0 {
		t.Errorf("held at the base after bursting: %.1f%% of ceiling, credit %.2f%%; want 100%% and 0", pct, cpct)
	}
}

// Issue 39.5: a P15 with an empty bucket held at its base rate, with the
// jitter a throttle's pace has around it, drains nothing: no seconds
// left are estimated, no "runs out" finding fires, and the ceiling in
// force is named as the base. Bursting, it is named the burst ceiling.
func TestEmptyBucketAtTheBase(t *testing.T) {
	c, err := ExpectFromCatalog("azure:P15", "")
	if err != nil {
		t.Fatal(err)
	}
	c.CreditStartPct = 0
	w := &Watcher{atBase: map[string]int{}, warned: map[string]bool{}}
	cr := newCredit(*c)
	jitter := []float64{1100, 1103, 1097, 1110, 1092, 1108, 1100, 1104}
	for i := 0; i < 240; i++ {
		iops := jitter[i%len(jitter)]
		_, cpct, left := cr.step(1, iops, iops*4096)
		if fs := w.burstCheck("sdc", cr, float64(i), iops, iops*4096, &cpct, &left); len(fs) > 0 {
			t.Fatalf("second %d at %.0f IOPS: %s", i, iops, fs[0].Summary)
		}
		if left >= 0 {
			t.Fatalf("second %d at %.0f IOPS with credit %.4f%%: %.1f s left, want none (not draining)", i, iops, cpct, left)
		}
		if got := cr.inForce(); got != "the base ceiling" {
			t.Fatalf("second %d: ceiling in force %q", i, got)
		}
	}
	full := newCredit(Ceiling{Name: c.Name, IOPS: c.IOPS, BurstIOPS: c.BurstIOPS, BurstSeconds: c.BurstSeconds, CreditStartPct: 100})
	if _, _, left := full.step(1, 3500, 0); left <= 0 || full.inForce() != "the burst ceiling" {
		t.Errorf("bursting from a full bucket: %.0f s left, ceiling %q", left, full.inForce())
	}
}
