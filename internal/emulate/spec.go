package emulate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"
)

// Limits are block throttle caps for one emulated disk: IOs per second
// and bytes per second, each direction apart (the kernel throttle has no
// combined read+write cap). 0 means no cap.
type Limits struct {
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
	ReadBPS   float64 `json:"read_bps"`
	WriteBPS  float64 `json:"write_bps"`
}

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
// for how much written data the cache holds before it stalls; 3 GiB makes a
// P4 (25 MB/s) behind that cache write fast for about 30 s and then stall
// for about 2 minutes, as seed 003 reports.
const (
	DefaultCacheIOPS  = 16000
	DefaultCacheBPS   = 128e6
	DefaultCacheBytes = 3 << 30
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
	// distribution. Nil: no layer, the host's own latency.
	Latency *Latency `json:"latency,omitempty"`
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
	return s
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
	for _, v := range []float64{l.ReadIOPS, l.WriteIOPS, l.ReadBPS, l.WriteBPS, s.BurstIOPS, s.BurstBPS, s.BurstSeconds,
		s.BucketIOs, s.BucketBytes, s.CacheIOPS, s.CacheBPS, s.CacheBytes, s.Scale} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e18 {
			return specErr("limits, rates and sizes must be finite, 0 or more and at most 1e18")
		}
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
	if s.SizeBytes > 1<<50 {
		return specErr("size %d bytes: at most 1 PiB", s.SizeBytes)
	}
	return nil
}
