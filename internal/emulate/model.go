package emulate

import (
	"math"
	"time"

	"github.com/iolens/iolens/internal/limits"
)

// Usage is the IO the emulated disk completed over one controller period,
// from its block device counters.
type Usage struct {
	ReadIOs, WriteIOs     float64
	ReadBytes, WriteBytes float64
}

// bucket is one credit bucket (IOs or bytes): limits.Bucket, the one
// model of a cloud disk's credits, with the emulator's switch between the
// burst and the baseline rate.
type bucket struct {
	resource string
	limits.Bucket
	bursting bool
}

func newBucket(resource string, baseline, burst, size float64, empty bool) *bucket {
	if burst <= 0 || size <= 0 {
		return nil
	}
	b := &bucket{resource: resource, Bucket: limits.Bucket{Baseline: baseline, Burst: burst, Size: size, Credits: size}, bursting: true}
	if empty {
		b.Credits, b.bursting = 0, false
	}
	return b
}

// resume is how many credits a dry bucket needs before bursting again: one
// second at the burst rate, so a load that runs at the baseline does not
// flip between the two on counter noise.
func (b *bucket) resume() float64 { return math.Min(b.Size, b.Burst-b.Baseline) }

func (b *bucket) rate() float64 {
	if b.bursting {
		return b.Burst
	}
	return b.Baseline
}

// step accounts used units over dt seconds and says whether the state flipped.
func (b *bucket) step(used, dt float64) bool {
	b.Use(used, dt)
	switch {
	case b.bursting && b.Credits <= 0:
		b.bursting = false
		return true
	case !b.bursting && b.Credits >= b.resume():
		b.bursting = true
		return true
	}
	return false
}

// writeCache is a readwrite host cache: written data lands in it at the
// cache's rate and drains to the disk at the disk's rate.
type writeCache struct {
	size               float64
	dirtyBytes, dirtyN float64
	stalled            bool
}

// step adds what was written, drains up to the disk's caps over dt and
// returns what reached the disk (bytes, IOs) and whether the stall state
// flipped. A full cache stalls until it is empty.
func (c *writeCache) step(w Usage, diskBPS, diskIOPS, dt float64) (bytes, ios float64, flipped bool) {
	c.dirtyBytes += w.WriteBytes
	c.dirtyN += w.WriteIOs
	if c.dirtyBytes > 0 {
		mean := c.dirtyBytes / math.Max(c.dirtyN, 1)
		can := math.Inf(1)
		if diskBPS > 0 {
			can = diskBPS * dt
		}
		if diskIOPS > 0 {
			can = math.Min(can, diskIOPS*dt*mean)
		}
		bytes = math.Min(can, c.dirtyBytes)
		ios = bytes / mean
		c.dirtyBytes -= bytes
		c.dirtyN = math.Max(0, c.dirtyN-ios)
		if c.dirtyBytes < 1 {
			c.dirtyBytes, c.dirtyN = 0, 0
		}
	}
	switch {
	case !c.stalled && c.dirtyBytes >= c.size:
		c.stalled = true
		flipped = true
	case c.stalled && c.dirtyBytes == 0:
		c.stalled = false
		flipped = true
	}
	return bytes, ios, flipped
}

// Model is the controller's model of an emulated cloud disk: credit
// buckets and a write cache, stepped with the IO the disk did. It has no
// clock of its own, so tests drive it with made-up times and usage.
type Model struct {
	spec   Spec
	start  time.Time
	last   time.Time
	iops   *bucket
	bw     *bucket
	cache  *writeCache
	limits Limits
}

// State is a snapshot of the model for status output.
type State struct {
	Limits       Limits    `json:"limits"`
	IOPSBursting *bool     `json:"iops_bursting,omitempty"`
	IOPSCredits  *float64  `json:"iops_credits,omitempty"`
	IOPSBucket   *float64  `json:"iops_bucket,omitempty"`
	BWBursting   *bool     `json:"bw_bursting,omitempty"`
	BWCredits    *float64  `json:"bw_credits,omitempty"`
	BWBucket     *float64  `json:"bw_bucket,omitempty"`
	Stalled      *bool     `json:"stalled,omitempty"`
	DirtyBytes   *float64  `json:"dirty_bytes,omitempty"`
	CacheBytes   *float64  `json:"cache_bytes,omitempty"`
	ElapsedS     float64   `json:"elapsed_s"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// NewModel builds the model for spec (defaults applied), starting at start.
func NewModel(spec Spec, start time.Time) *Model {
	spec = spec.withDefaults()
	sc := spec.scale()
	m := &Model{spec: spec, start: start, last: start}
	l := spec.Limits
	if spec.BurstIOPS > 0 {
		size := spec.BucketIOs
		if size == 0 {
			size = (spec.BurstIOPS - l.ReadIOPS) * spec.BurstSeconds
		}
		m.iops = newBucket(ResourceIOPS, l.ReadIOPS, spec.BurstIOPS, size/sc, spec.StartEmpty)
	}
	if spec.BurstBPS > 0 {
		size := spec.BucketBytes
		if size == 0 {
			size = (spec.BurstBPS - l.ReadBPS) * spec.BurstSeconds
		}
		m.bw = newBucket(ResourceBW, l.ReadBPS, spec.BurstBPS, size/sc, spec.StartEmpty)
	}
	if spec.Cache == CacheReadWrite {
		m.cache = &writeCache{size: spec.CacheBytes / sc}
	}
	m.limits = m.desired()
	return m
}

// Limits are the throttle caps the model wants now.
func (m *Model) Limits() Limits { return m.limits }

// BurstSeconds predicts how long a full bucket lasts under a load that
// runs at the burst rate: size / (burst - baseline), for the resource
// ("iops" or "bw"); 0 if it does not burst.
func (m *Model) BurstSeconds(resource string) float64 {
	b := m.iops
	if resource == ResourceBW {
		b = m.bw
	}
	if b == nil {
		return 0
	}
	return b.Size / (b.Burst - b.Baseline)
}

// diskRates are the disk's own caps in its current credit state.
func (m *Model) diskRates() Limits {
	l := m.spec.Limits
	if m.iops != nil {
		l.ReadIOPS, l.WriteIOPS = m.iops.rate(), m.iops.rate()
	}
	if m.bw != nil {
		l.ReadBPS, l.WriteBPS = m.bw.rate(), m.bw.rate()
	}
	return l
}

func (m *Model) desired() Limits {
	d := m.diskRates()
	s := m.spec
	switch s.Cache {
	case CacheReadOnly:
		d.ReadIOPS, d.ReadBPS = s.CacheIOPS, s.CacheBPS
	case CacheReadWrite:
		d = Limits{ReadIOPS: s.CacheIOPS, WriteIOPS: s.CacheIOPS, ReadBPS: s.CacheBPS, WriteBPS: s.CacheBPS}
		if m.cache.stalled {
			d.ReadIOPS, d.WriteIOPS = StallIOPS, StallIOPS
		}
	}
	return d
}

// Step feeds the IO done since the previous step (or the start) and
// returns the state changes, each with the limits in force after it. A
// limits change with no state change yields a "limits" event.
func (m *Model) Step(now time.Time, u Usage) []Event {
	dt := now.Sub(m.last).Seconds()
	m.last = now
	if dt <= 0 {
		return nil
	}
	var evs []Event
	// What reached the disk: with a readwrite cache, the drain; with a
	// readonly cache, the writes (reads were hits); else everything.
	diskIOs, diskBytes := u.ReadIOs+u.WriteIOs, u.ReadBytes+u.WriteBytes
	switch m.spec.Cache {
	case CacheReadOnly:
		diskIOs, diskBytes = u.WriteIOs, u.WriteBytes
	case CacheReadWrite:
		r := m.diskRates()
		var flipped bool
		diskBytes, diskIOs, flipped = m.cache.step(u, r.WriteBPS, r.WriteIOPS, dt)
		if flipped {
			kind := EventStallEnd
			if m.cache.stalled {
				kind = EventStallStart
			}
			d := m.cache.dirtyBytes
			evs = append(evs, Event{Event: kind, DirtyBytes: &d})
		}
	}
	for _, b := range []*bucket{m.iops, m.bw} {
		if b == nil {
			continue
		}
		used := diskIOs
		if b.resource == ResourceBW {
			used = diskBytes
		}
		if b.step(used, dt) {
			kind := EventBurstEnd
			if b.bursting {
				kind = EventBurstStart
			}
			c := b.Credits
			evs = append(evs, Event{Event: kind, Resource: b.resource, Credits: &c})
		}
	}
	next := m.desired()
	if next != m.limits && len(evs) == 0 {
		evs = append(evs, Event{Event: EventLimits})
	}
	m.limits = next
	for i := range evs {
		evs[i].Time = now
		evs[i].ElapsedS = now.Sub(m.start).Seconds()
		evs[i].setLimits(next)
	}
	return evs
}

// State returns a snapshot for status output.
func (m *Model) State() State {
	st := State{Limits: m.limits, ElapsedS: m.last.Sub(m.start).Seconds(), UpdatedAt: m.last}
	if b := m.iops; b != nil {
		st.IOPSBursting, st.IOPSCredits, st.IOPSBucket = ptr(b.bursting), ptr(b.Credits), ptr(b.Size)
	}
	if b := m.bw; b != nil {
		st.BWBursting, st.BWCredits, st.BWBucket = ptr(b.bursting), ptr(b.Credits), ptr(b.Size)
	}
	if c := m.cache; c != nil {
		st.Stalled, st.DirtyBytes, st.CacheBytes = ptr(c.stalled), ptr(c.dirtyBytes), ptr(c.size)
	}
	return st
}

func ptr[T any](v T) *T { return &v }
