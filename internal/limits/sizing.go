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
	// VMBinds says the VM's cap is below the target (empty when it is
	// not, or no VM was given).
	VMBinds string `json:"vm_binds,omitempty"`
}

// Smallest returns, for every current disk family of a provider, the
// smallest tier or size (and provisioned figures) whose sustained limits
// reach targetIOPS and targetBWBytes (bytes/s; 0 = no target). With a VM,
// options the VM cannot carry are flagged.
func (c *Catalog) Smallest(provider string, targetIOPS, targetBWBytes float64, vm string) ([]Option, error) {
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
		o := Option{Spec: d.Spec, Disk: d}
		if v != nil {
			x := &Expectation{Disk: d, VM: v, Cache: CacheNone}
			if v.BandwidthMbps > 0 {
				p := c.Providers[provider]
				avail := v.BandwidthMbps*p.VolumeShare - p.BootVolumeMbps
				x.Share = &Share{InstanceMbps: v.BandwidthMbps, VolumesMbps: v.BandwidthMbps * p.VolumeShare, BootMbps: p.BootVolumeMbps, AvailableMbps: avail,
					LimitsMbps: []float64{d.Read.BWBytes * 8 / 1e6}, AllocMbps: Allocate(avail, []float64{d.Read.BWBytes * 8 / 1e6})}
			}
			ioSize := int64(16 << 10)
			if ce := x.At(ioSize, false); targetIOPS > 0 && ce.IOPS < targetIOPS*0.999 && ce.Binds.Name[:4] != "disk" {
				o.VMBinds = fmt.Sprintf("%s caps %s IO at %.0f IOPS", v.ID, sizeStr(ioSize), ce.IOPS)
			}
			if ce := x.At(1<<20, false); targetBWBytes > 0 && ce.BWBytes < targetBWBytes*0.999 && ce.Binds.Name[:4] != "disk" {
				o.VMBinds = joinNote(o.VMBinds, fmt.Sprintf("%s caps throughput at %.0f MB/s", v.ID, ce.BWBytes/1e6))
			}
		}
		out = append(out, o)
	}
	return out, nil
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
		return d != nil && d.Read.IOPS >= targetIOPS*0.9999 && d.Read.BWBytes >= targetBW*0.9999
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
	diskCap := math.Min(dr.IOPS, dr.BWBytes/float64(ioSize))
	cur := x.At(ioSize, write).IOPS
	for _, v := range cands {
		y := *x
		y.VM = v
		y.Share = nil
		if v.BandwidthMbps > 0 && x.Share != nil {
			p := c.Providers[v.Provider]
			s := *x.Share
			s.InstanceMbps, s.VolumesMbps = v.BandwidthMbps, v.BandwidthMbps*p.VolumeShare
			s.AvailableMbps = s.VolumesMbps - s.BootMbps
			s.AllocMbps = Allocate(s.AvailableMbps, s.LimitsMbps)
			y.Share = &s
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
