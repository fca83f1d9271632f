package emulate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/iolens/iolens/internal/limits"
)

// Limits are throttle caps for one emulated disk: IOs per second and
// bytes per second, each direction apart, and for reads and writes
// together (as a cloud disk's caps are; only the throttle inside the
// device has those: the kernel's has no combined cap). 0 means no cap.
type Limits struct {
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
	ReadBPS   float64 `json:"read_bps"`
	WriteBPS  float64 `json:"write_bps"`
	TotalIOPS float64 `json:"total_iops,omitempty"`
	TotalBPS  float64 `json:"total_bps,omitempty"`
}

// ThrottleAt is where an emulated disk's caps are enforced.
type ThrottleAt string

const (
	// ThrottleCgroup: the kernel's block throttle in the disk's cgroup,
	// above the device. IO waits before it reaches the device, whose
	// queue stays short.
	ThrottleCgroup ThrottleAt = "cgroup"
	// ThrottleDevice: a token bucket inside the device (the latency
	// layer), as a hypervisor or a storage backend enforces a cloud
	// disk's caps. IO waits in the device, whose queue fills: await grows
	// with the queue depth while the rate stays flat. Caps are static
	// here (no bursting, no host cache).
	ThrottleDevice ThrottleAt = "device"
)

// MaxChannels bounds Spec.Channels: the kernel lets the latency layer
// have at most that many requests in flight anyway.
const MaxChannels = fuseMaxBackground

// CacheMode is the host cache in front of the emulated disk.
type CacheMode string

const (
	// CacheNone: every IO counts against the disk's limits.
	CacheNone CacheMode = "none"
	// CacheReadOnly: reads run at the cache's limits as if every read hit
	// the cache; writes run at the disk's limits.
	CacheReadOnly CacheMode = "readonly"
	// CacheReadWrite: IO runs at the cache's limits while writes fill a
	// cache of CacheBytes that drains to the disk at the disk's rate; once
	// it is full, IO gets almost nothing until it has drained.
	CacheReadWrite CacheMode = "readwrite"
)

// CgroupMode picks the cgroup interface used for throttling.
type CgroupMode string

const (
	CgroupAuto CgroupMode = ""   // v2 io.max if the io controller is on v2, else v1 blkio
	CgroupV1   CgroupMode = "v1" // blkio.throttle.*
	CgroupV2   CgroupMode = "v2" // io.max
)

// Defaults for a readwrite cache. The rates are the cached limits of an
// Azure Standard_D8s_v3 (16,000 IOPS, 128 MB/s). Azure publishes no figure
// for how much written data the cache holds before it stalls (the VM's
// 200 GiB cache is the whole VM's, reads and writes): the size is the
// backlog the limits catalog assumes, limits.AssumedWriteBackBytes (3 GiB),
// which makes a P4 (25 MB/s) behind that cache write fast for about 30 s
// and then stall for about 2 minutes, as seed 003 reports.
const (
	DefaultCacheIOPS  = 16000
	DefaultCacheBPS   = 128e6
	DefaultCacheBytes = limits.AssumedWriteBackBytes
	// StallIOPS is the per-direction cap while a full write cache drains.
	StallIOPS = 1
	// DefaultSizeBytes is the sparse backing file's size.
	DefaultSizeBytes = 4 << 30
	// DefaultTick is the controller's period.
	DefaultTick = 100 * time.Millisecond
)

// Spec describes an emulated disk.
type Spec struct {
	Name string `json:"name"`
	// Dir is the state root; the disk lives in Dir/Name (default DefaultDir()).
	Dir string `json:"dir"`
	// SizeBytes is the sparse backing file's size (default 4 GiB).
	SizeBytes int64 `json:"size_bytes"`
	// FS is "ext4" (default) or "xfs".
	FS string `json:"fs"`
	// Limits are the disk's provisioned (baseline) caps.
	Limits Limits `json:"limits"`

	// Credit bursting: BurstIOPS / BurstBPS are the burst rates (0: that
	// resource does not burst). Bursting needs the same cap for reads and
	// writes: a cloud disk's credits cover both. Each resource has a bucket
	// of credits (IOs, bytes) that drains by (usage - baseline) and refills
	// by (baseline - usage). Its size is BucketIOs / BucketBytes, or if
	// those are 0, BurstSeconds of running at the burst rate.
	BurstIOPS    float64 `json:"burst_iops"`
	BurstBPS     float64 `json:"burst_bps"`
	BurstSeconds float64 `json:"burst_seconds"`
	BucketIOs    float64 `json:"bucket_ios"`
	BucketBytes  float64 `json:"bucket_bytes"`
	StartEmpty   bool    `json:"start_empty"`

	// Cache is the host cache mode (default none). CacheIOPS / CacheBPS
	// are its rates, CacheBytes how much written data it holds.
	Cache      CacheMode `json:"cache"`
	CacheIOPS  float64   `json:"cache_iops"`
	CacheBPS   float64   `json:"cache_bps"`
	CacheBytes float64   `json:"cache_bytes"`

	// Scale speeds up the time-varying behaviours: bucket and cache sizes
	// are divided by Scale, so a 1800 s burst lasts 1800/Scale s. Rates are
	// not scaled. 0 means 1.
	Scale float64 `json:"scale"`
	// Profile names the cloud profile the spec came from, if any.
	Profile string `json:"profile,omitempty"`

	Cgroup CgroupMode `json:"cgroup,omitempty"`
	// RAM puts the backing file in a tmpfs of its own (NAME/ram): the
	// host's disk plays no part in the emulated disk's speed, not even
	// through the host file system's journal, at the cost of memory for
	// what is written (up to SizeBytes). The tests use it.
	RAM bool `json:"ram,omitempty"`
	// Latency, if set, puts the latency layer under the loop device: each
	// read, write and flush takes at least the time drawn from its
	// distribution. Nil: no layer, the host's own latency (and, with
	// RAM, a disk that runs at memory speed: the CPU binds).
	Latency *Latency `json:"latency,omitempty"`
	// Channels, if above 0, is how many IOs the device serves at once
	// (its internal parallelism, in the latency layer): an IO that finds
	// every channel busy waits for one, then holds it for its drawn read
	// or write latency. Past QD = Channels the IOPS stay at about
	// Channels / mean latency while the latency grows in proportion to
	// the queue depth; the rate varies as the drawn latencies do. Needs
	// a read or write latency. 0: no limit (up to 256 in flight).
	Channels int `json:"channels,omitempty"`
	// Faults, if set, make the disk fail IO as a failing disk does (in the
	// latency layer, which they put in): its file system is ext4 without
	// a journal, mounted with errors=continue, so that it outlives them.
	Faults *Faults `json:"faults,omitempty"`
	// Cold, if set, makes each block slow on its first read, as on a
	// volume restored from a snapshot (in the latency layer).
	Cold *Cold `json:"cold,omitempty"`
	// QueueGrowth, if above 0, makes the device slower the more IOs it
	// holds: each read or write is served for its drawn latency times
	// (1 + QueueGrowth x the IOs already in the device), as a server
	// that contends with itself does. With no channel limit the rate
	// rises ever more slowly towards 1 / (QueueGrowth x mean latency)
	// while the latency grows with the queue. Needs a read or write
	// latency.
	QueueGrowth float64 `json:"queue_growth,omitempty"`
	// ServerCPU, if above 0, is the CPU time the latency layer spends on
	// each read and write before it waits out its latency, as a local
	// daemon that does work per IO (a FUSE file system, a user-space
	// target). Past what the host's CPUs serve, the daemon's CPU binds.
	ServerCPU time.Duration `json:"server_cpu_ns,omitempty"`
	// ThrottleAt is where Limits are enforced (default ThrottleCgroup).
	// ThrottleDevice puts the latency layer in (at zero latency if
	// Latency is nil).
	ThrottleAt ThrottleAt `json:"throttle_at,omitempty"`
	// Executable, if set, is the iolens binary that runs the disk's
	// daemons detached ("iolens emulate controller NAME", and "iolens
	// emulate latency NAME" for the latency layer), so the disk outlives
	// the process that made it. If empty, Create runs them in this
	// process until Destroy.
	Executable string `json:"-"`
	// Tick is the controller's period (default 100 ms).
	Tick time.Duration `json:"tick_ns"`

	// hook, if set, is called before each create step; tests use it to
	// fail or cancel a create part way.
	hook func(step string) error
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,39}$`)

// Dynamic reports whether the spec has time-varying behaviour.
func (s Spec) Dynamic() bool {
	return s.BurstIOPS > 0 || s.BurstBPS > 0 || s.Cache == CacheReadWrite
}

func (s Spec) scale() float64 {
	if s.Scale <= 0 {
		return 1
	}
	return s.Scale
}

// withDefaults fills the zero values.
func (s Spec) withDefaults() Spec {
	if s.Dir == "" {
		s.Dir = DefaultDir()
	}
	if s.SizeBytes == 0 {
		s.SizeBytes = DefaultSizeBytes
	}
	if s.FS == "" {
		s.FS = "ext4"
	}
	if s.Cache == "" {
		s.Cache = CacheNone
	}
	if s.Cache != CacheNone {
		if s.CacheIOPS == 0 {
			s.CacheIOPS = DefaultCacheIOPS
		}
		if s.CacheBPS == 0 {
			s.CacheBPS = DefaultCacheBPS
		}
	}
	if s.Cache == CacheReadWrite && s.CacheBytes == 0 {
		s.CacheBytes = DefaultCacheBytes
	}
	if s.Tick == 0 {
		s.Tick = DefaultTick
	}
	if s.ThrottleAt == "" {
		s.ThrottleAt = ThrottleCgroup
	}
	if (s.ThrottleAt == ThrottleDevice || s.Faults != nil || s.Cold != nil) && s.Latency == nil {
		s.Latency = &Latency{}
	}
	return s
}

// cgroupLimits are the caps for the kernel throttle when the model wants
// l: none when the device throttles.
func (s Spec) cgroupLimits(l Limits) Limits {
	if s.ThrottleAt == ThrottleDevice {
		return Limits{}
	}
	return l
}

// ErrSpec is wrapped by every validation error.
var ErrSpec = errors.New("invalid emulated disk")

func specErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, args...))
}

// Validate checks a spec after defaults.
func (s Spec) Validate() error {
	if !nameRE.MatchString(s.Name) {
		return specErr("name %q: use 1-40 of a-z 0-9 . _ -, starting with a letter or digit", s.Name)
	}
	if s.FS != "ext4" && s.FS != "xfs" {
		return specErr("file system %q: ext4 or xfs", s.FS)
	}
	if s.SizeBytes < 64<<20 {
		return specErr("size %d bytes: at least 64 MiB", s.SizeBytes)
	}
	l := s.Limits
	for _, v := range []float64{l.ReadIOPS, l.WriteIOPS, l.ReadBPS, l.WriteBPS, l.TotalIOPS, l.TotalBPS, s.BurstIOPS, s.BurstBPS, s.BurstSeconds,
		s.BucketIOs, s.BucketBytes, s.CacheIOPS, s.CacheBPS, s.CacheBytes, s.Scale} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e18 {
			return specErr("limits, rates and sizes must be finite, 0 or more and at most 1e18")
		}
	}
	switch s.ThrottleAt {
	case ThrottleCgroup:
		if l.TotalIOPS > 0 || l.TotalBPS > 0 {
			return specErr("a cap on reads and writes together needs the throttle inside the device (--throttle-at device): the kernel's caps each direction apart")
		}
	case ThrottleDevice:
		if s.Dynamic() {
			return specErr("the throttle inside the device takes static caps: bursting and host caches move the cgroup throttle (--throttle-at cgroup), or drop them (--burst-iops 0 --burst-bw 0 --cache none)")
		}
	default:
		return specErr("throttle at %q: cgroup or device", s.ThrottleAt)
	}
	if s.BurstIOPS > 0 {
		if l.ReadIOPS != l.WriteIOPS || l.ReadIOPS == 0 {
			return specErr("IOPS bursting needs one baseline IOPS cap for reads and writes (--iops)")
		}
		if s.BurstIOPS <= l.ReadIOPS {
			return specErr("burst IOPS %.0f must be above the baseline %.0f", s.BurstIOPS, l.ReadIOPS)
		}
		if s.BucketIOs == 0 && s.BurstSeconds == 0 {
			return specErr("IOPS bursting needs a bucket size (burst seconds or credits)")
		}
	}
	if s.BurstBPS > 0 {
		if l.ReadBPS != l.WriteBPS || l.ReadBPS == 0 {
			return specErr("bandwidth bursting needs one baseline bandwidth cap for reads and writes (--bw)")
		}
		if s.BurstBPS <= l.ReadBPS {
			return specErr("burst bandwidth must be above the baseline")
		}
		if s.BucketBytes == 0 && s.BurstSeconds == 0 {
			return specErr("bandwidth bursting needs a bucket size (burst seconds or credits)")
		}
	}
	switch s.Cache {
	case CacheNone, CacheReadOnly:
	case CacheReadWrite:
		if l.WriteBPS == 0 && l.WriteIOPS == 0 {
			return specErr("a readwrite cache drains at the disk's write rate: set a write cap")
		}
		if s.CacheBytes <= 0 {
			return specErr("a readwrite cache needs a size")
		}
	default:
		return specErr("cache %q: none, readonly or readwrite", s.Cache)
	}
	switch s.Cgroup {
	case CgroupAuto, CgroupV1, CgroupV2:
	default:
		return specErr("cgroup %q: v1 or v2", s.Cgroup)
	}
	if s.Tick < 10*time.Millisecond || s.Tick > 10*time.Second {
		return specErr("controller tick %v: between 10ms and 10s", s.Tick)
	}
	if s.Latency != nil {
		for _, d := range []struct {
			what string
			d    Dist
		}{{"read", s.Latency.Read}, {"write", s.Latency.Write}, {"flush", s.Latency.Flush}} {
			if err := d.d.Validate(); err != nil {
				return specErr("%s latency: %v", d.what, err)
			}
		}
	}
	if s.Faults != nil {
		if s.FS != "ext4" {
			return specErr("faults need ext4 (without a journal it outlives them)")
		}
		if err := s.Faults.validate(s.SizeBytes); err != nil {
			return err
		}
	}
	if s.Cold != nil {
		if err := s.Cold.validate(s.SizeBytes); err != nil {
			return err
		}
	}
	if s.SizeBytes > 1<<50 {
		return specErr("size %d bytes: at most 1 PiB", s.SizeBytes)
	}
	if s.Channels < 0 || s.Channels > MaxChannels {
		return specErr("channels %d: 0 (no limit) to %d", s.Channels, MaxChannels)
	}
	if math.IsNaN(s.QueueGrowth) || s.QueueGrowth < 0 || s.QueueGrowth > 100 {
		return specErr("queue growth %g: 0 (none) to 100", s.QueueGrowth)
	}
	if s.QueueGrowth > 0 && (s.Latency == nil || s.Latency.Read.Zero() && s.Latency.Write.Zero()) {
		return specErr("a queue growth needs a read or write latency: it is what grows (--latency)")
	}
	if s.ServerCPU < 0 || s.ServerCPU > 100*time.Millisecond {
		return specErr("server CPU %v per IO: 0 (none) to 100ms", s.ServerCPU)
	}
	if s.ServerCPU > 0 && s.Latency == nil {
		return specErr("server CPU per IO is spent in the latency layer: give a latency (--latency 0 adds the layer alone)")
	}
	if s.Channels > 0 && (s.Latency == nil || s.Latency.Read.Zero() && s.Latency.Write.Zero()) {
		return specErr("channels need a read or write latency: it is how long an IO holds its channel (--latency)")
	}
	return nil
}
