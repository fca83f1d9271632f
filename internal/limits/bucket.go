package limits

import "math"

// Bucket is a burst credit bucket as the clouds describe theirs (Azure
// credit bursting, gp2, st1): credits drain by what the disk does above
// its baseline and refill by what it leaves unused below it, up to
// Size; while it holds credits the disk may run at Burst. Rates are IOs
// or bytes per second, Size and Credits IOs or bytes. It is the one
// model of a bucket: expectations size it, watch follows it.
type Bucket struct {
	Baseline, Burst float64
	Size, Credits   float64
}

// Buckets are b's IO and byte buckets (nil where it has none), each
// holding start (0 to 1) of its size.
func (b *BurstInfo) Buckets(start float64) (ios, bytes *Bucket) {
	if b == nil {
		return nil, nil
	}
	start = math.Min(1, math.Max(0, start))
	if b.BucketIOs > 0 && b.IOPS > b.BaselineIOPS {
		ios = &Bucket{Baseline: b.BaselineIOPS, Burst: b.IOPS, Size: b.BucketIOs, Credits: start * b.BucketIOs}
	}
	if b.BucketBytes > 0 && b.BWBytes > b.BaselineBWBytes {
		bytes = &Bucket{Baseline: b.BaselineBWBytes, Burst: b.BWBytes, Size: b.BucketBytes, Credits: start * b.BucketBytes}
	}
	return ios, bytes
}

// NewCreditBurst is a credit burst from its rates: base is the
// sustained rate, burst the rate while credits last, and a full bucket
// lasts seconds at the burst rate (so it holds (burst - base) x seconds).
func NewCreditBurst(base, burst Rate, seconds float64) *BurstInfo {
	bi := &BurstInfo{Model: "credit", BaselineIOPS: base.IOPS, BaselineBWBytes: base.BWBytes, Seconds: seconds, StartsFull: true}
	if burst.IOPS > base.IOPS && base.IOPS > 0 {
		bi.IOPS, bi.BucketIOs = burst.IOPS, (burst.IOPS-base.IOPS)*seconds
	}
	if burst.BWBytes > base.BWBytes && base.BWBytes > 0 {
		bi.BWBytes, bi.BucketBytes = burst.BWBytes, (burst.BWBytes-base.BWBytes)*seconds
	}
	if bi.BucketIOs == 0 && bi.BucketBytes == 0 {
		return nil
	}
	return bi
}

// Step accounts dt seconds at rate: the credits drain by what ran above
// the baseline and refill by what was left below it.
func (k *Bucket) Step(rate, dt float64) {
	k.Credits = math.Min(k.Size, math.Max(0, k.Credits-(rate-k.Baseline)*dt))
}

// Use accounts used units (IOs or bytes) done over dt seconds, as a
// device's counters give them: the credits refill by the baseline's share
// of dt and drain by what was used.
func (k *Bucket) Use(used, dt float64) {
	k.Credits = math.Min(k.Size, math.Max(0, k.Credits+k.Baseline*dt-used))
}

// Level is the share of the bucket still held, 0 to 1.
func (k *Bucket) Level() float64 {
	if k.Size <= 0 {
		return 0
	}
	return k.Credits / k.Size
}

// Limit is the rate the disk may run at now: the burst rate while
// credits last, the baseline once they are gone.
func (k *Bucket) Limit() float64 {
	if k.Credits > 0 {
		return k.Burst
	}
	return k.Baseline
}

// LeftS is how long the credits last at rate, in seconds; -1 when rate
// does not drain them.
func (k *Bucket) LeftS(rate float64) float64 {
	if rate <= k.Baseline {
		return -1
	}
	return k.Credits / (rate - k.Baseline)
}

// Empty sets the bucket empty: the disk was seen held at its baseline
// after running above it, whatever the credits were thought to be.
func (k *Bucket) Empty() { k.Credits = 0 }
