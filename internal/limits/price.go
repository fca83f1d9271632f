package limits

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/units"
	"go.yaml.in/yaml/v3"
)

// PriceEntry is one list price taken from a source: a fixed monthly price
// for a tier, per-unit monthly rates for sized and provisioned disks and
// shares, or an hourly price for a VM size. Every entry names its region,
// the date the figure applies to and its source; entries without them are
// refused, so no price is shown that cannot be traced.
type PriceEntry struct {
	// Family and Tier select a disk or share (Tier only for tiered
	// families); VM selects a VM size. Exactly one of Family and VM.
	Family string `yaml:"family" json:"family,omitempty"`
	Tier   string `yaml:"tier" json:"tier,omitempty"`
	VM     string `yaml:"vm" json:"vm,omitempty"`

	USDPerMonth     float64 `yaml:"usd_per_month" json:"usd_per_month,omitempty"`
	USDPerGiBMonth  float64 `yaml:"usd_per_gib_month" json:"usd_per_gib_month,omitempty"`
	USDPerIOPSMonth float64 `yaml:"usd_per_iops_month" json:"usd_per_iops_month,omitempty"`
	// IOPSTiers price provisioned IOPS in bands instead (io2: lower
	// rates above 32,000 and 64,000 IOPS).
	IOPSTiers []PriceTier `yaml:"iops_tiers" json:"iops_tiers,omitempty"`
	// FreeIOPS and FreeTput are included in the capacity price (gp3: 3,000
	// IOPS and 125 MiB/s); only what is provisioned above them is billed.
	FreeIOPS        float64 `yaml:"free_iops" json:"free_iops,omitempty"`
	USDPerTputMonth float64 `yaml:"usd_per_tput_month" json:"usd_per_tput_month,omitempty"`
	FreeTput        float64 `yaml:"free_tput" json:"free_tput,omitempty"`
	USDPerHour      float64 `yaml:"usd_per_hour" json:"usd_per_hour,omitempty"`

	Region string `yaml:"region" json:"region"`
	// AsOf is the date the price applies to (YYYY, YYYY-MM or YYYY-MM-DD).
	AsOf   string `yaml:"as_of" json:"as_of"`
	Source string `yaml:"source" json:"source"`
	Note   string `yaml:"note" json:"note,omitempty"`
	// User marks entries from a --price-file; they win over the catalog's.
	User bool `yaml:"-" json:"user,omitempty"`
}

// PriceTier is the rate for provisioned IOPS up to ToIOPS (0: no upper
// end; only the last tier).
type PriceTier struct {
	ToIOPS          float64 `yaml:"to_iops" json:"to_iops,omitempty"`
	USDPerIOPSMonth float64 `yaml:"usd_per_iops_month" json:"usd_per_iops_month"`
}

// iopsMonth is what iops provisioned IOPS cost a month, above the free
// ones.
func (e *PriceEntry) iopsMonth(iops float64) float64 {
	billed := math.Max(0, iops-e.FreeIOPS)
	if len(e.IOPSTiers) == 0 {
		return e.USDPerIOPSMonth * billed
	}
	var sum, prev float64
	for _, t := range e.IOPSTiers {
		upto := t.ToIOPS
		if upto == 0 {
			upto = math.Inf(1)
		}
		if n := math.Min(billed, upto) - prev; n > 0 {
			sum += n * t.USDPerIOPSMonth
		}
		prev = upto
	}
	return sum
}

// pricesIOPS reports whether the entry prices provisioned IOPS.
func (e *PriceEntry) pricesIOPS() bool { return e.USDPerIOPSMonth > 0 || len(e.IOPSTiers) > 0 }

// Price is what a disk, share or VM costs, with where, when and from
// which document. Its JSON form carries exactly one of usd_per_month and
// usd_per_hour.
type Price struct {
	USDPerMonth float64
	USDPerHour  float64
	// Rates are the per-unit rates, for a price with no monthly total
	// (NoTotal: a sized family priced without its size).
	Rates   string
	NoTotal bool
	Region  string
	AsOf    string
	// Source is the citation: title and address of the document;
	// ThirdParty marks a source that is not the provider's own.
	Source     string
	ThirdParty bool
	Notes      []string
}

// MarshalJSON writes {"usd_per_month"|"usd_per_hour": N, "region", "as_of",
// "source"[, "notes"]}, or "rates" in place of the figure when there is no
// monthly total.
func (p Price) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	switch {
	case p.USDPerHour > 0:
		fmt.Fprintf(&b, `"usd_per_hour":%s`, strconv.FormatFloat(p.USDPerHour, 'f', -1, 64))
	case p.NoTotal:
		v, _ := json.Marshal(p.Rates)
		fmt.Fprintf(&b, `"rates":%s`, v)
	default:
		fmt.Fprintf(&b, `"usd_per_month":%s`, strconv.FormatFloat(round(p.USDPerMonth, 4), 'f', -1, 64))
	}
	for _, kv := range [][2]string{{"region", p.Region}, {"as_of", p.AsOf}, {"source", p.Source}} {
		v, _ := json.Marshal(kv[1])
		fmt.Fprintf(&b, `,%q:%s`, kv[0], v)
	}
	if p.ThirdParty {
		b.WriteString(`,"third_party":true`)
	}
	if len(p.Notes) > 0 {
		v, _ := json.Marshal(p.Notes)
		fmt.Fprintf(&b, `,"notes":%s`, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Cost is a disk's monthly price and what it buys: dollars a month per
// provisioned IOPS, per MB/s (10^6 B/s) and per GiB (the provider's size
// unit for IBM).
type Cost struct {
	Price       Price   `json:"price"`
	USDPerIOPS  float64 `json:"usd_per_iops_month"`
	USDPerMBps  float64 `json:"usd_per_mbps_month"`
	USDPerSize  float64 `json:"usd_per_gib_month"`
	PricedIOPS  float64 `json:"-"`
	PricedBWBps float64 `json:"-"`
}

// PerMeasured is what a measured rate cost: dollars a month per IOPS and
// per MB/s actually delivered (0 for a rate that was not measured), for
// comparing results on priced disks.
func (co *Cost) PerMeasured(iops, bwBytes float64) (usdPerIOPS, usdPerMBps float64) {
	if co == nil {
		return 0, 0
	}
	if iops > 0 {
		usdPerIOPS = co.Price.USDPerMonth / iops
	}
	if bwBytes > 0 {
		usdPerMBps = co.Price.USDPerMonth / (bwBytes / 1e6)
	}
	return usdPerIOPS, usdPerMBps
}

// PriceError is a bad price file; its hint says how to fix it.
type PriceError struct {
	Msg    string
	Advice string
}

func (e *PriceError) Error() string { return "price file: " + e.Msg }

// Hint says how to fix the file (hint.Of reads it).
func (e *PriceError) Hint() string { return e.Advice }

// maxPriceFile bounds what is read from a user's price file: a price list
// is a few kilobytes, so anything larger is a mistake.
const maxPriceFile = 1 << 20

// PriceFile is the format of --price-file: the user's own prices and the
// sources they come from (a source may be any text: "our 2026 contract").
type PriceFile struct {
	Sources map[string]Source `yaml:"sources" json:"sources"`
	Prices  []*PriceEntry     `yaml:"prices" json:"prices"`
}

// ParsePriceFile reads a user's price file (YAML or JSON) and checks
// every entry against the catalog: known families, tiers and VMs, finite
// non-negative figures, a region, a date and a source.
func (c *Catalog) ParsePriceFile(r io.Reader) (*PriceFile, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPriceFile+1))
	if err != nil {
		return nil, &PriceError{Msg: err.Error(), Advice: "give a readable file"}
	}
	if len(data) > maxPriceFile {
		return nil, &PriceError{Msg: fmt.Sprintf("larger than %d bytes", maxPriceFile), Advice: "a price file lists a few prices; split or trim it"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var pf PriceFile
	if err := dec.Decode(&pf); err != nil && !errors.Is(err, io.EOF) {
		return nil, &PriceError{Msg: err.Error(), Advice: `format: {sources: {mine: {title: "..."}}, prices: [{family: azure:premium-ssd, tier: P30, usd_per_month: 135.17, region: eastus, as_of: "2026-01", source: mine}]}`}
	}
	if len(pf.Prices) == 0 {
		return nil, &PriceError{Msg: "no prices", Advice: "list them under prices:"}
	}
	for k, s := range pf.Sources {
		if s.Title == "" {
			return nil, &PriceError{Msg: "source " + k + " has no title", Advice: "give each source a title (and a url or note)"}
		}
	}
	for i, p := range pf.Prices {
		if p == nil {
			return nil, &PriceError{Msg: fmt.Sprintf("price %d is empty", i+1), Advice: "remove it"}
		}
		p.User = true
		if err := c.checkPrice(p, pf.Sources); err != nil {
			return nil, &PriceError{Msg: fmt.Sprintf("price %d: %v", i+1, err), Advice: "every price needs family (and tier) or vm, a figure, region, as_of and a source listed under sources:"}
		}
	}
	return &pf, nil
}

// WithPrices returns a copy of the catalog whose price list starts with
// the file's entries (they win over the built-in ones) and whose sources
// include the file's. The receiver is not changed.
func (c *Catalog) WithPrices(pf *PriceFile) (*Catalog, error) {
	n := *c
	n.Sources = map[string]Source{}
	for k, s := range c.Sources {
		n.Sources[k] = s
	}
	for k, s := range pf.Sources {
		if _, dup := c.Sources[k]; dup {
			return nil, &PriceError{Msg: "source " + k + " is also a catalog source", Advice: "rename it"}
		}
		n.Sources[k] = s
	}
	n.Prices = append(append([]*PriceEntry{}, pf.Prices...), c.Prices...)
	return &n, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 && x < 1e9 }

// checkPrice validates one entry against the catalog and sources.
func (c *Catalog) checkPrice(p *PriceEntry, sources map[string]Source) error {
	for _, x := range []float64{p.USDPerMonth, p.USDPerGiBMonth, p.USDPerIOPSMonth, p.FreeIOPS, p.USDPerTputMonth, p.FreeTput, p.USDPerHour} {
		if !finite(x) {
			return fmt.Errorf("figures must be finite, non-negative and below 10^9")
		}
	}
	if len(p.IOPSTiers) > 0 {
		if p.USDPerIOPSMonth > 0 {
			return errors.New("give usd_per_iops_month or iops_tiers, not both")
		}
		for i, t := range p.IOPSTiers {
			last := i == len(p.IOPSTiers)-1
			if !finite(t.ToIOPS) || !finite(t.USDPerIOPSMonth) || t.USDPerIOPSMonth <= 0 ||
				!last && (t.ToIOPS <= 0 || i > 0 && t.ToIOPS <= p.IOPSTiers[i-1].ToIOPS) || last && t.ToIOPS != 0 && i > 0 && t.ToIOPS <= p.IOPSTiers[i-1].ToIOPS {
				return errors.New("iops_tiers: ascending to_iops (the last may be open), each with a usd_per_iops_month above 0")
			}
		}
	}
	switch {
	case p.Family != "" && p.VM != "":
		return errors.New("give family or vm, not both")
	case p.VM != "":
		if c.VM(p.VM) == nil {
			return fmt.Errorf("unknown VM %q", p.VM)
		}
		if p.USDPerHour <= 0 || p.USDPerMonth+p.USDPerGiBMonth+p.USDPerIOPSMonth+p.USDPerTputMonth > 0 || len(p.IOPSTiers) > 0 {
			return errors.New("a VM price is usd_per_hour only")
		}
	case p.Family != "":
		prov, name, _ := strings.Cut(p.Family, ":")
		f := c.Family(prov, name)
		if f == nil {
			return fmt.Errorf("unknown family %q", p.Family)
		}
		if p.USDPerHour > 0 {
			return errors.New("disk and share prices are monthly")
		}
		if p.USDPerMonth+p.USDPerGiBMonth+p.USDPerIOPSMonth+p.USDPerTputMonth <= 0 && len(p.IOPSTiers) == 0 {
			return errors.New("no price figure")
		}
		if p.Tier != "" {
			found := false
			for _, e := range f.Editions {
				for _, t := range e.Tiers {
					found = found || strings.EqualFold(t.Name, p.Tier)
				}
			}
			if !found {
				return fmt.Errorf("%s has no tier %q", f.ID, p.Tier)
			}
		}
	default:
		return errors.New("give family or vm")
	}
	if p.Region == "" || p.AsOf == "" || p.Source == "" {
		return errors.New("region, as_of and source are required")
	}
	if !validDate(p.AsOf) {
		return fmt.Errorf("as_of %q is not YYYY, YYYY-MM or YYYY-MM-DD", p.AsOf)
	}
	if _, ok := sources[p.Source]; !ok {
		return fmt.Errorf("source %q is not listed under sources", p.Source)
	}
	return nil
}

// ValidPriceDate reports whether s is a date prices can be asked at:
// YYYY or YYYY-MM (months 01-12).
func ValidPriceDate(s string) bool {
	return (len(s) == 4 || len(s) == 7 && s[5:] >= "01" && s[5:] <= "12") && validDate(s)
}

func validDate(s string) bool {
	if len(s) != 4 && len(s) != 7 && len(s) != 10 {
		return false
	}
	for i, r := range s {
		if i == 4 || i == 7 {
			if r != '-' {
				return false
			}
		} else if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// notAfter reports whether a price dated asOf was in force at date: asOf
// is compared at date's precision, so a 2019-08 price counts for "2019".
func notAfter(asOf, date string) bool {
	if date == "" {
		return true
	}
	if len(asOf) > len(date) {
		asOf = asOf[:len(date)]
	}
	return asOf <= date
}

// pick returns the best entry among candidates: the user's first, then
// the newest, then the provider's reference region.
func (c *Catalog) pick(cands []*PriceEntry, provider string) *PriceEntry {
	if len(cands) == 0 {
		return nil
	}
	ref := ""
	if p := c.Providers[provider]; p != nil {
		ref = p.PriceRegion
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.User != b.User {
			return a.User
		}
		if a.AsOf != b.AsOf {
			return a.AsOf > b.AsOf
		}
		return a.Region == ref && b.Region != ref
	})
	return cands[0]
}

func (c *Catalog) price(e *PriceEntry) Price {
	p := Price{USDPerMonth: e.USDPerMonth, USDPerHour: e.USDPerHour, Region: e.Region, AsOf: e.AsOf, Source: SourceRef(c.Sources[e.Source]), ThirdParty: c.Sources[e.Source].ThirdParty}
	if e.Note != "" {
		p.Notes = append(p.Notes, e.Note)
	}
	return p
}

// inEra reports whether a price may be used at date: the user's always;
// at a date, those in force then; with no date, those of the provider's
// current price era (dated from its prices_from on).
func (c *Catalog) inEra(e *PriceEntry, provider, date string) bool {
	if e.User {
		return notAfter(e.AsOf, date)
	}
	if date != "" {
		return notAfter(e.AsOf, date)
	}
	p := c.Providers[provider]
	return p == nil || p.PricesFrom == "" || e.AsOf >= p.PricesFrom
}

// diskEntries are the price entries that apply to a disk's family (and
// tier), of any date.
func (c *Catalog) diskEntries(d *Disk) []*PriceEntry {
	f := d.Family
	var out []*PriceEntry
	for _, e := range c.Prices {
		if !strings.EqualFold(e.Family, f.ID) {
			continue
		}
		if d.Tier != nil && e.Tier != "" && !strings.EqualFold(e.Tier, d.Tier.Name) || d.Tier == nil && e.Tier != "" {
			continue
		}
		if d.Tier != nil && e.Tier == "" && e.USDPerGiBMonth == 0 {
			continue
		}
		out = append(out, e)
	}
	return out
}

// DiskCost prices a resolved disk or share at date ("" for the newest
// price of the provider's current era; a dated disk spec such as
// azure:P70@2019 uses its own date). It returns nil when the catalog holds
// no such price; PriceGap says why.
func (c *Catalog) DiskCost(d *Disk, date string) *Cost {
	if date == "" {
		date = d.Date
	}
	f := d.Family
	var cands []*PriceEntry
	for _, e := range c.diskEntries(d) {
		if c.inEra(e, f.Provider, date) {
			cands = append(cands, e)
		}
	}
	e := c.pick(cands, f.Provider)
	if e == nil {
		return nil
	}
	p := c.price(e)
	ed := d.Edition
	size := d.SizeGiB
	if d.Tier != nil {
		size = d.Tier.SizeGiB
	}
	month := e.USDPerMonth + e.USDPerGiBMonth*size
	if ed.IOPS != nil && ed.IOPS.Provisioned {
		if e.pricesIOPS() {
			month += e.iopsMonth(d.Read.IOPS)
		} else if d.Read.IOPS > e.FreeIOPS {
			p.Notes = append(p.Notes, "no sourced rate for provisioned IOPS: the price covers capacity only")
		}
	}
	if ed.Tput != nil && ed.Tput.Provisioned {
		if e.USDPerTputMonth > 0 {
			month += e.USDPerTputMonth * math.Max(0, d.Tput-e.FreeTput)
		} else if d.Tput > e.FreeTput && (e.FreeTput > 0 || e.pricesIOPS()) {
			p.Notes = append(p.Notes, fmt.Sprintf("no sourced rate for provisioned throughput above %g %s: not included", e.FreeTput, ed.Unit))
		}
	}
	if size == 0 && e.USDPerGiBMonth > 0 {
		// A sized family with no size has rates, not a total.
		p.NoTotal, p.Rates = true, rates(e, ed.Unit)
		p.Notes = append(p.Notes, "no size given: no monthly total (give a size, e.g. "+f.ID+":100GiB)")
		return &Cost{Price: p}
	}
	p.USDPerMonth = month
	if !ed.Current() && date == "" {
		p.Notes = append(p.Notes, "today's price for a disk whose limits are dated "+ed.From)
	}
	co := &Cost{Price: p, PricedIOPS: d.Read.IOPS, PricedBWBps: d.Read.BWBytes}
	if d.Read.IOPS > 0 {
		co.USDPerIOPS = month / d.Read.IOPS
	}
	if d.Read.BWBytes > 0 {
		co.USDPerMBps = month / (d.Read.BWBytes / 1e6)
	}
	if size > 0 {
		co.USDPerSize = month / size
	}
	return co
}

// PriceGap says why DiskCost has no price for a disk at date: its only
// prices are of another era or date, or no source states one.
func (c *Catalog) PriceGap(d *Disk, date string) string {
	if date == "" {
		date = d.Date
	}
	all := c.diskEntries(d)
	name := d.Family.ID
	if d.Tier != nil {
		name = d.Family.Provider + ":" + d.Tier.Name
	}
	if len(all) == 0 {
		if d.Family.PriceGap != "" {
			return "no price for " + name + ": " + d.Family.PriceGap
		}
		return "no stored source states a price for " + name + " (give yours with --price-file)"
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].AsOf > all[j].AsOf })
	if date == "" {
		e := all[0]
		return fmt.Sprintf("no price for %s from %s on, the catalog's current prices for %s; the newest sourced is %s (%s): --price-as-of %s uses it",
			name, c.Providers[d.Family.Provider].PricesFrom, d.Family.Provider, priceFigure(e), e.AsOf, e.AsOf[:min(7, len(e.AsOf))])
	}
	old := all[len(all)-1]
	return fmt.Sprintf("no price for %s in force at %s; the oldest sourced is %s (%s)", name, date, priceFigure(old), old.AsOf)
}

// priceFigure is an entry's headline figure.
func priceFigure(e *PriceEntry) string {
	switch {
	case e.USDPerMonth > 0:
		return units.USD(e.USDPerMonth) + " a month"
	case e.USDPerHour > 0:
		return units.USD(e.USDPerHour) + " an hour"
	}
	return rates(e, "")
}

// rates lists an entry's per-unit rates.
func rates(e *PriceEntry, unit string) string {
	var parts []string
	if e.USDPerGiBMonth > 0 {
		parts = append(parts, "$"+units.Exact(e.USDPerGiBMonth)+" per GiB-month")
	}
	if e.USDPerIOPSMonth > 0 {
		parts = append(parts, "$"+units.Exact(e.USDPerIOPSMonth)+" per IOPS-month"+above(e.FreeIOPS))
	}
	for i, t := range e.IOPSTiers {
		band := " above " + units.Published(e.IOPSTiers[max(i-1, 0)].ToIOPS)
		if i == 0 {
			band = above(e.FreeIOPS)
		}
		if t.ToIOPS > 0 {
			band += " to " + units.Published(t.ToIOPS)
		}
		parts = append(parts, "$"+units.Exact(t.USDPerIOPSMonth)+" per IOPS-month"+band)
	}
	if e.USDPerTputMonth > 0 {
		u := "throughput unit"
		if unit != "" {
			u = unit
		}
		parts = append(parts, "$"+units.Exact(e.USDPerTputMonth)+" per "+u+"-month"+above(e.FreeTput))
	}
	return strings.Join(parts, ", ")
}

func above(free float64) string {
	if free > 0 {
		return " above " + units.Published(free)
	}
	return ""
}

// VMPrice returns a VM size's hourly price at date ("" for the newest of
// the provider's current era), or nil when none is sourced.
func (c *Catalog) VMPrice(v *VM, date string) *Price {
	var cands []*PriceEntry
	for _, e := range c.Prices {
		if strings.EqualFold(e.VM, v.ID) && c.inEra(e, v.Provider, date) {
			cands = append(cands, e)
		}
	}
	e := c.pick(cands, v.Provider)
	if e == nil {
		return nil
	}
	p := c.price(e)
	return &p
}

// SourceRef is a source as one line: title, then its address and date.
func SourceRef(s Source) string {
	ref := s.URL
	if ref == "" && s.Repo != "" {
		ref = s.Repo + ":" + s.Path
		if s.Commit != "" {
			ref += "@" + s.Commit[:min(12, len(s.Commit))]
		}
	}
	if ref == "" {
		ref = s.Note
	}
	if s.Date != "" {
		ref += " (" + s.Date + ")"
	}
	return s.Title + ", " + ref
}

// PriceRegions lists the regions the catalog holds prices for, of a
// provider ("" for all), sorted.
func (c *Catalog) PriceRegions(provider string) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range c.Prices {
		prov := e.VM
		if e.Family != "" {
			prov = e.Family
		}
		if p, _, _ := strings.Cut(prov, ":"); provider != "" && !strings.EqualFold(p, provider) {
			continue
		}
		if !seen[e.Region] {
			seen[e.Region] = true
			out = append(out, e.Region)
		}
	}
	sort.Strings(out)
	return out
}

// InRegion returns a copy of the catalog whose prices are only those of
// region (case-insensitive), so that one table never mixes regions; the
// receiver is not changed. The user's own prices are kept whatever their
// region.
func (c *Catalog) InRegion(region string) (*Catalog, error) {
	n := *c
	n.Prices = nil
	found := false
	for _, e := range c.Prices {
		if strings.EqualFold(e.Region, region) || e.User {
			n.Prices = append(n.Prices, e)
			found = found || !e.User
		}
	}
	if !found {
		return nil, &SpecError{Spec: region, Msg: "no stored price is for this region", Advice: "regions with stored prices: " + strings.Join(c.PriceRegions(""), ", ")}
	}
	return &n, nil
}
