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
	if x.Cache != CacheReadWrite {
		return CacheFill{}, false
	}
	y := *x
	y.Cache = CacheNone
	drain := y.At(ioSize, true).BWBytes
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
	return fmt.Sprintf("writes enter the cache at %s MB/s and the disk drains only %s MB/s: a %s backlog fills in %s, then IO to the disk stalls %s while it drains",
		units.Figure(cf.FillBPS/1e6), units.Figure(cf.DrainBPS/1e6), units.Trim(cf.BacklogBytes/gib, 1)+" GiB", units.Span(cf.FillSeconds, "no time limit"), stall)
}

// BacklogNote reconciles the assumed backlog with the VM's cache size.
func (cf CacheFill) BacklogNote() string {
	s := fmt.Sprintf("the %s backlog is assumed (Azure publishes none; seed 003's P4 stalled after 20-30 s of writes at about 128 MiB/s, 2.1-3.1 GiB)", units.Trim(cf.BacklogBytes/gib, 1)+" GiB")
	if cf.CacheGiB > 0 {
		s += fmt.Sprintf("; the VM's %g GiB cache is the whole VM's, for reads and writes", cf.CacheGiB)
	}
	return s
}
