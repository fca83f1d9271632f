package emulate

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/units"
)

// Profile is a cloud disk's published limits, enough to emulate it.
// Figures come from the limits catalog; Source names its sources.
type Profile struct {
	Name   string
	Source string
	// SizeGiB is the provisioned size the limits belong to.
	SizeGiB float64
	// IOPS and BPS are the baseline caps, for reads and writes together.
	IOPS, BPS float64
	// BurstIOPS / BurstBPS and the bucket (seconds at the burst rate, or
	// IO credits) describe credit bursting; 0 when there is none.
	BurstIOPS, BurstBPS float64
	BurstSeconds        float64
	BucketIOs           float64
	BucketBytes         float64
	// Latency is the typical per-IO latency the provider publishes, nil
	// where it publishes none (or only a bound); LatencyNote says which,
	// and where the figure comes from.
	Latency     *Latency
	LatencyNote string
	Note        string
}

// publishedLatency is what providers publish of a disk's typical latency,
// by catalog family, with the catalog's source key. Upper bounds ("below
// 10 ms", "sub-millisecond") are not typical figures: they are quoted,
// not emulated. A family missing here has no published figure.
var publishedLatency = map[string]struct {
	lat  *Latency
	note string
}{
	"gcp:hyperdisk-throughput": {&Latency{Read: Fixed(10 * time.Millisecond)},
		"Google publishes an average read latency of 10-30 ms (source gcp-hdt): reads emulated at its low end, 10 ms; no write figure published"},
	"azure:standard-hdd": {nil,
		"Azure publishes only bounds (write latency under 10 ms, read under 20 ms for most IO; source az-stdhdd-sizes): no latency emulated, add --latency"},
	"aws:io2": {nil,
		"AWS publishes only \"sub-millisecond average\" (no figure): no latency emulated, add --latency"},
}

// Examples are the profiles 'emulate profiles' lists; any disk of the
// limits catalog works (iolens catalog list).
var Examples = []string{"azure:P4", "azure:P15", "azure:E10", "aws:gp2:100GiB", "aws:gp3", "ibm:10iops-tier:300GiB", "gcp:hyperdisk-throughput:2TiB:throughput=200"}

// LookupProfile resolves a disk of the limits catalog, such as
// "azure:P4", "aws:gp2:100GiB" or "ibm:10iops-tier:300GiB", into the
// figures the emulator enforces: the sustained caps and, unless it must
// be enabled (and billed), the credit burst.
func LookupProfile(name string) (Profile, error) {
	c, err := limits.Default()
	if err != nil {
		return Profile{}, err
	}
	d, err := c.ParseDisk(name)
	if err != nil {
		var se *limits.SpecError
		if errors.As(err, &se) {
			return Profile{}, &hint.Error{Err: fmt.Errorf("profile %w", err), Advice: se.Hint() + "; 'iolens catalog list' lists the disks"}
		}
		return Profile{}, fmt.Errorf("profile %q: %w", name, err)
	}
	p := Profile{Name: name, Source: strings.Join(d.Edition.SourceKeys, ", "), SizeGiB: d.SizeGiB,
		IOPS: d.Read.IOPS, BPS: d.Read.BWBytes}
	var notes []string
	if d.Write != d.Read {
		notes = append(notes, fmt.Sprintf("writes are capped like reads (the disk's write limits: %s, %s)", units.FormatIOPS(d.Write.IOPS), units.FormatRate(d.Write.BWBytes)))
	}
	if b := d.Burst; b != nil && !b.OptIn {
		if b.IOPS > p.IOPS {
			p.BurstIOPS, p.BucketIOs = b.IOPS, b.BucketIOs
		}
		if b.BWBytes > p.BPS {
			p.BurstBPS, p.BucketBytes = b.BWBytes, b.BucketBytes
		}
		if p.BurstIOPS > 0 || p.BurstBPS > 0 {
			p.BurstSeconds = b.Seconds
			notes = append(notes, fmt.Sprintf("credit bursting (%s), bucket starts full", b.Model))
		}
	} else if b != nil {
		notes = append(notes, "on-demand bursting must be enabled: not emulated")
	}
	if d.Edition.IOUnitKiB > 0 {
		notes = append(notes, fmt.Sprintf("IOs above %s count as several against the IOPS cap in the cloud, not here", units.Stated(d.Edition.IOUnitKiB, "KiB")))
	}
	p.Note = strings.Join(append(notes, d.Notes...), "; ")
	p.LatencyNote = "no typical latency published: none emulated (add --latency)"
	if pl, ok := publishedLatency[d.Family.ID]; ok {
		p.Latency, p.LatencyNote = pl.lat, pl.note
	}
	return p, nil
}

// Apply copies the profile's limits into spec.
func (p Profile) Apply(s *Spec) {
	s.Limits = Limits{ReadIOPS: p.IOPS, WriteIOPS: p.IOPS, ReadBPS: p.BPS, WriteBPS: p.BPS}
	s.BurstIOPS, s.BurstBPS, s.BurstSeconds, s.BucketIOs, s.BucketBytes = p.BurstIOPS, p.BurstBPS, p.BurstSeconds, p.BucketIOs, p.BucketBytes
	s.Profile = p.Name
	if p.Latency != nil {
		l := *p.Latency
		s.Latency = &l
	}
}

// HostCache is the readwrite cache a VM size of the limits catalog gives
// a disk: the VM's cached limits as the cache's rates, and the write
// backlog limits assumes (limits.AssumedWriteBackBytes), not the VM's
// published cache size, which is the whole VM's, for reads and writes.
func HostCache(vm string) (iops, bps, bytes float64, err error) {
	c, err := limits.Default()
	if err != nil {
		return 0, 0, 0, err
	}
	v := c.VM(vm)
	if v == nil || v.Cached == nil {
		return 0, 0, 0, &hint.Error{Err: fmt.Errorf("no cached limits for VM size %q in the limits catalog", vm),
			Advice: "'iolens catalog list' lists the VM sizes; Azure sizes that support host caching have them"}
	}
	ub := 1e6
	if v.Unit == "MiB/s" {
		ub = 1 << 20
	}
	return v.Cached.IOPS, v.Cached.Tput * ub, limits.AssumedWriteBackBytes, nil
}

// CachePrediction is what limits' host-cache arithmetic (limits.WriteBack,
// the one the ReadWrite verdict uses) predicts for a readwrite spec under
// writes of ioSize bytes as fast as the cache takes them: whether a
// backlog builds, when it is full and how long IO stalls, in the spec's
// time (a --scale'd cache fills and drains scale times faster). The model
// lets StallIOPS through while stalled, so its stalls run a little longer.
func CachePrediction(s Spec, ioSize int64) (limits.CacheFill, bool) {
	s = s.withDefaults()
	if s.Cache != CacheReadWrite || ioSize <= 0 {
		return limits.CacheFill{}, false
	}
	rate := func(iops, bps float64) float64 {
		r := math.Inf(1)
		if iops > 0 {
			r = iops * float64(ioSize)
		}
		if bps > 0 {
			r = math.Min(r, bps)
		}
		return r
	}
	fill := rate(s.CacheIOPS, s.CacheBPS)
	drain := rate(s.Limits.WriteIOPS, s.Limits.WriteBPS)
	return limits.WriteBack(fill, drain, s.CacheBytes/s.scale()), true
}
