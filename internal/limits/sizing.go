package limits

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Option is one way to reach a target: a disk spec and what it delivers.
type Option struct {
	Spec string `json:"spec"`
	Disk *Disk  `json:"disk"`
	// Cost is the disk's monthly list price; nil when none is sourced.
	Cost *Cost `json:"cost,omitempty"`
	// VMBinds says the VM's cap is below the target (empty when it is
	// not, or no VM was given).
	VMBinds string `json:"vm_binds,omitempty"`
	// ProposedVM is the smallest VM size of the provider that carries the
	// target with this disk, when the given VM binds; VMPrice its hourly
	// price when sourced.
	ProposedVM string `json:"proposed_vm,omitempty"`
	VMPrice    *Price `json:"proposed_vm_price,omitempty"`
}

// Smallest returns, for every current disk family of a provider, the
// smallest tier or size (and provisioned figures) whose sustained limits
// reach targetIOPS and targetBWBytes (bytes/s; 0 = no target), ranked by
// monthly price (priced options first, cheapest first). With a VM,
// options the VM cannot carry are flagged, with the smallest VM size that
// can. priceDate picks prices in force then ("" for the newest).
func (c *Catalog) Smallest(provider string, targetIOPS, targetBWBytes float64, vm, priceDate string) ([]Option, error) {
	if _, ok := c.Providers[provider]; !ok {
		return nil, &SpecError{provider, "unknown provider", "providers: " + fmt.Sprint(c.ProviderNames())}
	}
	var v *VM
	if vm != "" {
		if v = c.VM(vm); v == nil || v.Provider != provider {
			return nil, &SpecError{vm, "unknown VM size for " + provider, "sizes: " + fmt.Sprint(c.VMNames(provider))}
		}
	}
	var out []Option
	for _, f := range c.Families {
		if f.Provider != provider {
			continue
		}
		d := c.smallestIn(f, targetIOPS, targetBWBytes)
		if d == nil {
			continue
		}
		o := Option{Spec: d.Spec, Disk: d, Cost: c.DiskCost(d, priceDate)}
		if v != nil {
			x := c.withVM(&Expectation{Disk: d, Cache: CacheNone}, v)
			if why := vmShort(x, targetIOPS, targetBWBytes); why != "" {
				o.VMBinds = why
				if p := c.VMFor(x, targetIOPS, targetBWBytes, priceDate); p != nil {
					o.ProposedVM = p.ID
					o.VMPrice = c.VMPrice(p, priceDate)
				}
			}
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.VMBinds == "") != (b.VMBinds == "") {
			return a.VMBinds == ""
		}
		if (a.Cost != nil) != (b.Cost != nil) {
			return a.Cost != nil
		}
		return a.Cost != nil && a.Cost.Price.USDPerMonth < b.Cost.Price.USDPerMonth
	})
	return out, nil
}

// Sizing IO sizes: IOPS targets are judged at 16 KiB, throughput at 1 MiB.
const (
	sizingIOPSIO = 16 << 10
	sizingBWIO   = 1 << 20
)

// vmShort says how the VM falls short of the targets with this disk, or
// "" when it does not.
func vmShort(x *Expectation, targetIOPS, targetBW float64) string {
	var why string
	if ce := x.At(sizingIOPSIO, false); targetIOPS > 0 && ce.IOPS < targetIOPS*0.999 && !ownLimit(ce.Binds.Name) {
		why = fmt.Sprintf("%s caps %s IO at %.0f IOPS", x.VM.ID, sizeStr(sizingIOPSIO), ce.IOPS)
	}
	if ce := x.At(sizingBWIO, false); targetBW > 0 && ce.BWBytes < targetBW*0.999 && !ownLimit(ce.Binds.Name) {
		why = joinNote(why, fmt.Sprintf("%s caps throughput at %.0f MB/s (%s)", x.VM.ID, ce.BWBytes/1e6, ce.Binds.Name))
	}
	return why
}

// VMFor returns the smallest VM size (fewest vCPUs, then cheapest) of the
// disk's provider on which the disk reaches the targets, or nil.
func (c *Catalog) VMFor(x *Expectation, targetIOPS, targetBW float64, priceDate string) *VM {
	var cands []*VM
	for _, v := range c.VMs {
		if v.Provider == x.Disk.Family.Provider {
			cands = append(cands, v)
		}
	}
	hourly := func(v *VM) float64 {
		if p := c.VMPrice(v, priceDate); p != nil {
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
		y := c.withVM(x, v)
		if vmShort(y, targetIOPS, targetBW) != "" {
			continue
		}
		// A VM with no figure for this disk type proves nothing.
		if y.Disk.Family.Kind == "file" {
			if y.NetworkBWBytes == 0 {
				continue
			}
		} else if r, _ := y.VMRate(false); r == (Rate{}) && y.Share == nil {
			continue
		}
		return v
	}
	return nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// smallestIn finds the smallest disk of a family (current edition) that
// reaches the targets, or nil.
func (c *Catalog) smallestIn(f *Family, targetIOPS, targetBW float64) *Disk {
	e := f.Editions[0]
	ok := func(d *Disk) bool {
		// A share with no published IOPS figure is judged by throughput.
		return d != nil && (d.Read.IOPS >= targetIOPS*0.9999 || d.Read.IOPS == 0 && f.Kind == "file") && d.Read.BWBytes >= targetBW*0.9999
	}
	if len(e.Tiers) > 0 {
		for _, t := range e.Tiers {
			if d, err := c.ParseDisk(f.Provider + ":" + t.Name); err == nil && d.Family == f && ok(d) {
				return d
			}
		}
		return nil
	}
	ub := unitBytes(e.Unit)
	var kv string
	if e.IOPS.Provisioned && targetIOPS > 0 && targetIOPS > e.IOPS.Default {
		kv = "iops=" + strconv.FormatFloat(math.Ceil(targetIOPS), 'f', -1, 64)
	}
	if e.Tput.Provisioned {
		need := targetBW / ub
		if e.IOPS.PerTput > 0 && targetIOPS/e.IOPS.PerTput > need {
			need = targetIOPS / e.IOPS.PerTput
		}
		if need > e.Tput.Default {
			if kv != "" {
				kv += ","
			}
			kv += "throughput=" + strconv.FormatFloat(math.Ceil(need), 'f', -1, 64)
		}
	}
	try := func(size float64) *Disk {
		s := f.ID + ":" + strconv.FormatFloat(size, 'f', -1, 64)
		if kv != "" {
			s += ":" + kv
		}
		d, err := c.ParseDisk(s)
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

// Bigger returns the next step up from a disk for the resource that
// binds (IOPS or throughput): the next tier, or the smallest size or
// provisioned figure giving twice the current cap (or the family's most),
// without less of the other resource.
func (c *Catalog) Bigger(d *Disk, iops bool) *Disk {
	f := d.Family
	if d.Tier != nil {
		for _, t := range d.Edition.Tiers {
			if t.SizeGiB > d.Tier.SizeGiB && (iops && t.IOPS > d.Tier.IOPS || !iops && t.Tput > d.Tier.Tput) {
				nd, err := c.ParseDisk(f.Provider + ":" + t.Name)
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
			return c.smallestIn(f, ti*k, tb)
		}
		return c.smallestIn(f, ti, tb*k)
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
		y := c.withVM(x, v)
		if y.Disk.Family.Kind == "file" && y.NetworkBWBytes == 0 {
			continue // no network figure: nothing says it carries the share
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
