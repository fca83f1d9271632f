package watch

import (
	"fmt"
	"math"
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

// credit follows a token bucket from the observed rate: the bucket drains
// by the rate above baseline and refills by the headroom below it. It can
// only estimate: the real bucket's level when watching started is unknown
// (CreditStartPct is assumed), and other readers of the same disk count.
type credit struct {
	c Ceiling
	// IOs and bytes of credit, and the bucket sizes.
	ios, bytes       float64
	capIOs, capBytes float64
}

func newCredit(c Ceiling) *credit {
	cr := &credit{c: c}
	if c.BurstIOPS > c.IOPS && c.IOPS > 0 {
		cr.capIOs = (c.BurstIOPS - c.IOPS) * c.BurstSeconds
	}
	if c.BurstBWBytes > c.BWBytes && c.BWBytes > 0 {
		cr.capBytes = (c.BurstBWBytes - c.BWBytes) * c.BurstSeconds
	}
	f := c.CreditStartPct / 100
	cr.ios, cr.bytes = cr.capIOs*f, cr.capBytes*f
	return cr
}

// limits returns the IOPS and bandwidth limits in force.
func (cr *credit) limits() (iops, bw float64) {
	c := cr.c
	iops, bw = c.IOPS, c.BWBytes
	if cr.capIOs > 0 && cr.ios > 0 {
		iops = c.BurstIOPS
	}
	if cr.capBytes > 0 && cr.bytes > 0 {
		bw = c.BurstBWBytes
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
// ceiling in force (before the interval's drain), the credit left in %
// (-1 without bursting) and the seconds it lasts at this rate (-1 when
// not draining).
func (cr *credit) step(dt, iops, bw float64) (pct, creditPct, leftS float64) {
	li, lb := cr.limits()
	if li > 0 {
		pct = iops / li * 100
	}
	if lb > 0 {
		pct = max(pct, bw/lb*100)
	}
	creditPct, leftS = -1, -1
	if cr.capIOs == 0 && cr.capBytes == 0 {
		return pct, creditPct, leftS
	}
	c := cr.c
	if cr.capIOs > 0 {
		cr.ios = math.Min(cr.capIOs, math.Max(0, cr.ios-(iops-c.IOPS)*dt))
	}
	if cr.capBytes > 0 {
		cr.bytes = math.Min(cr.capBytes, math.Max(0, cr.bytes-(bw-c.BWBytes)*dt))
	}
	// The scarcer of the two buckets decides.
	creditPct = 100
	if cr.capIOs > 0 {
		creditPct = cr.ios / cr.capIOs * 100
		if iops > c.IOPS {
			leftS = cr.ios / (iops - c.IOPS)
		}
	}
	if cr.capBytes > 0 {
		creditPct = min(creditPct, cr.bytes/cr.capBytes*100)
		if bw > c.BWBytes {
			l := cr.bytes / (bw - c.BWBytes)
			if leftS < 0 || l < leftS {
				leftS = l
			}
		}
	}
	return pct, creditPct, leftS
}

// exhausted resets the bucket: the disk was seen held at baseline after
// running above it, so whatever the model said, the credit is gone.
func (cr *credit) exhausted() { cr.ios, cr.bytes = 0, 0 }

// BurstMessage says how long the burst lasts at the observed rate, e.g.
// "at 2800 IOPS, a P10's burst credits last about 12 more minutes".
func BurstMessage(name string, iops, bw, leftS float64) string {
	rate := fmt.Sprintf("%.0f IOPS", iops)
	if iops < 1 {
		rate = bytesSI(bw) + "/s"
	}
	n, unit := duration(leftS)
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

func duration(s float64) (string, string) {
	switch {
	case s >= 2*3600:
		return fmt.Sprintf("%.0f", s/3600), "hours"
	case s >= 90:
		return fmt.Sprintf("%.0f", s/60), "minutes"
	}
	return fmt.Sprintf("%.0f", s), "seconds"
}
