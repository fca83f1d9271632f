package limits

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/units"
)

// Derived fsync band, for families with no measured one: an fdatasync of
// a small write costs one to two IOs of the typical latency (the data and
// a journal commit), and its p99 is 1.9 to 3.6 times its mean, the range
// of p99 / mean over seed 004's 31 regions.
const (
	fsyncIOsLo, fsyncIOsHi = 1.0, 2.0
	p99OverMeanLo          = 1.9
	p99OverMeanHi          = 3.6
	// EtcdP99LimitNs is etcd's limit on the p99 of WAL fsync.
	EtcdP99LimitNs = 10e6
	// modelIOSize is the IO size the latency bands are for.
	modelIOSize = 4 << 10
)

// LatencyModel is a disk's typical latency: one small IO at queue depth
// 1 takes LoNs to HiNs; small-write fdatasync has a p99 of FsyncP99LoNs to
// FsyncP99HiNs, measured or derived. Assumed marks a band that rests on no
// published or measured figure, Basis says what it rests on.
type LatencyModel struct {
	Family        string   `json:"family"`
	LoNs          float64  `json:"lo_ns"`
	HiNs          float64  `json:"hi_ns"`
	Assumed       bool     `json:"assumed"`
	Basis         string   `json:"basis"`
	Sources       []string `json:"sources,omitempty"`
	FsyncP99LoNs  float64  `json:"fsync_p99_lo_ns"`
	FsyncP99HiNs  float64  `json:"fsync_p99_hi_ns"`
	FsyncMeasured bool     `json:"fsync_measured"`
	FsyncBasis    string   `json:"fsync_basis"`
	// Fitted and FsyncFitted name the seed a band was fitted to.
	Fitted      string `json:"fitted,omitempty"`
	FsyncFitted string `json:"fsync_fitted,omitempty"`
}

// maxSizingSpread is the widest band (high over low) the model sizes a
// queue depth with: beyond it the depth band spans more than four times
// its low end, which sizes nothing (gp3's "single-digit milliseconds",
// 1-9 ms, gives QD 65-577 for 64,000 IOPS).
const maxSizingSpread = 4.0

// TooWide reports a band too wide to size a queue depth with.
func (m LatencyModel) TooWide() bool { return m.Known() && m.HiNs > maxSizingSpread*m.LoNs }

// LatencyModel returns the model of the expectation's disk: its edition's
// figures, else its family's.
func (x *Expectation) LatencyModel() LatencyModel {
	f := x.Disk.Family
	l := f.Latency
	if e := x.Disk.Edition; e != nil && e.Latency != nil {
		l = e.Latency
	}
	m := LatencyModel{Family: f.ID}
	if l == nil {
		return m
	}
	m.LoNs, m.HiNs = l.TypicalMs[0]*1e6, l.TypicalMs[1]*1e6
	m.Assumed, m.Basis, m.Sources = l.Assumed, l.Basis, l.SourceKeys
	m.Fitted, m.FsyncFitted = l.Fitted, l.FsyncFitted
	if len(l.FsyncP99Ms) == 2 {
		m.FsyncP99LoNs, m.FsyncP99HiNs = l.FsyncP99Ms[0]*1e6, l.FsyncP99Ms[1]*1e6
		m.FsyncMeasured, m.FsyncBasis = true, l.FsyncBasis
	} else {
		m.FsyncP99LoNs = m.LoNs * fsyncIOsLo * p99OverMeanLo
		m.FsyncP99HiNs = m.HiNs * fsyncIOsHi * p99OverMeanHi
		m.FsyncBasis = fmt.Sprintf("an fdatasync costs %g to %g IOs of the typical latency, its p99 is %g to %gx its mean (seed 004's 31 regions)",
			fsyncIOsLo, fsyncIOsHi, p99OverMeanLo, p99OverMeanHi)
	}
	return m
}

// Known reports whether the model has figures.
func (m LatencyModel) Known() bool { return m.LoNs > 0 }

// Etcd says whether etcd's WAL fsync p99 limit (10 ms) is likely met:
// "likely passes" when the whole fsync band is under it, "likely fails"
// when it is all over, "uncertain" when the band straddles it.
func (m LatencyModel) Etcd() string {
	switch {
	case !m.Known():
		return "unknown"
	case m.FsyncP99HiNs < EtcdP99LimitNs:
		return "likely passes"
	case m.FsyncP99LoNs >= EtcdP99LimitNs:
		return "likely fails"
	}
	return "uncertain"
}

// LatencyPrediction is what the model predicts at one IO size: the IOPS
// of one IO at a time (QD1, at the middle of the band and at its ends),
// the ceiling, and the queue depth it takes to reach the ceiling.
type LatencyPrediction struct {
	Model       LatencyModel `json:"model"`
	IOSizeBytes int64        `json:"io_size_bytes"`
	Write       bool         `json:"write"`
	QD1IOPS     float64      `json:"qd1_iops"`
	QD1LoIOPS   float64      `json:"qd1_lo_iops"`
	QD1HiIOPS   float64      `json:"qd1_hi_iops"`
	CapIOPS     float64      `json:"cap_iops"`
	DepthLo     int          `json:"depth_lo"`
	DepthHi     int          `json:"depth_hi"`
	Etcd        string       `json:"etcd"`
}

// PredictLatency applies the latency model at an IO size: one IO takes
// the typical latency plus its transfer at the throughput ceiling; QD1
// IOPS are 1 / that, never above the ceiling; by Little's law, reaching
// the ceiling takes a queue depth of ceiling x time per IO.
func (x *Expectation) PredictLatency(ioSize int64, write bool) LatencyPrediction {
	m := x.LatencyModel()
	ce := x.At(ioSize, write)
	p := LatencyPrediction{Model: m, IOSizeBytes: ioSize, Write: write, CapIOPS: ce.IOPS, Etcd: m.Etcd()}
	if !m.Known() {
		return p
	}
	// The band is for small IOs; a larger one also moves its extra bytes
	// at the throughput ceiling (the ceiling at 1 MiB).
	bw := x.At(sizingBWIO, write).BWBytes
	per := func(latNs float64) float64 {
		t := latNs / 1e9
		if extra := float64(ioSize - modelIOSize); extra > 0 && bw > 0 {
			t += extra / bw
		}
		return t
	}
	iops := func(latNs float64) float64 { return math.Min(ce.IOPS, 1/per(latNs)) }
	p.QD1IOPS = iops((m.LoNs + m.HiNs) / 2)
	p.QD1LoIOPS, p.QD1HiIOPS = iops(m.HiNs), iops(m.LoNs)
	p.DepthLo = max(1, int(math.Ceil(ce.IOPS*per(m.LoNs)-1e-9)))
	p.DepthHi = max(1, int(math.Ceil(ce.IOPS*per(m.HiNs)-1e-9)))
	return p
}

// LatencyCheck compares a measured mean latency at QD1 with the model.
type LatencyCheck struct {
	Model LatencyModel `json:"model"`
	// Verdict is "within", "above" or "below" the model's band.
	Verdict  string `json:"verdict"`
	Sentence string `json:"sentence"`
}

// CheckLatency compares a mean latency measured one IO at a time with the
// model's band, for a small IO (up to 64 KiB; larger IOs add their
// transfer time, which the band leaves out).
func (x *Expectation) CheckLatency(meanNs float64, ioSize int64, qd int) (LatencyCheck, bool) {
	m := x.LatencyModel()
	if !m.Known() || qd != 1 || ioSize > 64<<10 || !(meanNs > 0) {
		return LatencyCheck{}, false
	}
	lc := LatencyCheck{Model: m}
	band := units.LatencyBand(m.LoNs, m.HiNs)
	what := "the latency model for " + m.Family + " gives " + band
	if m.Assumed {
		what += " (assumed)"
	}
	switch {
	case meanNs > m.HiNs:
		lc.Verdict = "above"
		lc.Sentence = fmt.Sprintf("%s: measured %s is above it, slower than this family's typical IO (the host, the region or the path to the disk adds time)", what, units.Latency(meanNs))
	case meanNs < m.LoNs:
		lc.Verdict = "below"
		lc.Sentence = fmt.Sprintf("%s: measured %s is below it (a cache answered, or the disk is faster than the model says)", what, units.Latency(meanNs))
	default:
		lc.Verdict = "within"
		lc.Sentence = fmt.Sprintf("%s: measured %s is within it", what, units.Latency(meanNs))
	}
	return lc, true
}

// iopsBand prints a QD1 prediction: "400 IOPS (333-500)".
func (p LatencyPrediction) iopsBand() string {
	r := func(x float64) string { return units.Published(math.Round(x)) }
	if r(p.QD1LoIOPS) == r(p.QD1HiIOPS) {
		return r(p.QD1IOPS) + " IOPS"
	}
	return fmt.Sprintf("about %s IOPS (%s-%s)", r(p.QD1IOPS), r(p.QD1LoIOPS), r(p.QD1HiIOPS))
}

// depthStr prints the depth band: "QD 3-4", "QD 1".
func (p LatencyPrediction) depthStr() string {
	if p.DepthLo == p.DepthHi {
		return fmt.Sprintf("QD %d", p.DepthLo)
	}
	return fmt.Sprintf("QD %d-%d", p.DepthLo, p.DepthHi)
}

// Lines renders the prediction for the limits report.
func (p LatencyPrediction) Lines() []string {
	m := p.Model
	if !m.Known() {
		return []string{"no latency figure for " + m.Family}
	}
	kind := "sourced"
	switch {
	case m.Assumed:
		kind = "ASSUMED"
	case m.Fitted != "":
		kind = "fitted to " + m.Fitted + ", so no prediction of it"
	}
	out := []string{fmt.Sprintf("typical %s per small IO at QD1 (%s: %s)", units.LatencyBand(m.LoNs, m.HiNs), kind, m.Basis)}
	if m.TooWide() {
		out = append(out, fmt.Sprintf("QD1 at %s: %s; the band is too wide to size a queue depth for the %s IOPS ceiling with (it would say %s): measure one IO at a time (iolens diagnose) and take the depth as ceiling x that latency",
			units.IOSize(p.IOSizeBytes), p.iopsBand(), units.Published(math.Round(p.CapIOPS)), p.depthStr()))
	} else {
		out = append(out, fmt.Sprintf("QD1 at %s: %s; the %s IOPS ceiling needs %s or more", units.IOSize(p.IOSizeBytes), p.iopsBand(), units.Published(math.Round(p.CapIOPS)), p.depthStr()))
	}
	fk := "derived"
	switch {
	case m.FsyncFitted != "":
		fk = "measured, fitted to " + m.FsyncFitted
	case m.FsyncMeasured:
		fk = "measured"
	}
	out = append(out, fmt.Sprintf("small-write fdatasync p99 %s (%s: %s): etcd (p99 under 10 ms) %s", units.LatencyBand(m.FsyncP99LoNs, m.FsyncP99HiNs), fk, m.FsyncBasis, p.Etcd))
	return out
}

// BufferedNote says what buffered writes of ioSize do to the disk's
// figures: the page cache merges sequential writes before they reach
// the disk, so the disk sees larger IOs and the IOPS at ioSize understate
// what it moves. The merged size offered is where the disk's throughput
// cap takes over from its IOPS cap (cap / IOPS, at most its IO-counting
// unit): seed 003's buffered dd bs=100k on a P4 moved about 25 MiB/s,
// which at 120 IOPS is IOs of 213 KiB or more, the P4's throughput cap,
// not the 12.3 MB/s that 120 x 100 KiB gives. "" when the disk has no
// IOPS cap to merge past or ioSize is already there.
func (x *Expectation) BufferedNote(ioSize int64) string {
	w := x.Disk.Write
	if w.IOPS <= 0 || w.BWBytes <= 0 {
		return ""
	}
	merged := w.BWBytes / w.IOPS
	if u := x.Disk.Edition.IOUnitKiB * kib; u > 0 && merged > u {
		merged = u
	}
	if float64(ioSize) >= merged {
		return ""
	}
	at := x.At(ioSize, true)
	offer := int64(math.Ceil(merged/kib)) * 1024
	big := x.At(offer, true)
	return fmt.Sprintf("buffered writes reach the disk merged into larger IOs, so %s IOs are not what it sees: at %s IOPS its %s MB/s cap binds from IOs of %s on; try --io-size %dk (%s MB/s there, against %s MB/s at %s). Seed 003's buffered dd bs=100k on a P4 moved about 25 MiB/s, the cap, not 120 x 100 KiB",
		units.IOSize(ioSize), units.Published(math.Round(w.IOPS)), units.Figure(w.BWBytes/1e6), units.IOSize(offer), offer>>10,
		units.Figure(big.BWBytes/1e6), units.Figure(at.BWBytes/1e6), units.IOSize(ioSize))
}
