package limits

import (
	"fmt"
	"math"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// Cache modes of Azure host caching.
const (
	CacheNone      = "none"
	CacheReadOnly  = "readonly"
	CacheReadWrite = "readwrite"
)

// Expectation is what a disk on a VM, next to other volumes, should
// deliver.
type Expectation struct {
	Disk *Disk `json:"disk"`
	// VM is nil when no VM size was given (only the disk's own limits).
	VM *VM `json:"vm,omitempty"`
	// Attached are the other data volumes on the same VM.
	Attached []*Disk `json:"attached,omitempty"`
	// Cache is the host cache mode (Azure): none, readonly, readwrite.
	Cache string `json:"cache"`
	// Share is the IBM volume-bandwidth allocation; nil elsewhere.
	Share *Share `json:"share,omitempty"`
	// NetworkBWBytes is the VM's network bandwidth in bytes/s, the cap
	// on a file share mounted over NFS or SMB; 0 when not a share or no
	// figure is known.
	NetworkBWBytes float64 `json:"network_bw_bytes,omitempty"`
	// Concurrent is how many volumes (this one included) run IO on the VM
	// at the same time and share its caps evenly; 0 or 1 for this one
	// alone.
	Concurrent int `json:"concurrent,omitempty"`
	// Notes are caveats about the expectation as a whole.
	Notes []string `json:"notes,omitempty"`
}

// SetConcurrent says n volumes (this one included) run IO on the VM at
// the same time: each gets 1/n of the VM's caps. IBM's split of volume
// bandwidth counts the attached volumes instead (give them as Attached).
func (x *Expectation) SetConcurrent(n int) {
	if n <= 1 {
		x.Concurrent = 0
		return
	}
	x.Concurrent = n
	if x.VM != nil && x.Disk.Family.Kind != "file" {
		x.Notes = append(x.Notes, fmt.Sprintf("%d volumes run at once on %s: each gets 1/%d of its caps", n, x.VM.ID, n))
	}
}

// vmShare is the fraction of the VM's caps this volume gets.
func (x *Expectation) vmShare() float64 {
	if x.Concurrent > 1 {
		return 1 / float64(x.Concurrent)
	}
	return 1
}

// Share is how an IBM VSI's volume bandwidth is split (in Mbps, 10^6
// bits per second): a share of the instance bandwidth for volumes, minus
// the boot volume's, prorated across data volumes by their own limits.
type Share struct {
	InstanceMbps  float64   `json:"instance_mbps"`
	VolumesMbps   float64   `json:"volumes_mbps"`
	BootMbps      float64   `json:"boot_mbps"`
	AvailableMbps float64   `json:"available_mbps"`
	LimitsMbps    []float64 `json:"limits_mbps"`
	AllocMbps     []float64 `json:"alloc_mbps"`
}

// Allocate splits the bandwidth available to data volumes in proportion
// to each volume's throughput limit, never above it: if the limits fit,
// every volume gets its limit.
func Allocate(availableMbps float64, limitsMbps []float64) []float64 {
	var sum float64
	for _, l := range limitsMbps {
		sum += l
	}
	out := make([]float64, len(limitsMbps))
	for i, l := range limitsMbps {
		if sum <= availableMbps || sum == 0 {
			out[i] = l
		} else {
			out[i] = availableMbps * l / sum
		}
	}
	return out
}

// ParseExpectation resolves a disk spec, an optional VM size, the other
// data volumes attached to the VM and the host cache mode ("" for none).
func (c *Catalog) ParseExpectation(disk, vm string, attached []string, cache string) (*Expectation, error) {
	d, err := c.ParseDisk(disk)
	if err != nil {
		return nil, err
	}
	x := &Expectation{Disk: d, Cache: CacheNone}
	prov := d.Family.Provider
	if vm != "" {
		v := c.VM(vm)
		if v == nil && !strings.Contains(vm, ":") {
			v = c.VM(prov + ":" + vm)
		}
		if v == nil {
			return nil, &SpecError{vm, "unknown VM size", "sizes: " + strings.Join(c.VMNames(prov), ", ")}
		}
		if v.Provider != prov {
			return nil, &SpecError{vm, fmt.Sprintf("a %s VM size cannot carry a %s disk", v.Provider, prov), "sizes: " + strings.Join(c.VMNames(prov), ", ")}
		}
		x.VM = v
		x.noteVMDate()
		if ok, why := d.Family.Attachable(v); !ok {
			x.Notes = append(x.Notes, why)
		}
	}
	for _, a := range attached {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		ad, err := c.ParseDisk(a)
		if err != nil {
			return nil, err
		}
		if ad.Family.Provider != prov {
			return nil, &SpecError{a, "attached volumes must be from the same provider as the disk", ""}
		}
		x.Attached = append(x.Attached, ad)
	}
	switch strings.ToLower(cache) {
	case "", "none":
	case "readonly", "ro":
		x.Cache = CacheReadOnly
	case "readwrite", "rw":
		x.Cache = CacheReadWrite
	default:
		return nil, &SpecError{cache, "unknown cache mode", "none, readonly, readwrite"}
	}
	if d.Family.Kind == "file" {
		x.fileShare(c)
		return x, nil
	}
	if x.Cache != CacheNone {
		e := d.Edition
		switch {
		case prov != "azure":
			x.Notes = append(x.Notes, "host cache modes are Azure's; ignored for "+prov)
			x.Cache = CacheNone
		case e.CachingBelowGiB == 0 || d.SizeGiB >= e.CachingBelowGiB:
			x.Notes = append(x.Notes, "this disk cannot use host caching (none on disks of 4 TiB and more, Premium SSD v2 and Ultra); taken as none")
			x.Cache = CacheNone
		case x.VM != nil && !x.VM.Caching:
			x.Notes = append(x.Notes, x.VM.ID+" does not support host caching; taken as none")
			x.Cache = CacheNone
		case x.VM == nil:
			x.Notes = append(x.Notes, "give --vm to know the cached limits")
		}
	}
	x.computeShare(c)
	if gap := x.VMGap(); gap != "" {
		x.Notes = append(x.Notes, "not judged on the VM: "+gap+": only the disk's own limits are shown")
	}
	return x, nil
}

// noteVMDate says what a dated disk spec changes on the VM: a VM
// documented later than the date, a burst that did not exist then.
func (x *Expectation) noteVMDate() {
	v, date := x.VM, x.Disk.Date
	if v == nil || date == "" {
		return
	}
	if v.From != "" && date < v.From {
		x.Notes = append(x.Notes, fmt.Sprintf("%s is first documented in the catalog's sources in %s: its limits at %s are those of then on", v.ID, v.From, date))
	}
	if v.Burst != nil && v.BurstAt(date) == nil {
		x.Notes = append(x.Notes, fmt.Sprintf("%s's VM-level burst is first documented %s: none at %s", v.ID, v.Burst.From, date))
	}
}

// computeShare works out IBM's split of the VSI's volume bandwidth.
func (x *Expectation) computeShare(c *Catalog) {
	if x.VM == nil || x.VM.BandwidthMbps <= 0 {
		return
	}
	p := c.Providers[x.VM.Provider]
	s := &Share{InstanceMbps: x.VM.BandwidthMbps, VolumesMbps: x.VM.BandwidthMbps * p.VolumeShare, BootMbps: p.BootVolumeMbps}
	s.AvailableMbps = s.VolumesMbps - s.BootMbps
	for _, v := range append([]*Disk{x.Disk}, x.Attached...) {
		s.LimitsMbps = append(s.LimitsMbps, v.Read.BWBytes*8/1e6)
	}
	s.AllocMbps = Allocate(s.AvailableMbps, s.LimitsMbps)
	x.Share = s
	x.noteCappedSplit()
}

// withVM is the same disk, volumes and cache mode on another VM size.
func (c *Catalog) withVM(x *Expectation, v *VM) *Expectation {
	y := *x
	y.VM, y.Share, y.NetworkBWBytes, y.Notes = v, nil, 0, nil
	y.noteVMDate()
	if y.Disk.Family.Kind == "file" {
		y.fileShare(c)
	} else {
		if y.Cache != CacheNone && (v == nil || !v.Caching) {
			y.Cache = CacheNone
		}
		y.computeShare(c)
	}
	return &y
}

// fileShare sets what binds a share: the VM's network, not its disk
// limits, host cache or IBM's volume bandwidth split.
func (x *Expectation) fileShare(c *Catalog) {
	if x.Cache != CacheNone {
		x.Notes = append(x.Notes, "host caching is for disks; a file share has none: taken as none")
		x.Cache = CacheNone
	}
	if len(x.Attached) > 0 {
		x.Notes = append(x.Notes, "--attached volumes do not share a file share's bandwidth (it uses the network); ignored")
		x.Attached = nil
	}
	v := x.VM
	switch {
	case v == nil:
	case v.BandwidthMbps > 0:
		p := c.Providers[v.Provider]
		x.NetworkBWBytes = v.BandwidthMbps * (1 - p.VolumeShare) * 1e6 / 8
		x.Notes = append(x.Notes, fmt.Sprintf("file share traffic uses the instance's network allocation: %s Mbps x %.0f%% = %s Mbps", units.Figure(v.BandwidthMbps), (1-p.VolumeShare)*100, units.Figure(v.BandwidthMbps*(1-p.VolumeShare))))
	default:
		if mbps, _ := v.NetworkAt(x.Disk.Date); mbps > 0 {
			x.NetworkBWBytes = mbps * 1e6 / 8
		} else {
			why := "no network bandwidth in the catalog"
			if v.NetworkNote != "" {
				why = v.NetworkNote
			}
			x.Notes = append(x.Notes, v.ID+": "+why+": only the share's own limits are shown")
		}
	}
}

// noteCappedSplit explains IBM's split when a volume's own limit is capped
// by its profile's maximum: the split is weighted by the capped limit, so
// it differs from a split by size (seed 002's 1:2 for 300 GB + 600 GB).
func (x *Expectation) noteCappedSplit() {
	s := x.Share
	if len(s.LimitsMbps) < 2 {
		return
	}
	vols := append([]*Disk{x.Disk}, x.Attached...)
	var raw []float64
	capped := false
	for _, v := range vols {
		u := v.UncappedBWBytes
		if u < v.Read.BWBytes {
			u = v.Read.BWBytes
		}
		capped = capped || u > v.Read.BWBytes*1.0001
		raw = append(raw, u*8/1e6)
	}
	if !capped {
		return
	}
	alt := Allocate(s.AvailableMbps, raw)
	var got, would []string
	for i := range alt {
		got = append(got, units.Figure(s.AllocMbps[i]))
		would = append(would, units.Figure(alt[i]))
	}
	x.Notes = append(x.Notes, fmt.Sprintf("IBM weights the split by each volume's maximum bandwidth, which its profile caps: %s Mbps here; weighting by the uncapped IOPS x multiplier (by size within a tier) would give %s Mbps. Seed 002 (2023) split 300 GB + 600 GB 10iops-tier volumes 1:2 that way (2,536/5,071); the cap (1,024 MB/s) and the weighting rule were already in the IBM documents in force then (profiles 2023-09-18, bandwidth 2023-02-08), so the rules did not change: the seed's arithmetic left out the cap",
		strings.Join(got, "/"), strings.Join(would, "/")))
}

// Limit is one component's cap at an IO size.
type Limit struct {
	// Name is the component: "disk IOPS", "disk throughput", "VM IOPS",
	// "VM throughput", "VM cached IOPS", "volume bandwidth share"...
	Name    string  `json:"name"`
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	// Why explains figures that are not plain catalog values.
	Why string `json:"why,omitempty"`
}

// Ceiling is the expected ceiling at one IO size and direction.
type Ceiling struct {
	IOSizeBytes int64 `json:"io_size_bytes"`
	Write       bool  `json:"write"`
	// IOPS and BWBytes are the sustained ceiling; Binds is the component
	// that sets it.
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	Binds   Limit   `json:"binds"`
	// Burst is the ceiling while burst credits last (disk and VM); nil
	// when neither bursts.
	Burst *BurstCeiling `json:"burst,omitempty"`
	// CacheHit is the ceiling for IO served by the host cache (reads with
	// ReadOnly/ReadWrite, writes with ReadWrite until the cache fills).
	CacheHit *Limit `json:"cache_hit,omitempty"`
	// Limits are all components at this size.
	Limits []Limit `json:"limits"`
}

// BurstCeiling is the ceiling while credits last.
type BurstCeiling struct {
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	Binds   Limit   `json:"binds"`
	// Seconds is how long the shortest bucket involved lasts from full.
	Seconds float64 `json:"seconds"`
}

// VMRate returns the VM's sustained (uncached) limits for this disk's
// traffic, and its burst; zero Rate when there is no VM or no figure.
func (x *Expectation) VMRate(write bool) (Rate, *BurstInfo) {
	v := x.VM
	if v == nil {
		return Rate{}, nil
	}
	ub := unitBytes(v.Unit)
	k := x.vmShare()
	if v.Uncached != nil {
		p := v.Uncached.forDir(write)
		r := Rate{p.IOPS * k, p.Tput * ub * k}
		var b *BurstInfo
		if vb := v.BurstAt(x.Disk.Date); vb != nil {
			b = burstFromTier(vb, r, ub)
			b.IOPS *= k
			b.BWBytes *= k
		}
		return r, b
	}
	if p, ok := v.PerType[x.Disk.Edition.VMType]; ok && x.Disk.Edition.VMType != "" {
		q := p.forDir(write)
		return Rate{q.IOPS * k, q.Tput * ub * k}, nil
	}
	return Rate{}, nil
}

// ShareBWBytes is the volume bandwidth allocated to the disk (bytes/s);
// 0 when no split applies.
func (x *Expectation) ShareBWBytes() float64 {
	if x.Share == nil {
		return 0
	}
	return x.Share.AllocMbps[0] * 1e6 / 8
}

// At returns the ceiling at an IO size for reads or writes.
func (x *Expectation) At(ioSize int64, write bool) Ceiling {
	s := float64(ioSize)
	d := x.Disk
	dr := d.Read
	if write {
		dr = d.Write
	}
	c := Ceiling{IOSizeBytes: ioSize, Write: write}
	add := func(ls *[]Limit, name string, iops, bw float64, why string) {
		if iops <= 0 && bw <= 0 {
			return
		}
		l := Limit{Name: name, Why: why}
		if iops > 0 {
			l.IOPS, l.BWBytes = iops, iops*s
		}
		if bw > 0 && (l.IOPS == 0 || bw/s < l.IOPS) {
			l.IOPS, l.BWBytes = bw/s, bw
		}
		*ls = append(*ls, l)
	}
	counts := 1.0
	unit := d.Edition.IOUnitKiB * kib
	if unit > 0 && s > unit {
		counts = math.Ceil(s / unit)
	}
	diskLimits := func(ls *[]Limit, r Rate, label string) {
		if counts > 1 {
			add(ls, label+" IOPS", r.IOPS/counts, 0, fmt.Sprintf("%s IOPS cap %.0f; a %s IO counts as %.0f IOs of %s", label, r.IOPS, units.IOSize(ioSize), counts, units.IOSize(int64(unit))))
		} else {
			add(ls, label+" IOPS", r.IOPS, 0, "")
		}
		add(ls, label+" throughput", 0, r.BWBytes, "")
	}
	if d.Family.Kind == "file" {
		diskLimits(&c.Limits, dr, "share")
		add(&c.Limits, "VM network", 0, x.NetworkBWBytes, "")
		c.Binds = minLimit(c.Limits)
		c.IOPS, c.BWBytes = c.Binds.IOPS, c.Binds.BWBytes
		return c
	}
	diskLimits(&c.Limits, dr, "disk")
	vr, vb := x.VMRate(write)
	add(&c.Limits, "VM IOPS", vr.IOPS, 0, "")
	add(&c.Limits, "VM throughput", 0, vr.BWBytes, "")
	var cached *Pair
	if x.Cache != CacheNone && x.VM != nil && x.VM.Cached != nil {
		cached = x.VM.Cached
		ub := unitBytes(x.VM.Unit)
		k := x.vmShare()
		// Misses and writes count against the cached limits too.
		add(&c.Limits, "VM cached IOPS", cached.IOPS*k, 0, "")
		add(&c.Limits, "VM cached throughput", 0, cached.Tput*ub*k, "")
		if !write || x.Cache == CacheReadWrite {
			h := Limit{Name: "VM cached IOPS", IOPS: cached.IOPS * k, BWBytes: cached.IOPS * k * s}
			if bw := cached.Tput * ub * k; bw/s < h.IOPS {
				h.Name, h.IOPS, h.BWBytes = "VM cached throughput", bw/s, bw
			}
			c.CacheHit = &h
		}
	}
	if sh := x.ShareBWBytes(); sh > 0 {
		add(&c.Limits, "volume bandwidth share", 0, sh, fmt.Sprintf("%.0f of %.0f Mbps for data volumes (%.0f%% of %.0f Mbps minus %.0f for the boot volume), split over %d volume(s) by their limits",
			x.Share.AllocMbps[0], x.Share.AvailableMbps, x.Share.VolumesMbps/x.Share.InstanceMbps*100, x.Share.InstanceMbps, x.Share.BootMbps, len(x.Share.AllocMbps)))
	}
	c.Binds = minLimit(c.Limits)
	c.IOPS, c.BWBytes = c.Binds.IOPS, c.Binds.BWBytes

	// While credits last: the disk's and the VM's burst rates.
	db := d.Burst
	if db != nil && db.OptIn {
		db = nil
	}
	if db != nil || vb != nil {
		var ls []Limit
		var secs float64
		if db != nil {
			br := Rate{math.Max(db.IOPS, dr.IOPS), math.Max(db.BWBytes, dr.BWBytes)}
			diskLimits(&ls, br, "disk burst")
			secs = db.Seconds
		} else {
			diskLimits(&ls, dr, "disk")
		}
		if vb != nil {
			add(&ls, "VM burst IOPS", math.Max(vb.IOPS, vr.IOPS), 0, "")
			add(&ls, "VM burst throughput", 0, math.Max(vb.BWBytes, vr.BWBytes), "")
			if secs == 0 || vb.Seconds > 0 && vb.Seconds < secs {
				secs = vb.Seconds
			}
		} else {
			add(&ls, "VM IOPS", vr.IOPS, 0, "")
			add(&ls, "VM throughput", 0, vr.BWBytes, "")
		}
		for _, l := range c.Limits {
			if strings.HasPrefix(l.Name, "VM cached") || l.Name == "volume bandwidth share" {
				ls = append(ls, l)
			}
		}
		b := minLimit(ls)
		if b.IOPS > c.IOPS*1.0001 {
			c.Burst = &BurstCeiling{IOPS: b.IOPS, BWBytes: b.BWBytes, Binds: b, Seconds: secs}
		}
	}
	return c
}

func minLimit(ls []Limit) Limit {
	var m Limit
	for i, l := range ls {
		if i == 0 || l.IOPS < m.IOPS*0.9999 {
			m = l
		}
	}
	return m
}

// DefaultIOSizes are the sizes iolens limits shows.
var DefaultIOSizes = []int64{4 << 10, 16 << 10, 256 << 10, 1 << 20}
