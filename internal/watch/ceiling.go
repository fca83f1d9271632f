package watch

import (
	"fmt"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/units"
)

// Ceiling is what a disk (and the VM it is attached to) is expected to
// deliver. Rates are per second; bandwidth is in bytes (10^6 per MB).
// Zero means no limit of that kind.
type Ceiling struct {
	// Name is shown in messages, e.g. "azure:P10".
	Name string
	// IOPS and BWBytes are the provisioned (baseline) limits.
	IOPS, BWBytes float64
	// BurstIOPS and BurstBWBytes are the limits while burst credit lasts;
	// BurstSeconds is how long a full bucket lasts at the burst rate.
	BurstIOPS, BurstBWBytes float64
	BurstSeconds            float64
	// VMIOPS and VMBWBytes are the VM's limits for this disk's traffic.
	VMIOPS, VMBWBytes float64
	// CreditStartPct is the credit assumed when watching starts (a
	// bucket starts full on Azure and gp2).
	CreditStartPct float64
}

// Bursts reports whether the disk has a credit bucket.
func (c Ceiling) Bursts() bool {
	return c.BurstSeconds > 0 && (c.BurstIOPS > c.IOPS || c.BurstBWBytes > c.BWBytes)
}

// burst is the disk's credit burst as the limits package models it.
func (c Ceiling) burst() *limits.BurstInfo {
	return limits.NewCreditBurst(limits.Rate{IOPS: c.IOPS, BWBytes: c.BWBytes}, limits.Rate{IOPS: c.BurstIOPS, BWBytes: c.BurstBWBytes}, c.BurstSeconds)
}

// credit follows the disk's burst buckets (limits.Bucket) from the
// observed rate. The ceiling is the disk's base rate: the rate it holds
// for good. Only a rate seen above it says the disk is bursting, and
// then the burst rate is the ceiling while the bucket lasts. The
// buckets' level can only be estimated: where it stood when watching
// started is unknown (CreditStartPct is assumed), and other readers of
// the same disk count; a disk seen held at its base right after
// bursting has none left, whatever the estimate.
type credit struct {
	c         Ceiling
	ios, byts *limits.Bucket
	// bursting: the last interval ran above the base rate.
	bursting bool
}

// burstingAbove: a rate 5% above the base rate is a burst, not noise
// around a throttle's pace.
const burstingAbove = 1.05

func newCredit(c Ceiling) *credit {
	cr := &credit{c: c}
	cr.ios, cr.byts = c.burst().Buckets(c.CreditStartPct / 100)
	return cr
}

// limits returns the IOPS and bandwidth limits in force: the base rates,
// the burst rates while the disk is seen bursting and has credit left,
// within the VM's caps.
func (cr *credit) limits() (iops, bw float64) {
	c := cr.c
	iops, bw = c.IOPS, c.BWBytes
	if cr.bursting && cr.ios != nil {
		iops = cr.ios.Limit()
	}
	if cr.bursting && cr.byts != nil {
		bw = cr.byts.Limit()
	}
	if c.VMIOPS > 0 && (iops == 0 || c.VMIOPS < iops) {
		iops = c.VMIOPS
	}
	if c.VMBWBytes > 0 && (bw == 0 || c.VMBWBytes < bw) {
		bw = c.VMBWBytes
	}
	return iops, bw
}

// step accounts for one interval and returns the rate as a share of the
// ceiling in force, the credit left in % (-1 without bursting) and the
// seconds it lasts at this rate (-1 when not draining).
func (cr *credit) step(dt, iops, bw float64) (pct, creditPct, leftS float64) {
	c := cr.c
	cr.bursting = c.IOPS > 0 && iops > burstingAbove*c.IOPS || c.BWBytes > 0 && bw > burstingAbove*c.BWBytes
	li, lb := cr.limits()
	if li > 0 {
		pct = iops / li * 100
	}
	if lb > 0 {
		pct = max(pct, bw/lb*100)
	}
	creditPct, leftS = -1, -1
	if cr.ios == nil && cr.byts == nil {
		return pct, creditPct, leftS
	}
	// The scarcer of the two buckets decides.
	creditPct = 100
	for _, x := range []struct {
		k    *limits.Bucket
		rate float64
	}{{cr.ios, iops}, {cr.byts, bw}} {
		if x.k == nil {
			continue
		}
		x.k.Step(x.rate, dt)
		creditPct = min(creditPct, 100*x.k.Level())
		// Only a rate above the base, beyond a throttle's noise around its
		// pace, drains credit: at the base rate an empty bucket stays
		// empty, and nothing runs out.
		if x.rate <= burstingAbove*x.k.Baseline || x.k.Credits <= 0 {
			continue
		}
		if l := x.k.LeftS(x.rate); l >= 0 && (leftS < 0 || l < leftS) {
			leftS = l
		}
	}
	return pct, creditPct, leftS
}

// inForce names the ceiling the last interval was measured against: the
// burst rates while the disk bursts with credit left, else the base.
func (cr *credit) inForce() string {
	c := cr.c
	li, lb := cr.limits()
	switch {
	case c.VMIOPS > 0 && li == c.VMIOPS && li != c.IOPS || c.VMBWBytes > 0 && lb == c.VMBWBytes && lb != c.BWBytes:
		return "the VM's cap"
	case cr.bursting && (cr.ios != nil && cr.ios.Credits > 0 || cr.byts != nil && cr.byts.Credits > 0):
		return "the burst ceiling"
	}
	return "the base ceiling"
}

// exhausted empties the buckets: the disk was seen held at its base
// right after bursting.
func (cr *credit) exhausted() {
	for _, k := range []*limits.Bucket{cr.ios, cr.byts} {
		if k != nil {
			k.Empty()
		}
	}
}

// BurstMessage says how long the burst lasts at the observed rate, e.g.
// "at 2,800 IOPS, a P10's burst credits last about 12 more minutes".
func BurstMessage(name string, iops, bw, leftS float64) string {
	rate := units.IOPS(iops)
	if iops < 1 {
		rate = units.BytesSI(bw) + "/s"
	}
	n, unit := units.SpanWords(leftS)
	return fmt.Sprintf("at %s, %s's burst credits last about %s more %s", rate, article(name), n, unit)
}

func article(name string) string {
	if name == "" {
		return "the disk"
	}
	if i := lastColon(name); i >= 0 {
		name = name[i+1:]
	}
	switch name[0] {
	case 'A', 'E', 'F', 'H', 'I', 'L', 'M', 'N', 'O', 'R', 'S', 'X', 'a', 'e', 'i', 'o', 'u':
		return "an " + name
	}
	return "a " + name
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}
