package limits

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/units"
)

// Report is what `iolens limits DISK` shows: the expectation, its
// ceilings at each IO size, what it costs, and the sources behind it.
type Report struct {
	Expectation *Expectation `json:"expectation"`
	Unit        string       `json:"unit"`
	Ceilings    []Ceiling    `json:"ceilings"`
	// Cost is the disk's or share's monthly price; VMPrice the VM's
	// hourly price. Nil when no sourced price exists.
	Cost    *Cost  `json:"cost,omitempty"`
	VMPrice *Price `json:"vm_price,omitempty"`
	// HostCache is the ReadWrite cache arithmetic at each IO size, for
	// writes as fast as the VM's cached limits take them.
	HostCache []HostCacheAt `json:"host_cache,omitempty"`
	// Latency is the latency model's prediction.
	Latency *LatencyPrediction `json:"latency,omitempty"`
	// PriceGap says why there is no Cost.
	PriceGap string   `json:"price_gap,omitempty"`
	Sources  []string `json:"sources"`
	// Dirs: reads and writes differ, so both are shown.
	Dirs bool `json:"-"`
}

// HostCacheAt is the ReadWrite cache arithmetic at one IO size.
type HostCacheAt struct {
	IOSizeBytes int64     `json:"io_size_bytes"`
	Fill        CacheFill `json:"fill"`
	// Sequential is the same for sequential writes, which the cache
	// drains merged into large IOs.
	Sequential CacheFill `json:"sequential"`
}

// NewReport resolves the ceilings of an expectation at each IO size, its
// prices at priceDate ("" for the newest) and the sources of every figure.
func (c *Catalog) NewReport(x *Expectation, ioSizes []int64, priceDate string) Report {
	rep := Report{Expectation: x, Unit: x.Disk.Edition.Unit}
	split := x.Disk.Read != x.Disk.Write
	if r, _ := x.VMRate(true); r != (Rate{}) {
		if rr, _ := x.VMRate(false); rr != r {
			split = true
		}
	}
	rep.Dirs = split || x.Cache != CacheNone
	for _, s := range ioSizes {
		rep.Ceilings = append(rep.Ceilings, x.At(s, false))
		if rep.Dirs {
			rep.Ceilings = append(rep.Ceilings, x.At(s, true))
		}
	}
	for _, s := range ioSizes {
		if cf, ok := x.HostCacheFill(s, 0); ok {
			seq, _ := x.HostCacheFillPattern(s, 0, true)
			rep.HostCache = append(rep.HostCache, HostCacheAt{s, cf, seq})
		}
	}
	if len(ioSizes) > 0 {
		small := ioSizes[0]
		for _, s := range ioSizes {
			small = min(small, s)
		}
		p := x.PredictLatency(small, true)
		rep.Latency = &p
	}
	rep.Cost = c.DiskCost(x.Disk, priceDate)
	if rep.Cost == nil {
		rep.PriceGap = c.PriceGap(x.Disk, priceDate)
	}
	if x.VM != nil {
		rep.VMPrice = c.VMPrice(x.VM, priceDate)
	}
	keys := append([]string{}, x.Disk.Edition.SourceKeys...)
	if x.VM != nil {
		keys = append(keys, x.VM.SourceKeys...)
	}
	keys = append(keys, c.Providers[x.Disk.Family.Provider].SourceKeys...)
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			rep.Sources = append(rep.Sources, k+": "+SourceRef(c.Sources[k]))
		}
	}
	return rep
}

// WriteText renders the report for a terminal.
func (rep Report) WriteText(w io.Writer) error {
	x := rep.Expectation
	d := x.Disk
	e := d.Edition
	fmt.Fprintf(w, "disk    %s  %s", d.Spec, d.Family.Name)
	if d.Tier != nil {
		fmt.Fprintf(w, " %s", d.Tier.Name)
	}
	if d.SizeGiB > 0 {
		fmt.Fprintf(w, ", %g %s", d.SizeGiB, d.Family.sizeUnit())
	}
	fmt.Fprintln(w)
	// 0 IOPS is no published figure (file shares), not a cap of nothing.
	iopsText := func(x float64) string {
		if x == 0 {
			return "no published"
		}
		return units.Published(math.Round(x))
	}
	fmt.Fprintf(w, "        %s IOPS, %s MB/s sustained", iopsText(d.Read.IOPS), units.MB(d.Read.BWBytes))
	if d.Write != d.Read {
		fmt.Fprintf(w, " (writes %s IOPS, %s MB/s)", iopsText(d.Write.IOPS), units.MB(d.Write.BWBytes))
	}
	fmt.Fprintf(w, "; catalog unit %s", e.Unit)
	if e.Unit == "MiB/s" {
		fmt.Fprintf(w, " (%.4g %s = %s MB/s)", d.Tput, e.Unit, units.MB(d.Read.BWBytes))
	}
	fmt.Fprintln(w)
	if e.IOUnitKiB > 0 {
		fmt.Fprintf(w, "        IOs larger than %s count as several IOs\n", units.Stated(e.IOUnitKiB, "KiB"))
	}
	if e.NominalIOKiB > 0 {
		fmt.Fprintf(w, "        IOPS figure defined at %s IOs\n", units.Stated(e.NominalIOKiB, "KiB"))
	}
	if e.SLA != "" {
		fmt.Fprintf(w, "        %s\n", e.SLA)
	}
	if b := d.Burst; b != nil {
		fmt.Fprintf(w, "burst   %s\n", BurstLine(b))
	}
	if v := x.VM; v != nil {
		fmt.Fprintf(w, "vm      %s", v.ID)
		r, vb := x.VMRate(false)
		switch {
		case d.Family.Kind == "file" && x.NetworkBWBytes > 0:
			fmt.Fprintf(w, ": %s MB/s network for the share (%s Mbps)", units.MB(x.NetworkBWBytes), units.Published(x.NetworkBWBytes*8/1e6))
		case d.Family.Kind == "file" && v.NetworkNote != "":
			fmt.Fprintf(w, ": %s", v.NetworkNote)
		case d.Family.Kind == "file":
			fmt.Fprintf(w, ": no network bandwidth in the catalog")
		case v.BandwidthMbps > 0:
			fmt.Fprintf(w, ": %s Mbps instance bandwidth", units.Published(v.BandwidthMbps))
		case r != (Rate{}):
			fmt.Fprintf(w, ": %s IOPS, %s MB/s uncached", units.Published(math.Round(r.IOPS)), units.MB(r.BWBytes))
			if rw, _ := x.VMRate(true); rw != r {
				fmt.Fprintf(w, " (writes %s IOPS, %s MB/s)", units.Published(math.Round(rw.IOPS)), units.MB(rw.BWBytes))
			}
		default:
			fmt.Fprintf(w, ": no limits for this disk type in the catalog")
		}
		if v.Cached != nil && d.Family.Kind != "file" {
			fmt.Fprintf(w, "; cached %s IOPS, %g %s (%s cache)", units.Published(math.Round(v.Cached.IOPS)), v.Cached.Tput, v.Unit, units.Stated(v.Cached.CacheGiB, "GiB"))
		}
		fmt.Fprintln(w)
		if vb != nil && d.Family.Kind != "file" {
			fmt.Fprintf(w, "        VM burst: %s\n", BurstLine(vb))
		}
	}
	if s := x.Share; s != nil {
		fmt.Fprintf(w, "share   %s Mbps x %.0f%% = %s Mbps for volumes, minus %s for the boot volume = %s Mbps for data volumes\n",
			units.Published(s.InstanceMbps), s.VolumesMbps/s.InstanceMbps*100, units.Published(s.VolumesMbps), units.Published(s.BootMbps), units.Published(s.AvailableMbps))
		for i, a := range s.AllocMbps {
			who := "this disk"
			if i > 0 {
				who = x.Attached[i-1].Spec
			}
			fmt.Fprintf(w, "        %-28s limit %s Mbps, allocated %s Mbps (%s MB/s)\n", who, units.Published(s.LimitsMbps[i]), units.Published(a), units.MB(a*1e6/8))
		}
	}
	fmt.Fprintf(w, "cache   %s\n", x.Cache)
	for i, h := range rep.HostCache {
		if i == 0 {
			fmt.Fprintf(w, "        %s\n", h.Fill.BacklogNote())
		}
		if h.Sequential.Merged && h.Sequential.Sentence() != h.Fill.Sentence() {
			fmt.Fprintf(w, "        %s random writes: %s\n", units.IOSize(h.IOSizeBytes), h.Fill.Sentence())
			fmt.Fprintf(w, "        %s sequential writes: %s\n", units.IOSize(h.IOSizeBytes), h.Sequential.Sentence())
			continue
		}
		fmt.Fprintf(w, "        %s writes: %s\n", units.IOSize(h.IOSizeBytes), h.Fill.Sentence())
	}
	if p := rep.Latency; p != nil {
		for i, l := range p.Lines() {
			head := "        "
			if i == 0 {
				head = "latency "
			}
			fmt.Fprintf(w, "%s%s\n", head, l)
		}
	}
	switch co := rep.Cost; {
	case co != nil && co.Price.NoTotal:
		fmt.Fprintf(w, "price   %s (%s, %s)\n", co.Price.Rates, co.Price.Region, co.Price.AsOf)
	case co != nil:
		third := ""
		if co.Price.ThirdParty {
			third = ", a third-party source"
		}
		fmt.Fprintf(w, "price   %s a month (%s, %s%s); %s per provisioned IOPS, %s per MB/s, %s per %s\n",
			units.USD(co.Price.USDPerMonth), co.Price.Region, co.Price.AsOf, third, units.USD(co.USDPerIOPS), units.USD(co.USDPerMBps), units.USD(co.USDPerSize), d.Family.sizeUnit())
	default:
		fmt.Fprintf(w, "price   none: %s\n", rep.PriceGap)
	}
	if co := rep.Cost; co != nil {
		for _, n := range co.Price.Notes {
			fmt.Fprintf(w, "        %s\n", n)
		}
		fmt.Fprintf(w, "        source: %s\n", co.Price.Source)
	}
	if p := rep.VMPrice; p != nil {
		fmt.Fprintf(w, "        VM %s an hour (%s, %s); source: %s\n", units.USD(p.USDPerHour), p.Region, p.AsOf, p.Source)
	}
	for _, n := range append(append([]string{}, d.Notes...), x.Notes...) {
		fmt.Fprintf(w, "note    %s\n", n)
	}
	if e.Note != "" {
		fmt.Fprintf(w, "note    %s\n", e.Note)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "IO SIZE\tIOPS\tMB/s\tBINDS\tBURST IOPS\tBURST MB/s\tBURST FOR"
	if rep.Dirs {
		head = "IO SIZE\tDIR\tIOPS\tMB/s\tBINDS\tBURST IOPS\tBURST MB/s\tBURST FOR\tCACHE HIT IOPS\tCACHE HIT MB/s"
	}
	fmt.Fprintln(tw, head)
	for _, ce := range rep.Ceilings {
		row := units.IOSize(ce.IOSizeBytes) + "\t"
		if rep.Dirs {
			row += map[bool]string{false: "read", true: "write"}[ce.Write] + "\t"
		}
		row += fmt.Sprintf("%s\t%s\t%s", units.Published(math.Round(ce.IOPS)), units.MB(ce.BWBytes), ce.Binds.Name)
		if ce.Burst != nil {
			row += fmt.Sprintf("\t%s\t%s\t%s", units.Published(math.Round(ce.Burst.IOPS)), units.MB(ce.Burst.BWBytes), units.Span(ce.Burst.Seconds, "unlimited"))
		} else {
			row += "\t-\t-\t-"
		}
		if rep.Dirs {
			if ce.CacheHit != nil {
				row += fmt.Sprintf("\t%s\t%s", units.Published(math.Round(ce.CacheHit.IOPS)), units.MB(ce.CacheHit.BWBytes))
			} else {
				row += "\t-\t-"
			}
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	var whys []string
	seen := map[string]bool{}
	for _, ce := range rep.Ceilings {
		if ce.Binds.Why != "" && !seen[ce.Binds.Why] {
			seen[ce.Binds.Why] = true
			whys = append(whys, fmt.Sprintf("%s: %s", units.IOSize(ce.IOSizeBytes), ce.Binds.Why))
		}
	}
	if len(whys) > 0 {
		fmt.Fprintln(w)
		for _, s := range whys {
			fmt.Fprintf(w, "why     %s\n", s)
		}
	}
	fmt.Fprintln(w, "\nsources")
	for _, s := range rep.Sources {
		fmt.Fprintf(w, "  %s\n", s)
	}
	return nil
}

// Want says what a target asks for, in words: only what was asked.
func (t Target) Want() string {
	var parts []string
	if t.IOPS > 0 {
		parts = append(parts, fmt.Sprintf("%s IOPS at %s", units.Published(t.IOPS), units.IOSize(t.IOSize)))
	}
	if t.BWBytes > 0 {
		parts = append(parts, units.Published(t.BWBytes/1e6)+" MB/s")
	}
	s := strings.Join(parts, " and ") + ", reads and writes each"
	if t.VM != "" {
		s += " on " + t.VM
		if t.Cache != "" && t.Cache != CacheNone {
			s += " with " + t.Cache + " host caching"
		}
	}
	return s
}

// WriteSizingText renders a sizing as one table, cheapest first within
// each group (sustained on the VM, on the VM's burst only, on another VM
// size), the groups named in the VM column, and each note once at the
// bottom, referred to by number.
func WriteSizingText(w io.Writer, sz *Sizing) error {
	t := sz.Target
	if len(sz.Options) == 0 {
		fmt.Fprintf(w, "no %s disk reaches %s\n", sz.Provider, t.Want())
	} else {
		for _, l := range wrap(fmt.Sprintf("%s disks that sustain %s, cheapest first (unpriced after)", sz.Provider, t.Want()), maxLine) {
			fmt.Fprintln(w, l)
		}
		var notes footnotes
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := fmt.Sprintf("SPEC\tIOPS@%s\tMB/S@1MiB\t$/MONTH\t$/IOPS\t$/MB/S", strings.ReplaceAll(units.IOSize(t.IOSize), " ", ""))
		if t.VM != "" {
			head += "\tON " + strings.ToUpper(t.VM)
		}
		fmt.Fprintln(tw, head+"\tNOTES")
		iops := func(x float64) string { return units.Published(math.Round(x)) }
		for _, op := range sz.Options {
			price, perIOPS, perMB, note := optionCells(op)
			row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", op.Spec, pairText(op.Read.IOPS, op.Write.IOPS, iops), pairText(op.Read.BWBytes, op.Write.BWBytes, units.MB), price, perIOPS, perMB)
			if t.VM != "" {
				row += "\t" + vmCell(op)
			}
			fmt.Fprintln(tw, row+"\t"+notes.refs(note...))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		notes.write(w)
	}
	if len(sz.NotJudged) > 0 {
		fmt.Fprintln(w, "\nnot judged")
		for _, n := range sz.NotJudged {
			for j, l := range wrap(n, maxLine-4) {
				if j == 0 {
					fmt.Fprintln(w, "  - "+l)
				} else {
					fmt.Fprintln(w, "    "+l)
				}
			}
		}
	}
	return nil
}

// vmCell says how the sizing's VM carries an option: sustained, on its
// burst only, or not at all (and which size does).
func vmCell(op Option) string {
	switch {
	case op.VMBinds == "":
		return "sustained"
	case op.VMBurstSeconds > 0:
		return "burst only, " + units.Span(op.VMBurstSeconds, "unlimited")
	case op.ProposedVM != "":
		return "needs " + op.ProposedVM
	}
	return "no VM size carries it"
}

// footnotes numbers notes once each, for a table's NOTES column.
type footnotes struct {
	list []string
	idx  map[string]int
}

// refs numbers each note (reusing a number for a repeated one) and
// returns the numbers, "-" for none.
func (f *footnotes) refs(notes ...string) string {
	if f.idx == nil {
		f.idx = map[string]int{}
	}
	var out []string
	for _, n := range notes {
		if n == "" {
			continue
		}
		i, ok := f.idx[n]
		if !ok {
			f.list = append(f.list, n)
			i = len(f.list)
			f.idx[n] = i
		}
		out = append(out, strconv.Itoa(i))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}

// write prints the notes under a table, numbered, wrapped to the
// table's width.
func (f *footnotes) write(w io.Writer) {
	if len(f.list) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnotes")
	for i, n := range f.list {
		head := fmt.Sprintf("  %d. ", i+1)
		for j, l := range wrap(n, maxLine-len(head)) {
			if j > 0 {
				head = strings.Repeat(" ", len(head))
			}
			fmt.Fprintln(w, head+l)
		}
	}
}

// maxLine is the widest line the limits tables and their notes print.
const maxLine = 150

// wrap breaks s at spaces into lines of at most width characters (a
// word longer than that keeps its own line).
func wrap(s string, width int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			out = append(out, line)
			line = word
		default:
			line += " " + word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// pairText shows a read figure, and the write one after a slash when it
// differs.
func pairText(r, w float64, f func(float64) string) string {
	if f(r) == f(w) {
		return f(r)
	}
	return f(r) + " r / " + f(w) + " w"
}

// thirdPartyNote is said of a price whose source is not the provider's.
const thirdPartyNote = "* the price's source is not the provider's own (a third-party page or a seed write-up); 'iolens catalog show ID' names it"

// optionCells are an option's price cells and its notes.
func optionCells(op Option) (price, perIOPS, perMB string, notes []string) {
	price, perIOPS, perMB = "-", "-", "-"
	switch co := op.Cost; {
	case co != nil && co.Price.NoTotal:
		price = "rates only"
		notes = append(notes, co.Price.Rates)
	case co != nil:
		price = units.USD(co.Price.USDPerMonth) + " (" + co.Price.AsOf + ")"
		perIOPS, perMB = units.USD(co.USDPerIOPS), units.USD(co.USDPerMBps)
		if co.Price.ThirdParty {
			price += "*"
			notes = append(notes, thirdPartyNote)
		}
	default:
		notes = append(notes, op.PriceGap)
	}
	switch {
	case op.VMBurstSeconds > 0:
		notes = append(notes, "sustained, "+op.VMBinds)
	case op.ProposedVM != "":
		s := op.VMBinds + "; " + op.ProposedVM + " carries it"
		if op.VMPrice != nil {
			s += " (" + units.USD(op.VMPrice.USDPerHour) + "/h, " + op.VMPrice.AsOf + ")"
		}
		notes = append(notes, s)
	case op.VMBinds != "":
		notes = append(notes, op.VMBinds+"; no VM size in the catalog carries it")
	}
	notes = append(notes, op.Disk.Notes...)
	return price, perIOPS, perMB, notes
}

// WriteCatalogList renders every family and VM size, one a line.
func (c *Catalog) WriteCatalogList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tUNIT\tEDITIONS\tNAME")
	for _, f := range c.Families {
		var eds []string
		for _, e := range f.Editions {
			to := e.To
			if to == "" {
				to = "now"
			}
			eds = append(eds, e.From+".."+to)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.ID, f.Kind, f.Editions[0].Unit, strings.Join(eds, ", "), f.Name)
	}
	for _, v := range c.VMs {
		desc := ""
		switch {
		case v.BandwidthMbps > 0:
			desc = fmt.Sprintf("%s Mbps instance bandwidth", units.Published(v.BandwidthMbps))
		case v.Uncached != nil:
			desc = fmt.Sprintf("%s IOPS, %g %s", units.Published(v.Uncached.IOPS), v.Uncached.Tput, v.Unit)
		default:
			var ts []string
			for t := range v.PerType {
				ts = append(ts, t)
			}
			sort.Strings(ts)
			desc = "per disk type: " + strings.Join(ts, ", ")
		}
		switch {
		case v.NetworkMbps > 0:
			desc += fmt.Sprintf("; network %s Mbps", units.Published(v.NetworkMbps))
		case v.NetworkNote != "":
			desc += "; network not published"
		}
		unit := v.Unit
		if unit == "" {
			unit = "Mbps"
		}
		fmt.Fprintf(tw, "%s\tvm\t%s\t-\t%s\n", v.ID, unit, desc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := map[string]int{}
	for _, f := range c.Families {
		n[f.Provider]++
		for _, e := range f.Editions {
			n[f.Provider] += len(e.Tiers)
		}
	}
	for _, v := range c.VMs {
		n[v.Provider]++
	}
	var parts, regions []string
	for _, p := range c.ProviderNames() {
		parts = append(parts, fmt.Sprintf("%s %d", p, n[p]))
		regions = append(regions, p+" "+c.Providers[p].PriceRegion)
	}
	_, err := fmt.Fprintf(w, "\nentries (families, tiers and VM sizes): %s; %d sourced prices (reference regions: %s); researched %s. 'iolens catalog show ID' for the figures, prices and sources.\n",
		strings.Join(parts, ", "), len(c.Prices), strings.Join(regions, ", "), c.Researched)
	return err
}

// CatalogEntry is one family or VM size with the sources it cites and its
// prices, as `iolens catalog show` prints it.
type CatalogEntry struct {
	Entry   any               `json:"entry"`
	Prices  []*PriceEntry     `json:"prices,omitempty"`
	Sources map[string]Source `json:"sources"`
}

// Entry looks up a family, VM size or tier name ("azure:P15" shows the
// Premium SSD family); nil when there is none.
func (c *Catalog) Entry(id string) *CatalogEntry {
	prov, name, _ := strings.Cut(id, ":")
	var item any
	var srcKeys []string
	var famID, vmID string
	if f := c.Family(strings.ToLower(prov), name); f != nil {
		item, famID = f, f.ID
		for _, e := range f.Editions {
			srcKeys = append(srcKeys, e.SourceKeys...)
		}
	} else if v := c.VM(id); v != nil {
		item, vmID = v, v.ID
		srcKeys = v.SourceKeys
	} else if d, err := c.ParseDisk(id); err == nil {
		item, famID = d.Family, d.Family.ID
		for _, e := range d.Family.Editions {
			srcKeys = append(srcKeys, e.SourceKeys...)
		}
	} else {
		return nil
	}
	ce := &CatalogEntry{Entry: item, Sources: map[string]Source{}}
	for _, p := range c.Prices {
		if famID != "" && strings.EqualFold(p.Family, famID) || vmID != "" && strings.EqualFold(p.VM, vmID) {
			ce.Prices = append(ce.Prices, p)
			srcKeys = append(srcKeys, p.Source)
		}
	}
	for _, k := range srcKeys {
		ce.Sources[k] = c.Sources[k]
	}
	return ce
}

// WriteText renders a catalog entry: editions and their figures, prices,
// sources.
func (ce *CatalogEntry) WriteText(w io.Writer) error {
	switch it := ce.Entry.(type) {
	case *Family:
		fmt.Fprintf(w, "%s  %s (%s)\n", it.ID, it.Name, it.Kind)
		if len(it.Aliases) > 0 {
			fmt.Fprintf(w, "aliases: %s\n", strings.Join(it.Aliases, ", "))
		}
		for _, e := range it.Editions {
			to := e.To
			if to == "" {
				to = "now"
			}
			fmt.Fprintf(w, "\nedition %s..%s  unit %s", e.From, to, e.Unit)
			if e.IOUnitKiB > 0 {
				fmt.Fprintf(w, "  IO counted in %s units", units.Stated(e.IOUnitKiB, "KiB"))
			}
			fmt.Fprintln(w)
			if e.Note != "" {
				fmt.Fprintf(w, "  %s\n", e.Note)
			}
			if len(e.Unverified) > 0 {
				fmt.Fprintf(w, "  unverified: %s\n", strings.Join(e.Unverified, "; "))
			}
			if len(e.Tiers) > 0 {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintf(tw, "  TIER\tGiB\tIOPS\t%s\tBURST\n", e.Unit)
				for _, t := range e.Tiers {
					b := "-"
					if t.Burst != nil {
						b = fmt.Sprintf("%s IOPS, %g %s (%s", units.Published(t.Burst.IOPS), t.Burst.Tput, e.Unit, t.Burst.Model)
						if t.Burst.Seconds > 0 {
							b += ", " + units.Span(t.Burst.Seconds, "unlimited")
						}
						b += ")"
					}
					fmt.Fprintf(tw, "  %s\t%g\t%s\t%g\t%s\n", t.Name, t.SizeGiB, units.Published(t.IOPS), t.Tput, b)
				}
				tw.Flush()
			} else {
				j, _ := json.Marshal(map[string]any{"size": e.SizeGiB, "iops": e.IOPS, "tput": e.Tput, "burst": e.Burst})
				fmt.Fprintf(w, "  formula: %s\n", j)
			}
			fmt.Fprintf(w, "  sources: %s\n", strings.Join(e.SourceKeys, ", "))
		}
	case *VM:
		j, _ := json.MarshalIndent(it, "", "  ")
		fmt.Fprintf(w, "%s\n", j)
	}
	if len(ce.Prices) > 0 {
		fmt.Fprintln(w, "\nprices")
		for _, p := range ce.Prices {
			fmt.Fprintf(w, "  %s\n", priceLine(p))
		}
	}
	fmt.Fprintln(w, "\nsources")
	var keys []string
	for k := range ce.Sources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", k, SourceRef(ce.Sources[k]))
	}
	return nil
}

func priceLine(p *PriceEntry) string {
	var parts []string
	if p.Tier != "" {
		parts = append(parts, p.Tier)
	}
	for _, x := range []struct {
		v    float64
		unit string
	}{{p.USDPerMonth, "a month"}, {p.USDPerGiBMonth, "per GiB-month"}, {p.USDPerIOPSMonth, fmt.Sprintf("per IOPS-month above %g", p.FreeIOPS)}, {p.USDPerTputMonth, fmt.Sprintf("per throughput unit-month above %g (the family's unit)", p.FreeTput)}, {p.USDPerHour, "an hour"}} {
		if x.v > 0 {
			parts = append(parts, units.USD(x.v)+" "+x.unit)
		}
	}
	s := strings.Join(parts, ", ") + fmt.Sprintf(" (%s, %s; %s)", p.Region, p.AsOf, p.Source)
	if p.Note != "" {
		s += ": " + p.Note
	}
	return s
}

// BurstLine describes a burst allowance in one line.
func BurstLine(b *BurstInfo) string {
	var parts []string
	if b.IOPS > 0 {
		parts = append(parts, units.Published(math.Round(b.IOPS))+" IOPS")
	}
	if b.BWBytes > 0 {
		parts = append(parts, units.MB(b.BWBytes)+" MB/s")
	}
	s := strings.Join(parts, ", ")
	switch {
	case b.OptIn:
		s += " when on-demand bursting is enabled (billed, no time limit)"
	case b.Seconds > 0:
		s += ", " + units.Span(b.Seconds, "unlimited") + " from a full bucket"
	}
	s += " (" + b.Model
	if b.StartsFull {
		s += "; a new disk starts with a full bucket"
	}
	if b.BucketIOs > 0 {
		s += fmt.Sprintf("; bucket %s IOs", units.Published(b.BucketIOs))
	}
	if b.BucketBytes > 0 {
		s += fmt.Sprintf("; bucket %s GB", units.Published(b.BucketBytes/1e9))
	}
	return s + ")"
}
