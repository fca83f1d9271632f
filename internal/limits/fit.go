package limits

import (
	"math"
	"sort"
	"strconv"
)

// Fit is a catalog disk or VM size whose published sustained limits are
// near measured ceilings.
type Fit struct {
	// Disk is a disk spec ("azure:P15", "aws:gp2:500GiB"); VM a VM size
	// whose own cap fits instead (then Disk is empty).
	Disk string `json:"disk,omitempty"`
	VM   string `json:"vm,omitempty"`
	// IOPS and BWBytes are its published sustained limits (reads).
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	// Distance is the largest relative gap between a measured ceiling and
	// the published one (0.05 = 5%).
	Distance float64 `json:"distance"`
}

// fitWithin is the largest gap a fit may have.
const fitWithin = 0.10

// Fits lists the catalog's current disks and VM sizes whose sustained
// limits match the measured ceilings (iops and bwBytes; 0 when that figure
// is not a ceiling), nearest first, at most max of them. Families whose
// limits are provisioned to order (gp3, Premium SSD v2, Ultra) fit any
// figure in their range and are left out: they tell nothing.
func (c *Catalog) Fits(iops, bwBytes float64, max int) []Fit {
	if iops <= 0 && bwBytes <= 0 {
		return nil
	}
	gap := func(got, published float64) float64 {
		if got <= 0 {
			return 0
		}
		if published <= 0 {
			return math.Inf(1)
		}
		return math.Abs(got-published) / published
	}
	dist := func(r Rate) float64 { return math.Max(gap(iops, r.IOPS), gap(bwBytes, r.BWBytes)) }
	var out []Fit
	add := func(f Fit, r Rate) {
		f.IOPS, f.BWBytes, f.Distance = r.IOPS, r.BWBytes, dist(r)
		if f.Distance <= fitWithin {
			out = append(out, f)
		}
	}
	for _, f := range c.Families {
		if f.Kind == "file" || len(f.Editions) == 0 {
			continue
		}
		e := f.Editions[0]
		if e.IOPS != nil && e.IOPS.Provisioned || e.Tput != nil && e.Tput.Provisioned {
			continue
		}
		if len(e.Tiers) > 0 {
			for _, t := range e.Tiers {
				if d, err := c.ParseDisk(f.ID + ":" + t.Name); err == nil && d.Family == f {
					add(Fit{Disk: d.Spec}, d.Read)
				}
			}
			continue
		}
		// Limits grow with size: the sizes on either side of the one
		// reaching the figure that varies with size.
		lo, hi := 1.0, 65536.0
		if e.SizeGiB != nil {
			lo, hi = e.SizeGiB.Min, e.SizeGiB.Max
		}
		at := func(size float64) *Disk {
			d, err := c.ParseDisk(f.ID + ":" + strconv.FormatFloat(size, 'f', -1, 64))
			if err != nil {
				return nil
			}
			return d
		}
		reach := func(d *Disk) bool {
			return d != nil && (iops <= 0 || d.Read.IOPS >= iops) && (bwBytes <= 0 || d.Read.BWBytes >= bwBytes)
		}
		n := int(hi - lo)
		i := sort.Search(n+1, func(i int) bool { return reach(at(lo + float64(i))) })
		best := Fit{Distance: math.Inf(1)}
		for _, size := range []float64{lo + float64(i-1), lo + float64(i)} {
			if size < lo || size > hi {
				continue
			}
			if d := at(size); d != nil && dist(d.Read) < best.Distance {
				best = Fit{Disk: d.Spec, IOPS: d.Read.IOPS, BWBytes: d.Read.BWBytes, Distance: dist(d.Read)}
			}
		}
		if best.Disk != "" {
			add(Fit{Disk: best.Disk}, Rate{IOPS: best.IOPS, BWBytes: best.BWBytes})
		}
	}
	for _, v := range c.VMs {
		if v.Uncached == nil {
			continue
		}
		ub := unitBytes(v.Unit)
		add(Fit{VM: v.ID}, Rate{IOPS: v.Uncached.IOPS, BWBytes: v.Uncached.Tput * ub})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Distance < out[j].Distance })
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}
