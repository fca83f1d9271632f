package result

import "strings"

// Finding kinds: what part of the analysis a finding comes from.
const (
	KindSteady    = "steady"
	KindStall     = "stall"
	KindCliff     = "cliff"
	KindWriteback = "writeback"
	KindPageCache = "page-cache"
	KindQD        = "qd-sweep"
	KindEtcd      = "etcd"
	KindUnstable  = "unstable"
	// KindCeiling compares a result with a known disk's published limits.
	KindCeiling = "ceiling"
	// KindLimit names the limit that binds a result's direction, from the
	// measurements alone.
	KindLimit = "limit"
	// KindModel is the disk model of one direction and IO shape fitted
	// over a run's tests (its code is the limit that binds the curve's
	// best rate), on the result that last changed it.
	KindModel = "model"
)

// Finding kinds of a live watch (and of a history read back through it);
// their codes are the same words.
const (
	// KindSaturation: the device busy with a queue, sustained.
	KindSaturation = "saturation"
	// KindCap: the rate held at the expected disk's ceiling, sustained.
	KindCap = "cap"
	// KindBurst: an expected disk's burst credit draining.
	KindBurst = "burst"
	// KindDevice: a device appeared or went away.
	KindDevice = "device"
	// KindExpect: the disk a device is expected to be, and where that
	// came from.
	KindExpect = "expect"
	// KindDiscovery: looking for devices or their expected disks failed.
	KindDiscovery = "discovery"
)

// States of a disk model's curve (a KindModel finding's "state"
// evidence holds StateNumber).
const (
	// StateLatency: latency stays at the base up to the deepest depth
	// measured: a deeper queue gives more.
	StateLatency = "latency-bound"
	// StateApproaching: latency has started to grow and each doubling
	// gives less, but the rate still rises: the ceiling is above.
	StateApproaching = "approaching"
	// StatePlateau: a deeper queue gave no more; latency grows with it.
	StatePlateau = "plateau"
	// StateOneDepth: one depth only; the plateau's kind is read from
	// that test alone.
	StateOneDepth = "one-depth"
)

// StateNumber is a curve state as a number (0 one depth, 1
// latency-bound, 2 approaching, 3 plateau); StateName reads it back.
func StateNumber(state string) int {
	switch state {
	case StateLatency:
		return 1
	case StateApproaching:
		return 2
	case StatePlateau:
		return 3
	}
	return 0
}

// StateName is the state StateNumber gave n.
func StateName(n float64) string {
	switch n {
	case 1:
		return StateLatency
	case 2:
		return StateApproaching
	case 3:
		return StatePlateau
	}
	return StateOneDepth
}

// Finding codes: a stable, machine-readable name for what a finding says,
// beside its numbers. Scripts and alerts match on these, never on the
// summary text.
const (
	CodeSteady    = "steady"     // steady state reached
	CodeNotSteady = "not-steady" // never steady
	CodeNotJudged = "not-judged" // too short a series to judge

	CodeStall         = "stall"
	CodeCliff         = "cliff"
	CodeWritebackTail = "writeback-tail"
	CodePageCache     = "page-cache"
	CodeUnstable      = "unstable"

	// QD sweep regimes.
	CodeSweepLatency  = "sweep-latency-bound"
	CodeSweepIOPS     = "sweep-iops-capped"
	CodeSweepBW       = "sweep-bandwidth-capped"
	CodeSweepCapped   = "sweep-capped"
	CodeSweepCPU      = "sweep-cpu-bound"
	CodeSweepDevice   = "sweep-device-saturated"
	CodeSweepNoKnee   = "sweep-no-knee"
	CodeEtcdPass      = "etcd-pass"
	CodeEtcdWarn      = "etcd-warn"
	CodeEtcdFail      = "etcd-fail"
	CodeEtcdUnknown   = "etcd-no-percentiles"
	CodeDiskIOPS      = "disk-iops"      // at the disk's IOPS cap
	CodeDiskBandwidth = "disk-bandwidth" // at the disk's bandwidth cap
	CodeVMCap         = "vm-cap"         // the VM's cap binds
	CodeNodeShare     = "node-share"     // the node's bandwidth share binds (IBM)
	CodeAboveCeiling  = "above-ceiling"  // more than the disk should give: cache or burst
	CodeBelowCeiling  = "below-ceiling"  // well below, and latency does not explain it
	CodeHostCacheRW   = "host-cache-rw"  // ReadWrite host cache under writes

	// Limit codes: what binds a direction of a result.
	CodeIOPSCap      = "iops-cap"      // a flat IOPS ceiling
	CodeBandwidthCap = "bandwidth-cap" // a flat MB/s ceiling
	CodeLatency      = "latency"       // IOPS = QD / latency, below any cap seen
	CodeDevice       = "device"        // the device itself is saturated
	CodeCPU          = "cpu"           // fio or the host CPU binds
	CodeUnknown      = "unknown"
)

// Finding codes of etcd's own metrics (iolens etcd, watch --etcd). The
// WAL fsync (Dir "sync") and the backend commit (Dir "commit") are judged
// with CodeEtcdPass, CodeEtcdWarn and CodeEtcdFail as the fio etcd test
// is, and with these.
const (
	CodeEtcdUndecided = "etcd-undecided"     // the p99's histogram bucket straddles the limit
	CodeEtcdIdle      = "etcd-idle"          // no fsyncs or commits to judge
	CodeEtcdRestart   = "etcd-restarted"     // the member restarted between two scrapes
	CodeEtcdScrape    = "etcd-scrape-failed" // the member's /metrics could not be read
)

// upgradeV1 brings a v1 record to the current schema: findings gain the
// code v1 expressed in their kind, evidence or wording.
func upgradeV1(r *Result) {
	r.Schema = Schema
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Code != "" {
			continue
		}
		f.Code = v1Code(f)
		delete(f.Evidence, "verdict")
	}
}

func v1Code(f *Finding) string {
	switch f.Kind {
	case KindSteady:
		switch {
		case strings.HasPrefix(f.Summary, "steady from"):
			return CodeSteady
		case strings.HasPrefix(f.Summary, "never steady"):
			return CodeNotSteady
		}
		return CodeNotJudged
	case KindWriteback:
		return CodeWritebackTail
	case KindQD:
		s := f.Summary
		switch {
		case strings.Contains(s, "latency-bound"):
			return CodeSweepLatency
		case strings.Contains(s, "IOPS-capped"):
			return CodeSweepIOPS
		case strings.Contains(s, "bandwidth-capped"):
			return CodeSweepBW
		case strings.Contains(s, ": capped"):
			return CodeSweepCapped
		}
		return CodeSweepNoKnee
	case KindEtcd:
		switch f.Severity {
		case "fail":
			return CodeEtcdFail
		case "warn":
			if strings.Contains(f.Summary, "no ") && strings.Contains(f.Summary, "percentiles") {
				return CodeEtcdUnknown
			}
			return CodeEtcdWarn
		}
		return CodeEtcdPass
	case KindCeiling:
		// v1 kept the verdict as a number in the evidence.
		switch f.Evidence["verdict"] {
		case 1:
			return CodeDiskIOPS
		case 2:
			return CodeDiskBandwidth
		case 3:
			return CodeVMCap
		case 4:
			return CodeNodeShare
		case 5:
			return CodeLatency
		case 6:
			return CodeAboveCeiling
		case 7:
			return CodeBelowCeiling
		case 8:
			return CodeHostCacheRW
		}
		return CodeUnknown
	}
	return f.Kind // stall, cliff, page-cache, unstable: kind and code agree
}

// NoteNotEstablished prefixes a result note that says what a plan (iolens
// diagnose) could not establish, so that the run's report says so too.
const NoteNotEstablished = "not established: "

// NoteKernel prefixes a result note that quotes the kernel's own record
// of an IO error in a test (its log, a SCSI device's error count), taken
// when the test failed with one.
const NoteKernel = "kernel: "

// NoteInterrupted is the note on the last result of a run that was stopped
// before it ended (Ctrl-C, SIGTERM): its figures are partial.
const NoteInterrupted = "interrupted: the run was stopped before it ended; its figures are partial"

// Groups of a plan's tests that probe something other than a ceiling:
// their figures are not the disk's ceilings (a layout is short and
// size-based; a burst check's mean mixes the burst and the baseline).
const (
	GroupLayout     = "layout"
	GroupBurstCheck = "burst-check"
)

// ioErrnos are how fio and the runner spell the errors a medium returns:
// EIO, and ENODATA (a SCSI medium error reaches some file systems as it).
var ioErrnos = [...]string{"error 5 (", "input/output error", "(eio)", "error 61 (", "(enodata)", "no data available"}

// IOFailed says whether r failed with an IO error from the disk, as its
// error or fio's messages name it.
func (r *Result) IOFailed() bool {
	if r.Status == "ok" {
		return false
	}
	s := strings.ToLower(r.Error + "\n" + r.FioStderr)
	for _, e := range ioErrnos {
		if strings.Contains(s, e) {
			return true
		}
	}
	return false
}
