package limits

import "io"

// Placement is where a disk is used: the VM size it is attached to (""
// for none), the other data volumes on that VM (disk specs), the host
// cache mode, and how many volumes of the disk's kind run IO on the VM
// at once, the disk included (0 or 1: it alone).
type Placement struct {
	VM       string
	Attached []string
	Cache    string
	Volumes  int
}

// Expect resolves disk so placed: ParseExpectation with the disk's
// fellow volumes attached too, all of them sharing the VM's caps.
func (c *Catalog) Expect(disk string, p Placement) (*Expectation, error) {
	attached := append([]string(nil), p.Attached...)
	for i := 1; i < p.Volumes; i++ {
		attached = append(attached, disk)
	}
	x, err := c.ParseExpectation(disk, p.VM, attached, p.Cache)
	if err != nil {
		return nil, err
	}
	x.SetConcurrent(p.Volumes)
	return x, nil
}

// Sheet is the report of disk so placed at each IO size, priced at
// priceDate ("" for the newest). With buffered, its notes say what the
// page cache's merging does to the sizes of the writes the disk sees.
func (c *Catalog) Sheet(disk string, p Placement, ioSizes []int64, priceDate string, buffered bool) (Report, error) {
	x, err := c.Expect(disk, p)
	if err != nil {
		return Report{}, err
	}
	for _, s := range ioSizes {
		if !buffered {
			break
		}
		if n := x.BufferedNote(s); n != "" {
			x.Notes = append(x.Notes, n)
			break
		}
	}
	return c.NewReport(x, ioSizes, priceDate), nil
}

// Table is the disks so placed side by side at ioSize, priced at
// priceDate ("" for the newest).
func (c *Catalog) Table(disks []string, p Placement, ioSize int64, priceDate string) (*DiskTable, error) {
	var xs []*Expectation
	for _, d := range disks {
		x, err := c.Expect(d, p)
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	return c.NewDiskTable(xs, ioSize, priceDate), nil
}

// Priced is the catalog with the prices of the user's price file (nil
// for none) preferred to its own (a *PriceError when the file is
// refused), and only those of region ("" for every region).
func (c *Catalog) Priced(prices io.Reader, region string) (*Catalog, error) {
	if prices != nil {
		pf, err := c.ParsePriceFile(prices)
		if err == nil {
			c, err = c.WithPrices(pf)
		}
		if err != nil {
			return nil, err
		}
	}
	if region == "" {
		return c, nil
	}
	return c.InRegion(region)
}
