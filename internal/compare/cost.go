package compare

import (
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
)

// largeBlock is the block size from which a test measures bandwidth
// rather than IOPS.
const largeBlock = 64 << 10

// expectLabel is the disk every successful result of rs was compared
// with, or "" when none was or they disagree.
func expectLabel(rs []result.Result) string {
	disk := ""
	for i := range rs {
		if rs[i].Status != "ok" {
			continue
		}
		d := rs[i].Target.Labels["expect"]
		if d == "" || disk != "" && d != disk {
			return ""
		}
		disk = d
	}
	return disk
}

// costs prices each operand whose disk is known and priced in the
// catalog; the entry is nil for the others.
func costs(ops []Operand, c *Comparison) []*Cost {
	out := make([]*Cost, len(ops))
	var cat *limits.Catalog
	for i, op := range ops {
		spec := expectLabel(op.Results)
		if spec == "" {
			continue
		}
		if cat == nil {
			var err error
			if cat, err = limits.Default(); err != nil {
				return out
			}
		}
		d, err := cat.ParseDisk(spec)
		if err != nil {
			continue // a label from a hostile or older file: no price
		}
		co := cat.DiskCost(d, "")
		if co == nil || co.Price.USDPerMonth <= 0 {
			continue
		}
		x := &Cost{Disk: spec, USDPerMonth: co.Price.USDPerMonth, Region: co.Price.Region, AsOf: co.Price.AsOf,
			Source: co.Price.Source, Notes: co.Price.Notes}
		for _, r := range c.Rows {
			cell := r.Cells[i]
			if cell == nil || r.Dir == "sync" {
				continue
			}
			if r.BlockSize >= largeBlock {
				if cell.BWBytes > x.BWBytes {
					x.BWBytes, x.BWTest = cell.BWBytes, r.Test
				}
			} else if cell.IOPS > x.IOPS {
				x.IOPS, x.IOPSTest = cell.IOPS, r.Test
			}
		}
		x.USDPerIOPS, x.USDPerMBps = co.PerMeasured(x.IOPS, x.BWBytes)
		out[i] = x
	}
	return out
}
