package limits

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/units"
)

// DiskTable compares several disks (on one VM, when given): a row per
// disk with what it sustains at the table's IO size and at 1 MiB, what
// binds, its burst, its typical latency and its price.
type DiskTable struct {
	VM    string `json:"vm,omitempty"`
	Cache string `json:"cache,omitempty"`
	// IOSizeBytes is the IO size the IOPS column is at.
	IOSizeBytes int64     `json:"io_size_bytes"`
	Rows        []DiskRow `json:"rows"`
}

// DiskRow is one disk of a DiskTable.
type DiskRow struct {
	Spec    string  `json:"spec"`
	Family  string  `json:"family"`
	SizeGiB float64 `json:"size"`
	// Read and Write are IOPS at the table's IO size and bytes/s at 1
	// MiB, sustained (on the VM, when one is given).
	Read  Rate `json:"read"`
	Write Rate `json:"write"`
	// IOPSBinds and BWBinds name what sets the read IOPS and the read
	// bytes/s.
	IOPSBinds string `json:"iops_binds"`
	BWBinds   string `json:"bw_binds"`
	// BurstIOPS is the read IOPS while burst credits last, for
	// BurstSeconds from a full bucket (0 for no time limit); 0 when
	// nothing bursts.
	BurstIOPS    float64 `json:"burst_iops,omitempty"`
	BurstSeconds float64 `json:"burst_s,omitempty"`
	// LatencyLoNs and LatencyHiNs are the typical QD1 latency band.
	LatencyLoNs    float64 `json:"latency_lo_ns"`
	LatencyHiNs    float64 `json:"latency_hi_ns"`
	LatencyAssumed bool    `json:"latency_assumed"`
	Etcd           string  `json:"etcd"`
	// OnVM says how a sizing's VM carries the disk ("" outside a sizing).
	OnVM     string   `json:"on_vm,omitempty"`
	Cost     *Cost    `json:"cost,omitempty"`
	PriceGap string   `json:"price_gap,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// NewDiskTable resolves each expectation at ioSize (0: 16 KiB) and 1 MiB,
// and its price at priceDate ("" for the newest).
func (c *Catalog) NewDiskTable(xs []*Expectation, ioSize int64, priceDate string) *DiskTable {
	if ioSize <= 0 {
		ioSize = DefaultTargetIOSize
	}
	t := &DiskTable{IOSizeBytes: ioSize}
	for _, x := range xs {
		if x.VM != nil {
			t.VM, t.Cache = x.VM.ID, x.Cache
		}
		t.Rows = append(t.Rows, c.diskRow(x, ioSize, priceDate))
	}
	return t
}

// SizingTable is a sizing's options as a DiskTable, the VM's verdict in
// OnVM, for the wide and CSV forms.
func (c *Catalog) SizingTable(sz *Sizing) *DiskTable {
	t := &DiskTable{VM: sz.Target.VM, Cache: sz.Target.Cache, IOSizeBytes: sz.Target.IOSize}
	for _, o := range sz.Options {
		x := &Expectation{Disk: o.Disk, Cache: CacheNone}
		if v := c.VM(sz.Target.VM); v != nil {
			x = c.withVM(&Expectation{Disk: o.Disk, Cache: sz.Target.Cache}, v)
			x.clampCache()
		}
		r := c.diskRow(x, sz.Target.IOSize, sz.Target.PriceDate)
		r.Read, r.Write = o.Read, o.Write
		r.Cost, r.PriceGap = o.Cost, o.PriceGap
		if sz.Target.VM != "" {
			r.OnVM = vmCell(o)
		}
		_, _, _, r.Notes = optionCells(o)
		t.Rows = append(t.Rows, r)
	}
	return t
}

func (c *Catalog) diskRow(x *Expectation, ioSize int64, priceDate string) DiskRow {
	d := x.Disk
	r := DiskRow{Spec: d.Spec, Family: d.Family.Name, SizeGiB: d.SizeGiB}
	ri, wi := x.At(ioSize, false), x.At(ioSize, true)
	rb, wb := x.At(sizingBWIO, false), x.At(sizingBWIO, true)
	r.Read, r.Write = Rate{ri.IOPS, rb.BWBytes}, Rate{wi.IOPS, wb.BWBytes}
	r.IOPSBinds, r.BWBinds = ri.Binds.Name, rb.Binds.Name
	if b := ri.Burst; b != nil {
		r.BurstIOPS, r.BurstSeconds = b.IOPS, b.Seconds
	}
	m := x.LatencyModel()
	r.LatencyLoNs, r.LatencyHiNs, r.LatencyAssumed, r.Etcd = m.LoNs, m.HiNs, m.Assumed, m.Etcd()
	if r.Cost = c.DiskCost(d, priceDate); r.Cost == nil {
		r.PriceGap = c.PriceGap(d, priceDate)
	}
	if r.Cost != nil && r.Cost.Price.ThirdParty {
		r.Notes = append(r.Notes, thirdPartyNote)
	}
	if r.PriceGap != "" {
		r.Notes = append(r.Notes, r.PriceGap)
	}
	if m.Assumed || m.TooWide() {
		r.Notes = append(r.Notes, latencyNote(m))
	}
	r.Notes = append(append(r.Notes, d.Notes...), x.Notes...)
	return r
}

// latencyNote says why a latency band cannot be relied on.
func latencyNote(m LatencyModel) string {
	s := m.Family + " latency " + units.LatencyBand(m.LoNs, m.HiNs)
	if m.Assumed {
		s += " is ASSUMED: " + m.Basis
	} else {
		s += ": " + m.Basis
	}
	if m.TooWide() {
		s += "; too wide to size a queue depth with: measure one IO at a time (iolens diagnose)"
	}
	return s
}

// short names a limit in few characters: "disk tput", "VM cached IOPS".
func short(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "throughput", "tput"), "volume bandwidth share", "IBM share")
}

func (r DiskRow) bindsText() string {
	a, b := short(r.IOPSBinds), short(r.BWBinds)
	if a == b || b == "" {
		return a
	}
	// "disk IOPS/tput" for "disk IOPS" and "disk tput".
	if pa, _, ok := strings.Cut(a, " "); ok && strings.HasPrefix(b, pa+" ") {
		return a + "/" + strings.TrimPrefix(b, pa+" ")
	}
	return a + " / " + b
}

func (r DiskRow) burstText() string {
	if r.BurstIOPS == 0 {
		return "-"
	}
	return units.Published(math.Round(r.BurstIOPS)) + " " + units.Span(r.BurstSeconds, "no limit")
}

func (r DiskRow) priceText() string {
	co := r.Cost
	switch {
	case co == nil:
		return "-"
	case co.Price.NoTotal:
		return "rates only"
	case co.Price.ThirdParty:
		return units.USD(co.Price.USDPerMonth) + " (" + co.Price.AsOf + ")*"
	}
	return units.USD(co.Price.USDPerMonth) + " (" + co.Price.AsOf + ")"
}

func (r DiskRow) latencyText() string {
	if r.LatencyLoNs <= 0 {
		return "unknown"
	}
	s := units.LatencyBand(r.LatencyLoNs, r.LatencyHiNs)
	if r.LatencyAssumed {
		s += "?"
	}
	return s
}

// WriteText renders the table, each note once at the bottom, under 160
// characters wide for specs of ordinary length.
func (t *DiskTable) WriteText(w io.Writer) error {
	if t.VM != "" {
		head := "on " + t.VM
		if t.Cache != "" && t.Cache != CacheNone {
			head += " with " + t.Cache + " host caching"
		}
		fmt.Fprintln(w, head)
	}
	// Reads and writes as "r/w" where they differ, to keep the table
	// narrow.
	pair := func(r, w float64, f func(float64) string) string {
		if f(r) == f(w) {
			return f(r)
		}
		return f(r) + "/" + f(w)
	}
	iops := func(x float64) string { return units.Published(math.Round(x)) }
	var notes footnotes
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DISK\tIOPS@%s\tMB/S@1MiB\tBINDS\tBURST IOPS\tQD1 LATENCY\t$/MONTH\tNOTES\n", strings.ReplaceAll(units.IOSize(t.IOSizeBytes), " ", ""))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Spec, pair(r.Read.IOPS, r.Write.IOPS, iops), pair(r.Read.BWBytes, r.Write.BWBytes, units.MB),
			r.bindsText(), r.burstText(), r.latencyText(), r.priceText(), notes.refs(r.Notes...))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nsustained figures, read/write where they differ; a latency ending in ? is assumed; -o wide adds the etcd verdict and every source")
	notes.write(w)
	return nil
}

// WriteWide renders one record per disk, every figure named, no width
// limit.
func (t *DiskTable) WriteWide(w io.Writer) error {
	for i, r := range t.Rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s\n", r.Spec, r.Family)
		fmt.Fprintf(w, "  iops        %s read, %s write at %s (%s)\n", units.Published(math.Round(r.Read.IOPS)), units.Published(math.Round(r.Write.IOPS)), units.IOSize(t.IOSizeBytes), r.IOPSBinds)
		fmt.Fprintf(w, "  throughput  %s MB/s read, %s MB/s write at 1 MiB (%s)\n", units.MB(r.Read.BWBytes), units.MB(r.Write.BWBytes), r.BWBinds)
		fmt.Fprintf(w, "  burst       %s\n", r.burstText())
		fmt.Fprintf(w, "  latency     %s at QD1; etcd %s\n", r.latencyText(), r.Etcd)
		if r.OnVM != "" {
			fmt.Fprintf(w, "  on %s  %s\n", t.VM, r.OnVM)
		}
		switch {
		case r.Cost != nil && r.Cost.Price.NoTotal:
			fmt.Fprintf(w, "  price       %s (%s, %s); source: %s\n", r.Cost.Price.Rates, r.Cost.Price.Region, r.Cost.Price.AsOf, r.Cost.Price.Source)
		case r.Cost != nil:
			fmt.Fprintf(w, "  price       %s a month (%s, %s); source: %s\n", units.USD(r.Cost.Price.USDPerMonth), r.Cost.Price.Region, r.Cost.Price.AsOf, r.Cost.Price.Source)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note        %s\n", n)
		}
	}
	return nil
}

// WriteCSV renders one record per disk as CSV with a header row.
func (t *DiskTable) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	cw.Write([]string{"spec", "family", "size", "io_size_bytes", "read_iops", "write_iops", "read_mbps", "write_mbps", "iops_binds", "bw_binds",
		"burst_iops", "burst_s", "latency_lo_ms", "latency_hi_ms", "latency_assumed", "etcd", "on_vm", "usd_per_month", "price_region", "price_as_of", "price_third_party", "price_source", "price_gap", "notes"})
	for _, r := range t.Rows {
		var usd, region, asOf, third, src string
		if co := r.Cost; co != nil {
			region, asOf, third, src = co.Price.Region, co.Price.AsOf, strconv.FormatBool(co.Price.ThirdParty), co.Price.Source
			if !co.Price.NoTotal {
				usd = num(math.Round(co.Price.USDPerMonth*100) / 100)
			}
		}
		cw.Write([]string{r.Spec, r.Family, num(r.SizeGiB), strconv.FormatInt(t.IOSizeBytes, 10), num(math.Round(r.Read.IOPS)), num(math.Round(r.Write.IOPS)),
			num(math.Round(r.Read.BWBytes/1e4) / 100), num(math.Round(r.Write.BWBytes/1e4) / 100), r.IOPSBinds, r.BWBinds,
			num(math.Round(r.BurstIOPS)), num(r.BurstSeconds), num(r.LatencyLoNs / 1e6), num(r.LatencyHiNs / 1e6), strconv.FormatBool(r.LatencyAssumed), r.Etcd, r.OnVM,
			usd, region, asOf, third, src, r.PriceGap, strings.Join(r.Notes, "; ")})
	}
	cw.Flush()
	return cw.Error()
}
