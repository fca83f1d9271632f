package limits

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/units"
)

// AssumedWriteBackBytes is the backlog of written data a ReadWrite host
// cache holds for one disk before IO to that disk stalls. Azure publishes
// no such figure: the cache size of a VM's size table (200 GiB on a
// D8s_v3) is the whole VM's, for reads and writes of every cached disk.
// Seed 003 wrote for 20-30 s at about 128 MiB/s into a P4 that drains at
// 25 MiB/s before IO stopped: 2.1 to 3.1 GiB of backlog. iolens assumes
// 3 GiB, and so does the emulator's readwrite cache.
const AssumedWriteBackBytes = 3 << 30

// CacheFill is the arithmetic of a ReadWrite host cache under writes:
// written data enters at FillBPS and leaves for the disk at DrainBPS. The
// backlog grows only when the fill is faster than the drain; then it
// reaches BacklogBytes after FillSeconds, and IO to the disk stalls for
// StallSeconds while the disk drains it.
type CacheFill struct {
	FillBPS      float64 `json:"fill_bps"`
	DrainBPS     float64 `json:"drain_bps"`
	BacklogBytes float64 `json:"backlog_bytes"`
	Grows        bool    `json:"grows"`
	FillSeconds  float64 `json:"fill_s,omitempty"`
	StallSeconds float64 `json:"stall_s,omitempty"`
	// CacheGiB is the VM's published cache size (0 when not known), for
	// saying how it differs from the backlog.
	CacheGiB float64 `json:"cache_gib,omitempty"`
	// BurstDrainBPS is what the disk drains while its burst credits last
	// and BurstSeconds how long they last from a full bucket (the burst
	// table's figure); BurstFillSeconds and BurstStallSeconds are the
	// cycle then (0: no backlog builds while they last). The fields above
	// are the cycle once the credits are spent.
	BurstDrainBPS     float64 `json:"burst_drain_bps,omitempty"`
	BurstSeconds      float64 `json:"burst_s,omitempty"`
	BurstFillSeconds  float64 `json:"burst_fill_s,omitempty"`
	BurstStallSeconds float64 `json:"burst_stall_s,omitempty"`
	// Merged: sequential writes drained as merged IOs, at the disk's
	// ceiling for large IOs rather than at the written IO size.
	Merged bool `json:"merged,omitempty"`
}

// WriteBack works out a ReadWrite cache's fill and stall: the backlog
// grows at fill - drain, so a backlog of size B fills after B / (fill -
// drain) s; then nothing more enters until the disk has drained it, B /
// drain s. A drain as fast as the fill never builds a backlog.
func WriteBack(fillBPS, drainBPS, backlogBytes float64) CacheFill {
	cf := CacheFill{FillBPS: fillBPS, DrainBPS: drainBPS, BacklogBytes: backlogBytes}
	if !(fillBPS > drainBPS) || backlogBytes <= 0 {
		return cf
	}
	cf.Grows = true
	cf.FillSeconds = backlogBytes / (fillBPS - drainBPS)
	cf.StallSeconds = math.Inf(1)
	if drainBPS > 0 {
		cf.StallSeconds = backlogBytes / drainBPS
	}
	return cf
}

// HostCacheFill is the ReadWrite cache arithmetic for this disk at an IO
// size: writes entering at fillBPS (0: as fast as the VM's cached limits
// take them), draining at the disk's sustained write ceiling, which the
// VM's uncached limits also bound. ok is false when the cache mode is not
// ReadWrite.
func (x *Expectation) HostCacheFill(ioSize int64, fillBPS float64) (CacheFill, bool) {
	return x.HostCacheFillPattern(ioSize, fillBPS, false)
}

// HostCacheFillPattern is HostCacheFill for random or sequential writes.
// The cache writes sequential data back to the disk merged into large
// IOs, so it drains at the disk's ceiling for large IOs (1 MiB), not at
// its IOPS cap times the written size: seed 000's 4 KiB sequential writes
// into a P4 stalled for at most 108 s, which 3 GiB drained at the P4's 25
// MiB/s (about 123 s) matches and 3 GiB at 120 x 4 KiB IOs a second (1.8
// h) does not. While the disk's burst credits last, it drains at its
// burst ceiling.
func (x *Expectation) HostCacheFillPattern(ioSize int64, fillBPS float64, sequential bool) (CacheFill, bool) {
	if x.Cache != CacheReadWrite {
		return CacheFill{}, false
	}
	y := *x
	y.Cache = CacheNone
	drainSize := ioSize
	if sequential && drainSize < sizingBWIO {
		drainSize = sizingBWIO
	}
	ce := y.At(drainSize, true)
	drain := ce.BWBytes
	var cacheGiB float64
	if v := x.VM; v != nil && v.Cached != nil {
		cacheGiB = v.Cached.CacheGiB
		if fillBPS <= 0 {
			ub := unitBytes(v.Unit)
			k := x.vmShare()
			fillBPS = math.Min(v.Cached.IOPS*k*float64(ioSize), v.Cached.Tput*ub*k)
		}
	}
	if fillBPS <= 0 {
		return CacheFill{}, false
	}
	cf := WriteBack(fillBPS, drain, AssumedWriteBackBytes)
	cf.CacheGiB = cacheGiB
	cf.Merged = drainSize != ioSize
	if b := ce.Burst; cf.Grows && b != nil && b.BWBytes > drain {
		cf.BurstDrainBPS, cf.BurstSeconds = b.BWBytes, b.Seconds
		if bc := WriteBack(fillBPS, b.BWBytes, AssumedWriteBackBytes); bc.Grows {
			cf.BurstFillSeconds, cf.BurstStallSeconds = bc.FillSeconds, bc.StallSeconds
		}
	}
	return cf, true
}

// Sentence says what the arithmetic predicts, for a finding or a report.
func (cf CacheFill) Sentence() string {
	if !cf.Grows {
		return fmt.Sprintf("writes enter the cache at %s MB/s and the disk drains %s MB/s, so no backlog builds and IO does not stall",
			units.Figure(cf.FillBPS/1e6), units.Figure(cf.DrainBPS/1e6))
	}
	stall := "indefinitely (the disk drains nothing)"
	if !math.IsInf(cf.StallSeconds, 0) {
		stall = "for " + units.Span(cf.StallSeconds, "no time limit")
	}
	merged := ""
	if cf.Merged {
		merged = " (sequential writes drained merged, at its ceiling for large IOs)"
	}
	s := fmt.Sprintf("writes enter the cache at %s MB/s and the disk drains only %s MB/s%s: a %s backlog fills in %s, then IO to the disk stalls %s while it drains",
		units.Figure(cf.FillBPS/1e6), units.Figure(cf.DrainBPS/1e6), merged, units.Trim(cf.BacklogBytes/gib, 1)+" GiB", units.Span(cf.FillSeconds, "no time limit"), stall)
	switch {
	case cf.BurstDrainBPS > 0 && cf.BurstFillSeconds == 0:
		s = fmt.Sprintf("while the disk's burst credits last (%s from a full bucket, as in the burst table) it drains %s MB/s, as fast as writes enter, and no backlog builds; once they are spent, %s",
			units.Span(cf.BurstSeconds, "no time limit"), units.Figure(cf.BurstDrainBPS/1e6), s)
	case cf.BurstDrainBPS > 0:
		s = fmt.Sprintf("while the disk's burst credits last (%s from a full bucket, as in the burst table) it drains %s MB/s: the backlog fills in %s and IO stalls for %s; once they are spent, %s",
			units.Span(cf.BurstSeconds, "no time limit"), units.Figure(cf.BurstDrainBPS/1e6), units.Span(cf.BurstFillSeconds, "no time limit"), units.Span(cf.BurstStallSeconds, "no time limit"), s)
	}
	return s
}

// BacklogNote reconciles the assumed backlog with the VM's cache size.
func (cf CacheFill) BacklogNote() string {
	s := fmt.Sprintf("the %s backlog is fitted to seed 003 (Azure publishes none; its P4 stalled after 20-30 s of writes at about 128 MiB/s, 2.1-3.1 GiB), so seed 003's stall is not a prediction", units.Trim(cf.BacklogBytes/gib, 1)+" GiB")
	if cf.CacheGiB > 0 {
		s += fmt.Sprintf("; the VM's %s cache is the whole VM's, for reads and writes", units.Stated(cf.CacheGiB, "GiB"))
	}
	return s
}
