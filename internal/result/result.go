package result

import (
	"encoding/json"
	"iter"
	"time"
)

// Result is one run of one test: the record every other part of iolens
// reads back. It is written as one NDJSON line. Measured values never use
// omitempty: zero is a measurement.
type Result struct {
	Schema string `json:"schema"`
	// RunID groups the results of one invocation of iolens.
	RunID string `json:"run_id"`
	Suite string `json:"suite"`
	// Index is the test's 1-based position in the suite; Repeat is the
	// 1-based repetition of that test.
	Index  int      `json:"index"`
	Repeat int      `json:"repeat"`
	Test   TestSpec `json:"test"`
	Target Target   `json:"target"`
	Host   Host     `json:"host"`

	Start time.Time `json:"start"`
	End   time.Time `json:"end"`

	// Status is "ok" or "failed"; Error says why a test failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`

	Read  *DirResult `json:"read,omitempty"`
	Write *DirResult `json:"write,omitempty"`
	// Trim holds discards (fio's rw=trim, randtrim, trimwrite).
	Trim *DirResult `json:"trim,omitempty"`
	// Mixed is fio's unified_rw_reporting: every direction counted as
	// one. With "mixed" it is the only direction; with "both" it comes
	// beside read and write, whose IOs it counts again.
	Mixed *DirResult `json:"mixed,omitempty"`
	// Sync holds fsync/fdatasync latencies, when the test issues them.
	Sync *DirResult `json:"sync,omitempty"`

	// Fio is what fio reported beside the figures (CPU, the jobs and
	// hosts summed, its own steady-state and latency-target verdicts),
	// taken from its output when the result was made, so that nothing
	// reads fio's JSON again. Nil for results fio did not produce.
	Fio *FioInfo `json:"fio,omitempty"`

	// SampleIntervalS is the period of FioSeries, Devices and System in
	// seconds (1 when absent, as in v1 records).
	SampleIntervalS float64 `json:"sample_interval_s,omitempty"`
	// FioSeries is fio's own view over each interval (windowed
	// bw/iops/lat logs).
	FioSeries []FioSample `json:"fio_series"`
	// Devices is the 1 s view from /proc/diskstats of every block device
	// behind the target, plus host-wide iowait and dirty memory.
	Devices []DeviceSeries `json:"devices"`
	// Host-wide memory and CPU series sampled alongside the devices.
	System []SystemSample `json:"system"`
	// Client is a network file system client's own view of the target
	// (NFS mountstats), when the target is on one: there is no block
	// device to sample there.
	Client []ClientSample `json:"client,omitempty"`
	// Tail is what the devices did after fio exited (writeback).
	Tail []DeviceSeries `json:"tail,omitempty"`

	// Findings are conclusions drawn from this result by the analysis.
	Findings []Finding `json:"findings,omitempty"`

	// Notes are caveats about how the result was obtained (buffered IO,
	// tmpfs target, preconditioning...).
	Notes []string `json:"notes,omitempty"`

	FioVersion string   `json:"fio_version"`
	FioArgs    []string `json:"fio_args"`
	FioJob     string   `json:"fio_job"`
	FioStderr  string   `json:"fio_stderr,omitempty"`
	// FioJSON is fio's document as it wrote it. Results converted from
	// one fio output share it: the first carries it, and the others'
	// FioJSONIn names that result's Index.
	FioJSON   json.RawMessage `json:"fio_json,omitempty"`
	FioJSONIn int             `json:"fio_json_in,omitempty"`
}

// DirNames lists the directions a result can have, in the order every
// report shows them.
var DirNames = [...]string{"read", "write", "trim", "mixed", "sync"}

// Dirs yields the directions a result has, in the order of DirNames,
// with their names.
func (r *Result) Dirs() iter.Seq2[string, *DirResult] {
	return func(yield func(string, *DirResult) bool) {
		for _, name := range DirNames {
			if d := r.Dir(name); d != nil && !yield(name, d) {
				return
			}
		}
	}
}

// Dir returns the named direction, nil when the result has none.
func (r *Result) Dir(name string) *DirResult {
	switch name {
	case "read":
		return r.Read
	case "write":
		return r.Write
	case "trim":
		return r.Trim
	case "mixed":
		return r.Mixed
	case "sync":
		return r.Sync
	}
	return nil
}

// SetDir sets the named direction (one of DirNames).
func (r *Result) SetDir(name string, d *DirResult) {
	switch name {
	case "read":
		r.Read = d
	case "write":
		r.Write = d
	case "trim":
		r.Trim = d
	case "mixed":
		r.Mixed = d
	case "sync":
		r.Sync = d
	}
}

// Interval is the period of the result's series in seconds.
func (r *Result) Interval() float64 {
	if r.SampleIntervalS > 0 && r.SampleIntervalS <= 60 {
		return r.SampleIntervalS
	}
	return 1
}

// RuntimeS is how long fio measured, in seconds: the longest of the
// read, write, trim and mixed runtimes.
func (r *Result) RuntimeS() float64 {
	var ms int64
	for _, d := range []*DirResult{r.Read, r.Write, r.Trim, r.Mixed} {
		if d != nil {
			ms = max(ms, d.RuntimeMs)
		}
	}
	return float64(ms) / 1000
}

// Target describes what was measured.
type Target struct {
	// Kind is "dir", "device", "file" (re-reported fio output) or "pvc".
	Kind string `json:"kind"`
	Path string `json:"path"`
	// Device is the primary block device name (for example "vda"),
	// empty when none backs the target (tmpfs).
	Device       string   `json:"device"`
	Devices      []string `json:"devices"`
	Filesystem   string   `json:"filesystem"`
	MountOptions string   `json:"mount_options"`
	SizeBytes    int64    `json:"size_bytes"`
	// SizeReason explains how the test file size was chosen.
	SizeReason     string `json:"size_reason,omitempty"`
	Preconditioned bool   `json:"preconditioned"`
	// RootDisk is set when a directory target is on the root file system
	// while other disks (OtherDisks, "vdb at /mnt/data") are mounted: a
	// mistyped path or a volume that is not mounted looks like this.
	RootDisk   bool              `json:"root_disk,omitempty"`
	OtherDisks []string          `json:"other_disks,omitempty"`
	Emulated   string            `json:"emulated,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
}

// AddLabels sets labels on the target, over any of the same keys.
func (t *Target) AddLabels(labels map[string]string) {
	if len(labels) > 0 && t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for k, v := range labels {
		t.Labels[k] = v
	}
}

// Host describes the machine that ran fio.
type Host struct {
	Hostname      string `json:"hostname"`
	Kernel        string `json:"kernel"`
	CPUs          int    `json:"cpus"`
	MemTotalBytes uint64 `json:"mem_total_bytes"`
	FioVersion    string `json:"fio_version"`
	IolensVersion string `json:"iolens_version"`
}

// DirResult is one direction (read, write or sync) of a result.
type DirResult struct {
	IOPS      float64 `json:"iops"`
	BWBytes   float64 `json:"bw_bytes"` // bytes per second
	IOBytes   int64   `json:"io_bytes"`
	TotalIOs  int64   `json:"total_ios"`
	RuntimeMs int64   `json:"runtime_ms"`
	Lat       Latency `json:"lat"`
	// LatKind says which fio latency the figures come from: "lat" (submit
	// to completion, end to end), "clat" or "sync".
	LatKind string `json:"lat_kind"`
	// TotalLatMeanNs is fio's mean total latency (submission to
	// completion), whichever LatKind the figures have: Little's law
	// needs it, and fio has it even when its percentiles are of clat.
	TotalLatMeanNs float64 `json:"total_lat_mean_ns"`
	// Hist is fio's json+ histogram: bucket midpoint in ns -> count.
	Hist Histogram `json:"hist"`
}

// Latency summarises a latency distribution, in nanoseconds. Percentiles
// come from the histogram, never from averaging.
type Latency struct {
	N      uint64  `json:"n"`
	MinNs  float64 `json:"min_ns"`
	MeanNs float64 `json:"mean_ns"`
	MaxNs  float64 `json:"max_ns"`
	P50Ns  float64 `json:"p50_ns"`
	P90Ns  float64 `json:"p90_ns"`
	P99Ns  float64 `json:"p99_ns"`
	P999Ns float64 `json:"p99_9_ns"`
	// P9999Ns is the 99.99th percentile.
	P9999Ns float64 `json:"p99_99_ns"`
}

// ClipNs is a percentile v held at or below the largest latency
// measured, maxNs (0: unknown, v unchanged). Percentiles are read off a
// histogram's bucket midpoints, which can lie above the exact max by up
// to half a bucket's width (fio's buckets are 1/64 of their value wide);
// no percentile is ever above the max.
func ClipNs(v, maxNs float64) float64 {
	if maxNs > 0 && v > maxNs {
		return maxNs
	}
	return v
}

// ClipToMax holds every percentile at or below MaxNs, and says whether
// any moved.
func (l *Latency) ClipToMax() bool {
	moved := false
	for _, p := range []*float64{&l.P50Ns, &l.P90Ns, &l.P99Ns, &l.P999Ns, &l.P9999Ns} {
		if c := ClipNs(*p, l.MaxNs); c != *p {
			*p, moved = c, true
		}
	}
	return moved
}

// Clipped says whether the histogram puts a percentile this latency
// summary reports (up to p99.99) above its max: the reports say that
// the figure was held at the max.
func (d *DirResult) Clipped() bool {
	return d.Lat.MaxNs > 0 && d.Hist.Count() > 0 && d.Hist.Percentile(99.99) > d.Lat.MaxNs
}

// FioSample is one 1 s window of fio's logs. T is seconds since the end of
// the ramp (fio's log epoch).
type FioSample struct {
	T              float64 `json:"t_s"`
	ReadIOPS       float64 `json:"read_iops"`
	WriteIOPS      float64 `json:"write_iops"`
	ReadBWBytes    float64 `json:"read_bw_bytes"`
	WriteBWBytes   float64 `json:"write_bw_bytes"`
	ReadLatMeanNs  float64 `json:"read_lat_mean_ns"`
	WriteLatMeanNs float64 `json:"write_lat_mean_ns"`
}

// DeviceSeries is the 1 s sample series of one block device.
type DeviceSeries struct {
	Device string `json:"device"`
	// Role says how the device relates to the target: "direct",
	// "parent" (disk of a partition), "backing" (behind a loop device) or
	// "slave" (member of a dm/md device).
	Role    string         `json:"role"`
	Samples []DeviceSample `json:"samples"`
}

// DeviceSample holds iostat-style rates over one interval. T is seconds
// since the start of the fio measurement (after the ramp), so that it
// lines up with FioSample.T; samples taken during the ramp are negative.
type DeviceSample struct {
	T             float64 `json:"t_s"`
	ReadIOPS      float64 `json:"r_s"`
	WriteIOPS     float64 `json:"w_s"`
	ReadBWBytes   float64 `json:"r_bytes_s"`
	WriteBWBytes  float64 `json:"w_bytes_s"`
	ReadAwaitMs   float64 `json:"r_await_ms"`
	WriteAwaitMs  float64 `json:"w_await_ms"`
	QueueSize     float64 `json:"aqu_sz"`
	ReadReqBytes  float64 `json:"rareq_bytes"`
	WriteReqBytes float64 `json:"wareq_bytes"`
	UtilPct       float64 `json:"util_pct"`
	InFlight      uint64  `json:"in_flight"`
}

// ClientSample is what an NFS client saw over one interval (its
// mountstats): operations, bytes, and the round trip and execution time
// per READ and WRITE, with retransmissions.
type ClientSample struct {
	T              float64 `json:"t_s"`
	ReadOpsPerSec  float64 `json:"read_ops_s"`
	WriteOpsPerSec float64 `json:"write_ops_s"`
	ReadBWBytes    float64 `json:"read_bytes_s"`
	WriteBWBytes   float64 `json:"write_bytes_s"`
	// RTT is the network round trip; Exec the whole time an operation
	// took, queueing in the client included.
	ReadRTTMs   float64 `json:"read_rtt_ms"`
	WriteRTTMs  float64 `json:"write_rtt_ms"`
	ReadExecMs  float64 `json:"read_exec_ms"`
	WriteExecMs float64 `json:"write_exec_ms"`
	Retrans     uint64  `json:"retrans"`
	Timeouts    uint64  `json:"timeouts"`
	BacklogAvg  float64 `json:"backlog_avg"`
}

// SystemSample is host-wide state over one interval.
type SystemSample struct {
	T         float64 `json:"t_s"`
	IowaitPct float64 `json:"iowait_pct"` // of all CPU time
	// CPUBusyPct is the share of all CPU time spent working or stolen.
	CPUBusyPct     float64 `json:"cpu_busy_pct"`
	DirtyBytes     uint64  `json:"dirty_bytes"`
	WritebackBytes uint64  `json:"writeback_bytes"`
	// OtherUtilPct is the busy time of the disks not watched, summed (a
	// percent of the interval per disk): the part of the host's iowait
	// and IO pressure they can explain.
	OtherUtilPct float64 `json:"other_util_pct"`
}

// Finding is one conclusion about a result, with its evidence.
type Finding struct {
	// Kind says which analysis drew it (KindStall, KindLimit...), Code
	// what it says, as a stable name (CodeIOPSCap, CodeEtcdFail...).
	Kind     string `json:"kind"`
	Code     string `json:"code"`
	Severity string `json:"severity"` // info, warn, fail
	// Dir is the direction the finding concerns ("read", "write",
	// "sync"), empty when it concerns the whole result.
	Dir     string `json:"dir,omitempty"`
	Summary string `json:"summary"`
	// Detail is what only someone reading fio's own output needs (its
	// quirks, raw counters); reports show it in their verbose form.
	Detail string `json:"detail,omitempty"`
	// StartS and DurationS locate the finding on the result's time axis,
	// when it has one.
	StartS    *float64           `json:"start_s,omitempty"`
	DurationS *float64           `json:"duration_s,omitempty"`
	Evidence  map[string]float64 `json:"evidence,omitempty"`
}
