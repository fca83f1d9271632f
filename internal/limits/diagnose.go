package limits

import (
	"fmt"
	"math"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Verdicts of a ceiling finding, as its summary opens (its code in
// brackets).
const (
	VerdictDiskIOPS = "at the disk IOPS cap"              // disk-iops
	VerdictDiskBW   = "at the disk bandwidth cap"         // disk-bandwidth
	VerdictVM       = "the VM cap binds"                  // vm-cap
	VerdictShare    = "the node bandwidth share binds"    // node-share
	VerdictLatency  = "latency-bound"                     // latency
	VerdictAbove    = "above the ceiling"                 // above-ceiling
	VerdictBelow    = "well below the ceiling"            // below-ceiling
	VerdictCacheRW  = "ReadWrite host cache under writes" // host-cache-rw
	KindCeiling     = result.KindCeiling
	atCapFraction   = 0.9
	aboveFraction   = 1.1
)

// Measured is what Diagnose needs from a result.
type Measured struct {
	IOPS    float64
	BWBytes float64
	// BlockSize in bytes; IODepth x NumJobs is the queue depth.
	BlockSize int64
	IODepth   int
	NumJobs   int
	// MeanLatNs is the mean time one IO holds its slot: the completion
	// latency, and for a test that syncs its writes, its share of the
	// sync each write waits for.
	MeanLatNs float64
	// SyncLatNs is the sync's share of MeanLatNs (0 without syncs).
	SyncLatNs float64
	Write     bool // any writes
	Read      bool // any reads
	Random    bool
	Direct    bool
	// DirectUnknown: the source did not say whether IO was direct.
	DirectUnknown bool
	// WriteBWBytes is the write part of BWBytes.
	WriteBWBytes float64
	// Syncs: the test flushes its writes (fsync, fdatasync, O_SYNC), so
	// a write cache cannot hold a backlog of them.
	Syncs bool
}

// MeasuredFrom takes the figures of a result (reads and writes together).
func MeasuredFrom(r *result.Result) (Measured, bool) {
	m := Measured{BlockSize: r.Test.BlockSize, IODepth: r.Test.IODepth, NumJobs: r.Test.NumJobs, Direct: r.Test.Direct, DirectUnknown: r.Test.DirectUnknown,
		Random: strings.HasPrefix(r.Test.RW, "rand")}
	var latW float64
	for _, d := range []*result.DirResult{r.Read, r.Write} {
		if d == nil || d.IOPS <= 0 {
			continue
		}
		m.IOPS += d.IOPS
		m.BWBytes += d.BWBytes
		latW += d.Lat.MeanNs * d.IOPS
		if d == r.Write {
			m.Write = true
			m.WriteBWBytes = d.BWBytes
		} else {
			m.Read = true
		}
	}
	if m.IOPS <= 0 || r.Status != "ok" {
		return m, false
	}
	m.MeanLatNs = latW / m.IOPS
	m.Syncs = syncs(r.Test)
	if m.Write && r.Sync != nil && r.Sync.Lat.MeanNs > 0 {
		// fdatasync=N syncs every Nth write, and the writes between wait
		// for it in turn: each write's share is the sync's mean over N.
		per := float64(max(r.Test.Fdatasync, 1))
		m.SyncLatNs = r.Sync.Lat.MeanNs / per * (m.WriteBWBytes / math.Max(m.BWBytes, 1))
		m.MeanLatNs += m.SyncLatNs
	}
	if m.BlockSize <= 0 {
		m.BlockSize = int64(m.BWBytes / m.IOPS)
	}
	return m, m.BlockSize > 0
}

// Diagnose compares a result with what the expectation says the platform
// should deliver and returns "ceiling" findings: the share of the
// ceiling reached, the component that binds, and what to change.
func (c *Catalog) Diagnose(r *result.Result, x *Expectation) []result.Finding {
	m, ok := MeasuredFrom(r)
	if !ok {
		return nil
	}
	return c.DiagnoseMeasured(m, x)
}

// DiagnoseMeasured is Diagnose on bare figures.
func (c *Catalog) DiagnoseMeasured(m Measured, x *Expectation) []result.Finding {
	ce := x.At(m.BlockSize, m.Write && !m.Read)
	if m.Write && m.Read {
		// Mixed: the caps cover reads and writes together; take the
		// lower of the two directions.
		if w := x.At(m.BlockSize, true); w.IOPS < ce.IOPS {
			ce = w
		}
	}
	qd := max(m.IODepth, 1) * max(m.NumJobs, 1)
	var little float64
	if m.MeanLatNs > 0 {
		little = float64(qd) / (m.MeanLatNs / 1e9)
	}
	pct := m.IOPS / ce.IOPS
	ev := map[string]float64{
		"measured_iops": m.IOPS, "measured_bw_bytes": m.BWBytes,
		"ceiling_iops": ce.IOPS, "ceiling_bw_bytes": ce.BWBytes, "ceiling_pct": pct * 100,
		"qd": float64(qd), "lat_mean_ns": m.MeanLatNs, "little_max_iops": little, "io_size_bytes": float64(m.BlockSize),
	}
	name := x.Disk.Spec
	if x.VM != nil {
		name += " on " + x.VM.ID
	}
	rate := func(iops, bw float64) string {
		return fmt.Sprintf("%s IOPS, %s MB/s", units.Figure(iops), units.Figure(bw/1e6))
	}
	f := result.Finding{Kind: KindCeiling, Severity: "info", Evidence: ev}
	var out []result.Finding
	hit := ce.CacheHit
	switch {
	case hit != nil && m.Read && !m.Write && m.IOPS >= hit.IOPS*atCapFraction && m.IOPS <= hit.IOPS*aboveFraction && pct > aboveFraction:
		// Reads the host cache serves run at the VM's cached limit, not
		// the disk's: that limit is what was measured.
		f.Summary = fmt.Sprintf("%s: %s is %.0f%% of %s's cached limit at %s (%s, %s): the %s host cache serves these reads, and the VM caps cache hits there; uncached, %s allows %s (%s)",
			VerdictVM, rate(m.IOPS, m.BWBytes), m.IOPS/hit.IOPS*100, x.VM.ID, units.IOSize(m.BlockSize), rate(hit.IOPS, hit.BWBytes), hit.Name, x.Cache, name, rate(ce.IOPS, ce.BWBytes), ce.Binds.Name)
		ev["cache_hit_iops"], ev["cache_hit_bw_bytes"] = hit.IOPS, hit.BWBytes
		f.Code = result.CodeVMCap
	case pct > aboveFraction:
		f.Severity = "warn"
		why := "cache or burst credits are inflating this"
		switch {
		case ce.Burst != nil && m.IOPS <= ce.Burst.IOPS*aboveFraction:
			why = fmt.Sprintf("burst credits are inflating this (burst ceiling %s for %s from a full bucket)", rate(ce.Burst.IOPS, ce.Burst.BWBytes), units.Span(ce.Burst.Seconds, "no time limit"))
			ev["burst_iops"] = ce.Burst.IOPS
		case !m.Direct && !m.DirectUnknown:
			why = "the page cache is inflating this (buffered IO)"
		case ce.CacheHit != nil:
			why = fmt.Sprintf("the %s host cache is inflating this (cache ceiling %s)", x.Cache, rate(ce.CacheHit.IOPS, ce.CacheHit.BWBytes))
		}
		f.Summary = fmt.Sprintf("%s: %s is %.0f%% of the %s ceiling at %s (%s, %s); %s; re-run with --until-steady or longer",
			VerdictAbove, rate(m.IOPS, m.BWBytes), pct*100, name, units.IOSize(m.BlockSize), rate(ce.IOPS, ce.BWBytes), ce.Binds.Name, why)
		f.Code = result.CodeAboveCeiling
	case pct >= atCapFraction:
		f.Summary, f.Code = c.atCap(m, x, ce, pct, name, rate)
	case little > 0 && little < ce.IOPS*atCapFraction && m.IOPS >= little*0.7:
		need := int(math.Ceil(ce.IOPS * m.MeanLatNs / 1e9))
		todo := fmt.Sprintf("raise iodepth or parallelism (QD %d or more at this latency, estimated by Little's law)", need)
		if m.SyncLatNs > 0 {
			todo = "a log that syncs each write (etcd's WAL) gets more only from a lower sync latency"
		}
		f.Summary = fmt.Sprintf("%s: %s at QD%d allows at most %s IOPS; the cap is %s (%s, %s); %s",
			VerdictLatency, units.Latency(m.MeanLatNs)+syncShare(m), qd, units.Figure(little), units.Figure(ce.IOPS), ce.Binds.Name, name, todo)
		f.Code = result.CodeLatency
	default:
		f.Severity = "warn"
		f.Summary = fmt.Sprintf("%s: %s is %.0f%% of the %s ceiling at %s (%s, %s), and latency does not explain it (QD%d at %s allows %s IOPS); investigate: a noisy neighbour, throttling elsewhere (VM, network, host), or a cold disk",
			VerdictBelow, rate(m.IOPS, m.BWBytes), pct*100, name, units.IOSize(m.BlockSize), rate(ce.IOPS, ce.BWBytes), ce.Binds.Name, qd, units.Latency(m.MeanLatNs), units.Figure(little))
		f.Code = result.CodeBelowCeiling
	}
	out = append(out, f)
	// The model is of the disk's IO: a buffered write answered by the
	// page cache, or one that waits for a sync, is not one.
	if lc, ok := x.CheckLatency(m.MeanLatNs, m.BlockSize, qd); ok && m.Direct && m.SyncLatNs == 0 {
		out[0].Summary += "; " + lc.Sentence
		ev["model_lat_lo_ns"], ev["model_lat_hi_ns"] = lc.Model.LoNs, lc.Model.HiNs
	}
	// A ReadWrite host cache stalls IO only when writes enter it faster
	// than the disk drains them; reads, and writes that are flushed one
	// by one (an fsync-bound test), build no backlog.
	if m.Write && !m.Syncs {
		if cf, ok := x.HostCacheFillPattern(m.BlockSize, m.WriteBWBytes, !m.Random); ok && cf.Grows {
			out = append(out, cacheRWFinding(m, x, cf))
		}
	}
	return out
}

// syncShare says how much of a latency the syncs are, when they are.
func syncShare(m Measured) string {
	if m.SyncLatNs <= 0 {
		return ""
	}
	return " (each write and its share of the sync; the sync " + units.Latency(m.SyncLatNs) + ")"
}

// syncs reports whether a test flushes its writes.
func syncs(t result.TestSpec) bool {
	if t.Fdatasync > 0 {
		return true
	}
	for _, o := range t.Options {
		switch strings.ToLower(o.Key) {
		case "fsync", "fdatasync", "sync", "write_barrier":
			if v := strings.ToLower(o.Value); v != "0" && v != "none" && v != "false" {
				return true
			}
		}
	}
	return false
}

// cacheRWFinding warns about ReadWrite host caching under writes that
// enter the cache faster than the disk drains them: the backlog fills and
// all IO to the disk stalls while it drains (seed 003: sequential writes
// to a P4 stalled for 2 minutes and more; seed 000 test 1: a sequential
// 4 KiB write test hung for up to 108 s).
func cacheRWFinding(m Measured, x *Expectation, cf CacheFill) result.Finding {
	pattern, seq := "random writes", 0.0
	if !m.Random {
		pattern, seq = "sequential writes", 1
	}
	ev := map[string]float64{"sequential": seq, "fill_bps": cf.FillBPS, "drain_bps": cf.DrainBPS, "backlog_bytes": cf.BacklogBytes,
		"fill_s": cf.FillSeconds, "stall_s": cf.StallSeconds, "disk_write_bw_bytes": x.Disk.Write.BWBytes}
	if cf.CacheGiB > 0 {
		ev["cache_gib"] = cf.CacheGiB
	}
	if math.IsInf(cf.StallSeconds, 0) {
		delete(ev, "stall_s")
	}
	s := fmt.Sprintf("%s: %s at %s: %s; %s; disable it (cachingMode: None) for write-heavy disks",
		VerdictCacheRW, pattern, units.IOSize(m.BlockSize), cf.Sentence(), cf.BacklogNote())
	return result.Finding{Kind: KindCeiling, Code: result.CodeHostCacheRW, Dir: "write", Severity: "warn", Evidence: ev, Summary: s}
}

func (c *Catalog) atCap(m Measured, x *Expectation, ce Ceiling, pct float64, name string, rate func(float64, float64) string) (summary, code string) {
	b := ce.Binds.Name
	head := fmt.Sprintf("%s is %.0f%% of the ceiling at %s (%s, %s)", rate(m.IOPS, m.BWBytes), pct*100, units.IOSize(m.BlockSize), rate(ce.IOPS, ce.BWBytes), name)
	switch {
	case ownLimit(b):
		iops := strings.HasSuffix(b, "IOPS")
		verdict, code := VerdictDiskBW, result.CodeDiskBandwidth
		if iops {
			verdict, code = VerdictDiskIOPS, result.CodeDiskIOPS
		}
		s := verdict + ": " + head
		if ce.Binds.Why != "" {
			s += "; " + ce.Binds.Why
		}
		if nd := c.Bigger(x.Disk, iops); nd != nil {
			s += fmt.Sprintf("; for more, %s gives %s", nd.Spec, rate(nd.Read.IOPS, nd.Read.BWBytes))
			if x.VM != nil {
				y := *x
				y.Disk = nd
				if ny := y.At(m.BlockSize, m.Write && !m.Read); ny.IOPS < math.Min(nd.Read.IOPS, nd.Read.BWBytes/float64(m.BlockSize))*0.999 {
					s += fmt.Sprintf(" (but %s would then bind at %s IOPS)", ny.Binds.Name, units.Figure(ny.IOPS))
				}
			}
		} else {
			s += "; this is the family's largest"
		}
		return s, code
	case b == "volume bandwidth share":
		sh := x.Share
		s := fmt.Sprintf("%s: %s; the volume gets %s of %s Mbps for data volumes (%.0f%% of %s Mbps minus %s for the boot volume) split over %d volume(s)",
			VerdictShare, head, units.Figure(sh.AllocMbps[0]), units.Figure(sh.AvailableMbps), sh.VolumesMbps/sh.InstanceMbps*100, units.Figure(sh.InstanceMbps), units.Figure(sh.BootMbps), len(sh.AllocMbps))
		if len(sh.AllocMbps) > 1 {
			s += "; fewer volumes on this node would raise it"
		}
		if v := c.BetterVM(x, m.BlockSize, m.Write && !m.Read); v != nil {
			s += fmt.Sprintf("; %s (%s Mbps) gives the volume its own limit", v.ID, units.Figure(v.BandwidthMbps))
		}
		return s, result.CodeNodeShare
	default:
		own := x.Disk.Read
		what := "disk"
		if x.Disk.Family.Kind == "file" {
			what = "share"
		}
		iops, bw := own.BWBytes/float64(m.BlockSize), own.BWBytes
		if own.IOPS > 0 && own.IOPS < iops {
			iops, bw = own.IOPS, own.IOPS*float64(m.BlockSize)
		}
		s := fmt.Sprintf("%s: %s; %s binds (the %s alone allows %s)", VerdictVM, head, b, what, rate(iops, bw))
		if v := c.BetterVM(x, m.BlockSize, m.Write && !m.Read); v != nil {
			y := c.withVM(x, v)
			if what == "share" {
				s += fmt.Sprintf("; a VM size whose network carries the share: %s (%s MB/s)", v.ID, units.Figure(y.NetworkBWBytes/1e6))
			} else {
				r, _ := y.VMRate(m.Write && !m.Read)
				s += fmt.Sprintf("; a VM size whose cap is not below the disk's: %s (%s)", v.ID, rate(r.IOPS, r.BWBytes))
			}
		}
		return s, result.CodeVMCap
	}
}

// ownLimit reports whether a limit is the disk's or share's own, not the
// VM's or the node's.
func ownLimit(name string) bool {
	return strings.HasPrefix(name, "disk") || strings.HasPrefix(name, "share")
}
