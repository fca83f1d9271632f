package limits

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// Target is what a sizing asks for: IOPS at an IO size and bytes per
// second at 1 MiB, each for reads and for writes apart (0: not asked), on
// a VM size with a host cache mode, priced at a date.
type Target struct {
	IOPS    float64 `json:"iops,omitempty"`
	BWBytes float64 `json:"bw_bytes,omitempty"`
	// IOSize is the IO size IOPS are judged at (0: DefaultTargetIOSize).
	IOSize int64  `json:"io_size_bytes"`
	VM     string `json:"vm,omitempty"`
	// Cache is the Azure host cache mode ("" for none).
	Cache     string `json:"cache,omitempty"`
	PriceDate string `json:"price_date,omitempty"`
}

// DefaultTargetIOSize is the IO size IOPS targets are judged at: the size
// AWS and IBM define their IOPS figures at.
const DefaultTargetIOSize = 16 << 10

// sizingBWIO is the IO size throughput targets are judged at.
const sizingBWIO = 1 << 20

// Option is one disk that reaches a target.
type Option struct {
	Spec string `json:"spec"`
	Disk *Disk  `json:"disk"`
	// Read and Write are what the disk delivers (on the VM, when one is
	// given) for the target: IOPS at its IO size, bytes/s at 1 MiB.
	Read  Rate `json:"read"`
	Write Rate `json:"write"`
	// Cost is the disk's monthly list price; nil when none is sourced in
	// the era asked for, and PriceGap says why.
	Cost     *Cost  `json:"cost,omitempty"`
	PriceGap string `json:"price_gap,omitempty"`
	// VMBinds says how the given VM falls short of the target sustained
	// (empty when it does not, or no VM was given).
	VMBinds string `json:"vm_binds,omitempty"`
	// VMBurstSeconds is set on an option the VM carries only while its
	// burst credits last: how long a full bucket lasts.
	VMBurstSeconds float64 `json:"vm_burst_seconds,omitempty"`
	// ProposedVM is the smallest VM size of the provider that carries
	// the target with this disk, when the given VM cannot; VMPrice its
	// hourly price when sourced.
	ProposedVM string `json:"proposed_vm,omitempty"`
	VMPrice    *Price `json:"proposed_vm_price,omitempty"`
}

// Sizing is the answer to a target: the options, cheapest first within
// each group (sustained on the VM, on the VM's burst only, on another VM
// size), and the families that cannot be judged.
type Sizing struct {
	Provider string   `json:"provider"`
	Target   Target   `json:"target"`
	Options  []Option `json:"options"`
	// NotJudged are families with no published figure for what the
	// target asks, or none for the VM, with why: never listed as
	// sustained.
	NotJudged []string `json:"not_judged,omitempty"`
}

// Smallest returns, for every current disk family of a provider, the
// smallest tier or size (and provisioned figures) whose ceilings reach
// the target for reads and for writes: IOPS at the target's IO size
// (bounded by the throughput at that size) and throughput at 1 MiB. The
// comparison is exact: 9,999 IOPS do not reach 10,000. With a VM, its
// limits for the cache mode apply; an option the VM carries only while
// its burst credits last is listed apart, and one it cannot carry names
// the smallest VM size that can.
func (c *Catalog) Smallest(provider string, t Target) (*Sizing, error) {
	if _, ok := c.Providers[provider]; !ok {
		return nil, &SpecError{provider, "unknown provider", "providers: " + strings.Join(c.ProviderNames(), ", ")}
	}
	if t.IOSize <= 0 {
		t.IOSize = DefaultTargetIOSize
	}
	var v *VM
	if t.VM != "" {
		if v = c.VM(t.VM); v == nil || v.Provider != provider {
			return nil, &SpecError{t.VM, "unknown VM size for " + provider, "sizes: " + strings.Join(c.VMNames(provider), ", ")}
		}
		t.VM = v.ID
	}
	cache, err := cacheMode(t.Cache)
	if err != nil {
		return nil, err
	}
	t.Cache = cache
	sz := &Sizing{Provider: provider, Target: t}
	var sustained, burst, other []Option
	for _, f := range c.Families {
		if f.Provider != provider {
			continue
		}
		if t.IOPS > 0 && f.Editions[0].IOPS != nil && f.Editions[0].IOPS.unpublished() {
			sz.NotJudged = append(sz.NotJudged, f.ID+" (no published IOPS figure)")
			continue
		}
		d := c.smallestIn(f, t)
		if d == nil {
			continue
		}
		x := &Expectation{Disk: d, Cache: CacheNone}
		o := Option{Spec: d.Spec, Disk: d}
		o.Read, o.Write = delivered(x, t)
		if o.Cost = c.DiskCost(d, t.PriceDate); o.Cost == nil {
			o.PriceGap = c.PriceGap(d, t.PriceDate)
		}
		if v == nil {
			sustained = append(sustained, o)
			continue
		}
		y := c.withVM(&Expectation{Disk: d, Cache: cache}, v)
		y.clampCache()
		if ok, why := f.Attachable(v); !ok {
			// The provider does not let this VM use the family: only
			// another VM size can carry it.
			o.VMBinds = why
			if p := c.VMFor(y, t); p != nil {
				o.ProposedVM = p.ID
				o.VMPrice = c.VMPrice(p, t.PriceDate)
			}
			other = append(other, o)
			continue
		}
		if gap := y.VMGap(); gap != "" {
			sz.NotJudged = append(sz.NotJudged, f.ID+" ("+gap+")")
			continue
		}
		o.Read, o.Write = delivered(y, t)
		if reaches(o.Read, o.Write, t) {
			sustained = append(sustained, o)
			continue
		}
		o.VMBinds = vmShort(y, t)
		if br, bw, secs, ok := burstDelivered(y, t); ok {
			b := o
			b.Read, b.Write, b.VMBurstSeconds = br, bw, secs
			burst = append(burst, b)
		}
		if p := c.VMFor(y, t); p != nil {
			o.ProposedVM = p.ID
			o.VMPrice = c.VMPrice(p, t.PriceDate)
		}
		other = append(other, o)
	}
	for _, g := range [][]Option{sustained, burst, other} {
		sort.SliceStable(g, func(i, j int) bool { return cheaper(g[i], g[j]) })
		sz.Options = append(sz.Options, g...)
	}
	return sz, nil
}

// cheaper ranks priced options first, cheapest first; options with rates
// but no total, and unpriced ones, after.
func cheaper(a, b Option) bool {
	pa, pb := a.Cost != nil && !a.Cost.Price.NoTotal, b.Cost != nil && !b.Cost.Price.NoTotal
	if pa != pb {
		return pa
	}
	return pa && a.Cost.Price.USDPerMonth < b.Cost.Price.USDPerMonth
}

// unpublished reports an IOPS figure a provider does not publish (a
// share judged by throughput alone).
func (q *Quantity) unpublished() bool {
	return !q.Provisioned && q.Value == 0 && q.Base == 0 && q.PerGiB == 0 && q.PerTiB == 0 && q.PerTput == 0 && len(q.Steps) == 0 && len(q.FromIOPS) == 0
}

func cacheMode(s string) (string, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return CacheNone, nil
	case "readonly", "ro":
		return CacheReadOnly, nil
	case "readwrite", "rw":
		return CacheReadWrite, nil
	}
	return "", &SpecError{s, "unknown cache mode", "none, readonly, readwrite"}
}

// clampCache takes the cache mode as none where the disk or VM cannot
// cache, as ParseExpectation does.
func (x *Expectation) clampCache() {
	e := x.Disk.Edition
	if x.Cache != CacheNone && (x.Disk.Family.Provider != "azure" || e.CachingBelowGiB == 0 || x.Disk.SizeGiB >= e.CachingBelowGiB || x.VM != nil && !x.VM.Caching) {
		x.Cache = CacheNone
	}
}

// delivered is what x sustains for the target: IOPS at its IO size and
// bytes/s at 1 MiB, reads and writes.
func delivered(x *Expectation, t Target) (read, write Rate) {
	return Rate{x.At(t.IOSize, false).IOPS, x.At(sizingBWIO, false).BWBytes},
		Rate{x.At(t.IOSize, true).IOPS, x.At(sizingBWIO, true).BWBytes}
}

// burstDelivered is what x delivers while the VM's burst credits last,
// when that reaches the target; the disk's own figures stay sustained.
func burstDelivered(x *Expectation, t Target) (read, write Rate, secs float64, ok bool) {
	_, vb := x.VMRate(false)
	if vb == nil {
		return read, write, 0, false
	}
	at := func(size int64, w bool) Ceiling {
		y := *x
		y.Disk = &Disk{}
		*y.Disk = *x.Disk
		y.Disk.Burst = nil // the disk's own sustained limits
		return y.At(size, w)
	}
	pick := func(ce Ceiling) (float64, float64) {
		if ce.Burst != nil {
			return ce.Burst.IOPS, ce.Burst.BWBytes
		}
		return ce.IOPS, ce.BWBytes
	}
	ri, _ := pick(at(t.IOSize, false))
	_, rb := pick(at(sizingBWIO, false))
	wi, _ := pick(at(t.IOSize, true))
	_, wb := pick(at(sizingBWIO, true))
	read, write = Rate{ri, rb}, Rate{wi, wb}
	return read, write, vb.Seconds, reaches(read, write, t)
}

// reaches compares exactly: a figure below the target falls short.
func reaches(read, write Rate, t Target) bool {
	return read.IOPS >= t.IOPS && write.IOPS >= t.IOPS && read.BWBytes >= t.BWBytes && write.BWBytes >= t.BWBytes
}

// vmShort says how the VM falls short of the target with this disk, or
// "" when it does not; a cap that binds reads and writes alike is said
// once.
func vmShort(x *Expectation, t Target) string {
	var order []string
	dirs := map[string][]string{}
	for _, w := range []bool{false, true} {
		dir := map[bool]string{false: "reads", true: "writes"}[w]
		note := func(s string) {
			if dirs[s] == nil {
				order = append(order, s)
			}
			dirs[s] = append(dirs[s], dir)
		}
		if ce := x.At(t.IOSize, w); t.IOPS > 0 && ce.IOPS < t.IOPS && !ownLimit(ce.Binds.Name) {
			note(fmt.Sprintf("%s IOPS at %s IOPS (%s)", units.IOSize(t.IOSize), units.Published(math.Round(ce.IOPS)), ce.Binds.Name))
		}
		if ce := x.At(sizingBWIO, w); t.BWBytes > 0 && ce.BWBytes < t.BWBytes && !ownLimit(ce.Binds.Name) {
			note(fmt.Sprintf("throughput at %s MB/s (%s)", units.Published(ce.BWBytes/1e6), ce.Binds.Name))
		}
	}
	var why []string
	for _, s := range order {
		why = append(why, fmt.Sprintf("caps %s %s", strings.Join(dirs[s], " and "), s))
	}
	if len(why) == 0 {
		return ""
	}
	return x.VM.ID + " " + strings.Join(why, "; ")
}

// VMFor returns the smallest VM size (fewest vCPUs, then cheapest) of the
// disk's provider that carries the target with this disk sustained, or
// nil.
func (c *Catalog) VMFor(x *Expectation, t Target) *VM {
	var cands []*VM
	for _, v := range c.VMs {
		if v.Provider == x.Disk.Family.Provider {
			cands = append(cands, v)
		}
	}
	hourly := func(v *VM) float64 {
		if p := c.VMPrice(v, t.PriceDate); p != nil {
			return p.USDPerHour
		}
		return math.Inf(1)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].VCPU != cands[j].VCPU {
			return cands[i].VCPU < cands[j].VCPU
		}
		return hourly(cands[i]) < hourly(cands[j])
	})
	for _, v := range cands {
		if ok, _ := x.Disk.Family.Attachable(v); !ok {
			continue
		}
		y := c.withVM(x, v)
		y.clampCache()
		// A VM with no figure for this disk type proves nothing.
		if y.VMGap() != "" {
			continue
		}
		if r, w := delivered(y, t); reaches(r, w, t) {
			return v
		}
	}
	return nil
}

// smallestIn finds the smallest disk of a family (current edition) whose
// own ceilings reach the target for reads and writes, or nil.
func (c *Catalog) smallestIn(f *Family, t Target) *Disk {
	e := f.Editions[0]
	ok := func(d *Disk) bool {
		if d == nil {
			return false
		}
		r, w := delivered(&Expectation{Disk: d, Cache: CacheNone}, t)
		return reaches(r, w, t)
	}
	if len(e.Tiers) > 0 {
		for _, tr := range e.Tiers {
			if d, err := c.ParseDisk(f.ID + ":" + tr.Name); err == nil && ok(d) {
				return d
			}
		}
		return nil
	}
	ub := unitBytes(e.Unit)
	// What the target needs provisioned: throughput for the MB/s target
	// and for the IOPS target at its IO size; IOPS for the IOPS target
	// and for the throughput where throughput follows from IOPS.
	needTput := math.Max(t.BWBytes, t.IOPS*float64(t.IOSize)) / ub
	needIOPS := t.IOPS
	if e.Tput.Provisioned && e.Tput.MaxPerIOPS > 0 {
		needIOPS = math.Max(needIOPS, needTput/e.Tput.MaxPerIOPS)
	}
	if e.IOPS.Provisioned && len(e.Tput.FromIOPS) > 0 {
		needIOPS = math.Max(needIOPS, e.Tput.iopsFor(t.BWBytes/ub, ub))
	}
	if e.IOPS.PerTput > 0 {
		needTput = math.Max(needTput, t.IOPS/e.IOPS.PerTput)
	}
	specAt := func(size float64) string {
		var kv []string
		switch {
		case e.IOPS.Provisioned && needIOPS > 0 && needIOPS > e.IOPS.Default:
			kv = append(kv, "iops="+strconv.FormatFloat(math.Max(math.Ceil(needIOPS), e.IOPS.Min), 'f', -1, 64))
		case e.IOPS.Provisioned && e.IOPS.Default == 0:
			// No default to fall back on: the least this size allows.
			kv = append(kv, "iops=min")
		}
		if e.Tput.Provisioned {
			need := needTput
			if q := e.Tput; q.MinPerTiB > 0 {
				need = math.Max(need, q.MinPerTiB*size/1024)
			}
			switch {
			case need > e.Tput.Default:
				kv = append(kv, "throughput="+strconv.FormatFloat(math.Max(math.Ceil(need), e.Tput.Min), 'f', -1, 64))
			case e.Tput.Default == 0:
				kv = append(kv, "throughput=min")
			}
		}
		s := f.ID + ":" + strconv.FormatFloat(size, 'f', -1, 64) + f.sizeUnit()
		if len(kv) > 0 {
			s += ":" + strings.Join(kv, ",")
		}
		return s
	}
	try := func(size float64) *Disk {
		d, err := c.ParseDisk(specAt(size))
		if err != nil || !ok(d) {
			return nil
		}
		return d
	}
	lo, hi := 1.0, 65536.0
	if e.SizeGiB != nil {
		lo, hi = e.SizeGiB.Min, e.SizeGiB.Max
	}
	if try(hi) == nil {
		return nil
	}
	// Limits grow with size: binary search the smallest whole size.
	i := sort.Search(int(hi-lo)+1, func(i int) bool { return try(lo+float64(i)) != nil })
	return try(lo + float64(i))
}

// iopsFor is the fewest IOPS whose derived throughput reaches tput (in
// the unit of ub), 0 when none does.
func (q *Quantity) iopsFor(tput, ub float64) float64 {
	if tput <= 0 {
		return 0
	}
	for _, st := range q.FromIOPS {
		per := st.PerIOPS
		if st.KiB > 0 {
			per = st.KiB * kib / ub
		}
		if per <= 0 || st.Max > 0 && tput > st.Max {
			continue
		}
		if n := math.Ceil(tput / per); st.ToIOPS == 0 || n <= st.ToIOPS {
			return n
		}
	}
	return 0
}

// Bigger returns the next step up from a disk for the resource that
// binds (IOPS or throughput): the next tier, or the smallest size or
// provisioned figure giving twice the current cap (or the family's most),
// without less of the other resource.
func (c *Catalog) Bigger(d *Disk, iops bool) *Disk {
	f := d.Family
	if d.Tier != nil {
		for _, t := range d.Edition.Tiers {
			if t.SizeGiB > d.Tier.SizeGiB && (iops && t.IOPS > d.Tier.IOPS || !iops && t.Tput > d.Tier.Tput) {
				nd, err := c.ParseDisk(f.ID + ":" + t.Name)
				if err == nil {
					return nd
				}
			}
		}
		return nil
	}
	if !d.Edition.Current() {
		return nil
	}
	// The other resource must not fall below what the disk has now.
	ti, tb := d.Read.IOPS, d.Read.BWBytes
	step := func(k float64) *Disk {
		if iops {
			return c.smallestIn(f, Target{IOPS: ti * k, IOSize: 4 << 10, BWBytes: tb})
		}
		return c.smallestIn(f, Target{IOPS: ti, IOSize: 4 << 10, BWBytes: tb * k})
	}
	if nd := step(2); nd != nil {
		return nd
	}
	// Twice is out of reach: the most the family gives.
	return step(1.01)
}

// BetterVM returns the smallest VM size of the same provider whose
// uncached limits are not below the disk's at this IO size, or nil.
func (c *Catalog) BetterVM(x *Expectation, ioSize int64, write bool) *VM {
	var cands []*VM
	for _, v := range c.VMs {
		if v.Provider == x.Disk.Family.Provider && v != x.VM {
			cands = append(cands, v)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].VCPU < cands[j].VCPU })
	dr := x.Disk.Read
	if write {
		dr = x.Disk.Write
	}
	diskCap := dr.BWBytes / float64(ioSize)
	if dr.IOPS > 0 {
		diskCap = math.Min(dr.IOPS, diskCap)
	}
	cur := x.At(ioSize, write).IOPS
	for _, v := range cands {
		if ok, _ := x.Disk.Family.Attachable(v); !ok {
			continue
		}
		y := c.withVM(x, v)
		if y.VMGap() != "" {
			continue // no figure for this disk on v: nothing says it carries it
		}
		ce := y.At(ioSize, write)
		vmOK := true
		for _, l := range ce.Limits {
			if len(l.Name) >= 2 && (l.Name[:2] == "VM" || l.Name == "volume bandwidth share") && l.IOPS < diskCap*0.999 {
				vmOK = false
			}
		}
		if vmOK && ce.IOPS > cur {
			return v
		}
	}
	return nil
}
