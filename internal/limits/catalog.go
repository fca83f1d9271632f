package limits

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// SchemaV1 names the catalog format this package reads.
const SchemaV1 = "iolens.catalog/v1"

//go:embed catalog.yaml
var embedded []byte

// Catalog is the whole cloud catalog: where each figure comes from, the
// providers' rules, disk families and VM sizes.
type Catalog struct {
	Schema     string               `yaml:"schema" json:"schema"`
	Researched string               `yaml:"researched" json:"researched"`
	Sources    map[string]Source    `yaml:"sources" json:"sources"`
	Providers  map[string]*Provider `yaml:"providers" json:"providers"`
	Families   []*Family            `yaml:"families" json:"families"`
	VMs        []*VM                `yaml:"vms" json:"vms"`
	// Prices are list prices, each with its region, date and source.
	Prices []*PriceEntry `yaml:"prices" json:"prices"`
}

// Source is one document a figure was taken from.
type Source struct {
	Title  string `yaml:"title" json:"title"`
	URL    string `yaml:"url" json:"url,omitempty"`
	Repo   string `yaml:"repo" json:"repo,omitempty"`
	Path   string `yaml:"path" json:"path,omitempty"`
	Commit string `yaml:"commit" json:"commit,omitempty"`
	Date   string `yaml:"date" json:"date,omitempty"`
	// Note says what the source is when it has no address.
	Note string `yaml:"note" json:"note,omitempty"`
	// ThirdParty marks a source that is not the provider's own (a blog,
	// a calculator site): its prices are shown as such.
	ThirdParty bool `yaml:"third_party" json:"third_party,omitempty"`
}

// Provider holds a cloud's rules that apply across its families.
type Provider struct {
	Name     string `yaml:"name" json:"name"`
	SizeUnit string `yaml:"size_unit" json:"size_unit"`
	// SizeAsGiven: the provider's size figure is taken as written, whether
	// the user says GB or GiB (IBM: a 300Gi claim is a 300 GB volume).
	SizeAsGiven  bool   `yaml:"size_as_given" json:"size_as_given,omitempty"`
	DefaultCache string `yaml:"default_cache" json:"default_cache,omitempty"`
	// VolumeShare and BootVolumeMbps are the IBM VSI bandwidth split.
	VolumeShare    float64 `yaml:"volume_share" json:"volume_share,omitempty"`
	BootVolumeMbps float64 `yaml:"boot_volume_mbps" json:"boot_volume_mbps,omitempty"`
	// PriceRegion is the reference region whose list prices iolens
	// prefers when the catalog holds several.
	PriceRegion string `yaml:"price_region" json:"price_region"`
	// PricesFrom starts the provider's current price era (YYYY or
	// YYYY-MM): prices dated before it are used only when a date is asked
	// for (--price-as-of, a dated spec), so that one table never ranks a
	// 2016 price beside a 2026 one.
	PricesFrom string   `yaml:"prices_from" json:"prices_from"`
	Notes      string   `yaml:"notes" json:"notes"`
	SourceKeys []string `yaml:"sources" json:"sources"`
}

// Family is one kind of disk or file share (azure:premium-ssd, aws:gp3).
// Editions are dated versions of its limits, newest first.
type Family struct {
	ID       string     `yaml:"id" json:"id"`
	Provider string     `yaml:"provider" json:"provider"`
	Kind     string     `yaml:"kind" json:"kind"` // disk or file
	Name     string     `yaml:"name" json:"name"`
	Aliases  []string   `yaml:"aliases" json:"aliases,omitempty"`
	Editions []*Edition `yaml:"editions" json:"editions"`
	// Latency is the family's typical latency, sourced or marked as an
	// assumption; an edition may carry its own.
	Latency *Latency `yaml:"latency" json:"latency"`
	// Attach limits the VM sizes the family may be used with (pd-extreme:
	// N2 with 64 or more vCPUs, M2, M3); nil when the provider states no
	// rule.
	Attach *AttachRule `yaml:"attach" json:"attach,omitempty"`
	// PriceGap says why the catalog holds no price for the family, when
	// it holds none: a family with neither is refused by the tests.
	PriceGap string `yaml:"price_gap" json:"price_gap,omitempty"`
}

// AttachRule is a provider's rule on which machine series (and how
// large) a family may be used with.
type AttachRule struct {
	// Series lists the machine series that may use the family; MinVCPU
	// the fewest vCPUs a series needs for it.
	Series     []string       `yaml:"series" json:"series"`
	MinVCPU    map[string]int `yaml:"min_vcpu" json:"min_vcpu,omitempty"`
	Basis      string         `yaml:"basis" json:"basis"`
	SourceKeys []string       `yaml:"sources" json:"sources"`
}

// Latency is what a family's IO takes at queue depth 1, as a low-high
// band in milliseconds: a measured or published figure, a published bound
// read as a band, or an assumption (Assumed) where nothing is published.
type Latency struct {
	TypicalMs []float64 `yaml:"typical_ms" json:"typical_ms"`
	// FsyncP99Ms is a measured p99 band of small-write fdatasync; empty
	// when none is measured (the model then derives one).
	FsyncP99Ms []float64 `yaml:"fsync_p99_ms" json:"fsync_p99_ms,omitempty"`
	Assumed    bool      `yaml:"assumed" json:"assumed,omitempty"`
	// Fitted names the seed the typical band was fitted to (and
	// FsyncFitted the fsync band's): that seed's figure is then no
	// prediction of the model.
	Fitted      string `yaml:"fitted" json:"fitted,omitempty"`
	FsyncFitted string `yaml:"fsync_fitted" json:"fsync_fitted,omitempty"`
	// Basis says what the figures rest on, in a sentence.
	Basis      string   `yaml:"basis" json:"basis"`
	FsyncBasis string   `yaml:"fsync_basis" json:"fsync_basis,omitempty"`
	SourceKeys []string `yaml:"sources" json:"sources,omitempty"`
}

// Edition is the family's limits over one period. From and To are dates
// (YYYY or YYYY-MM) of the documents that show them; an empty To means
// current.
type Edition struct {
	From string `yaml:"from" json:"from"`
	To   string `yaml:"to" json:"to,omitempty"`
	// Unit is the throughput unit: "MB/s" (10^6 B/s) or "MiB/s" (2^20).
	Unit string `yaml:"unit" json:"unit"`
	// IOUnitKiB: IOs larger than this count as several IOs against the
	// IOPS limit. 0 when the provider states no such rule.
	IOUnitKiB float64 `yaml:"io_unit_kib" json:"io_unit_kib,omitempty"`
	// NominalIOKiB is the IO size at which the IOPS figure is defined.
	NominalIOKiB float64 `yaml:"nominal_io_kib" json:"nominal_io_kib,omitempty"`
	// CachingBelowGiB: host caching is possible on disks smaller than
	// this; 0 means no host caching.
	CachingBelowGiB float64 `yaml:"caching_below_gib" json:"caching_below_gib,omitempty"`
	SLA             string  `yaml:"sla" json:"sla,omitempty"`

	Tiers   []*Tier   `yaml:"tiers" json:"tiers,omitempty"`
	SizeGiB *Range    `yaml:"size_gib" json:"size_gib,omitempty"`
	IOPS    *Quantity `yaml:"iops" json:"iops,omitempty"`
	Tput    *Quantity `yaml:"tput" json:"tput,omitempty"`
	Burst   *Burst    `yaml:"burst" json:"burst,omitempty"`
	// VMType names the per-VM limit bucket (GCP persistent disk types).
	VMType string `yaml:"vm_type" json:"vm_type,omitempty"`

	SourceKeys []string `yaml:"sources" json:"sources"`
	Unverified []string `yaml:"unverified" json:"unverified,omitempty"`
	Note       string   `yaml:"note" json:"note,omitempty"`
	// Latency overrides the family's for this edition.
	Latency *Latency `yaml:"latency" json:"latency,omitempty"`
}

// Current reports whether the edition is in force today.
func (e *Edition) Current() bool { return e.To == "" }

// Tier is one fixed size of a tiered family (Azure P15).
type Tier struct {
	Name    string  `yaml:"name" json:"name"`
	SizeGiB float64 `yaml:"size_gib" json:"size_gib"`
	IOPS    float64 `yaml:"iops" json:"iops"`
	Tput    float64 `yaml:"tput" json:"tput"`
	Burst   *Burst  `yaml:"burst" json:"burst,omitempty"`
}

// Range bounds a size in GiB (or the provider's unit).
type Range struct {
	Min float64 `yaml:"min" json:"min"`
	Max float64 `yaml:"max" json:"max"`
}

// Quantity is how an IOPS or throughput limit follows from the size (or,
// for provisioned families, what may be provisioned). All terms are
// optional; see Edition.eval for how they combine.
type Quantity struct {
	Value      float64   `yaml:"value" json:"value,omitempty"`
	Base       float64   `yaml:"base" json:"base,omitempty"`
	PerGiB     float64   `yaml:"per_gib" json:"per_gib,omitempty"`
	PerTiB     float64   `yaml:"per_tib" json:"per_tib,omitempty"`
	CeilPerGiB []float64 `yaml:"ceil_per_gib" json:"ceil_per_gib,omitempty"`
	// PerTput derives IOPS from the throughput (Hyperdisk Throughput).
	PerTput float64 `yaml:"per_tput" json:"per_tput,omitempty"`
	Min     float64 `yaml:"min" json:"min,omitempty"`
	Max     float64 `yaml:"max" json:"max,omitempty"`
	// MinPerTiB raises a provisioned figure's floor with the size
	// (Hyperdisk Throughput: 10 MiB/s per TiB).
	MinPerTiB float64    `yaml:"min_per_tib" json:"min_per_tib,omitempty"`
	Steps     []SizeStep `yaml:"steps" json:"steps,omitempty"`
	// FromIOPS derives throughput from the IOPS limit.
	FromIOPS []IOPSStep `yaml:"from_iops" json:"from_iops,omitempty"`
	// Provisioned: the user picks the figure within bounds.
	Provisioned bool    `yaml:"provisioned" json:"provisioned,omitempty"`
	Default     float64 `yaml:"default" json:"default,omitempty"`
	MaxPerGiB   float64 `yaml:"max_per_gib" json:"max_per_gib,omitempty"`
	MaxPerIOPS  float64 `yaml:"max_per_iops" json:"max_per_iops,omitempty"`
	Bands       []Band  `yaml:"bands" json:"bands,omitempty"`
	// Write overrides the figure for writes.
	Write *Quantity `yaml:"write" json:"write,omitempty"`
}

// SizeStep is a value that applies up to a size.
type SizeStep struct {
	ToGiB float64 `yaml:"to_gib" json:"to_gib,omitempty"`
	Value float64 `yaml:"value" json:"value"`
	Burst float64 `yaml:"burst" json:"burst,omitempty"`
}

// IOPSStep derives throughput from IOPS up to an IOPS figure: PerIOPS is
// in the edition's unit per IOPS, KiB is the same as an IO size.
type IOPSStep struct {
	ToIOPS  float64 `yaml:"to_iops" json:"to_iops,omitempty"`
	PerIOPS float64 `yaml:"per_iops" json:"per_iops,omitempty"`
	KiB     float64 `yaml:"kib" json:"kib,omitempty"`
	Max     float64 `yaml:"max" json:"max,omitempty"`
}

// Band bounds a provisioned figure up to a size.
type Band struct {
	ToGiB float64 `yaml:"to_gib" json:"to_gib"`
	Min   float64 `yaml:"min" json:"min,omitempty"`
	Max   float64 `yaml:"max" json:"max"`
}

// Burst describes a disk's or VM's burst allowance.
type Burst struct {
	// Model is "credit" (a bucket that drains above the baseline and
	// refills below it), "on-demand" (billed, unlimited, opt-in) or
	// "instance" (AWS: 30 min at least once every 24 h).
	Model      string  `yaml:"model" json:"model"`
	IOPS       float64 `yaml:"iops" json:"iops,omitempty"`
	Tput       float64 `yaml:"tput" json:"tput,omitempty"`
	Seconds    float64 `yaml:"seconds" json:"seconds,omitempty"`
	StartsFull bool    `yaml:"starts_full" json:"starts_full,omitempty"`
	OptIn      bool    `yaml:"opt_in" json:"opt_in,omitempty"`
	// BelowGiB: only disks smaller than this burst (gp2).
	BelowGiB  float64 `yaml:"below_gib" json:"below_gib,omitempty"`
	BucketIOs float64 `yaml:"bucket_ios" json:"bucket_ios,omitempty"`
	// BucketBytesPerTiB sizes a throughput bucket by volume size (st1).
	BucketBytesPerTiB float64   `yaml:"bucket_bytes_per_tib" json:"bucket_bytes_per_tib,omitempty"`
	IOPSFormula       *Quantity `yaml:"iops_formula" json:"iops_formula,omitempty"`
	TputFormula       *Quantity `yaml:"tput_formula" json:"tput_formula,omitempty"`
	// From dates the first document that shows the burst (VM bursting
	// came years after the sizes): a spec dated earlier gets none.
	From string `yaml:"from" json:"from,omitempty"`
}

// VM is one VM or instance size and its disk limits.
type VM struct {
	ID       string  `yaml:"id" json:"id"`
	Provider string  `yaml:"provider" json:"provider"`
	VCPU     int     `yaml:"vcpu" json:"vcpu"`
	Unit     string  `yaml:"unit" json:"unit,omitempty"`
	IOKiB    float64 `yaml:"io_kib" json:"io_kib,omitempty"`
	// Uncached are the limits for remote disk IO without host caching
	// (Azure), the EBS baseline (AWS).
	Uncached *Pair  `yaml:"uncached" json:"uncached,omitempty"`
	Burst    *Burst `yaml:"burst" json:"burst,omitempty"`
	Cached   *Pair  `yaml:"cached" json:"cached,omitempty"`
	Caching  bool   `yaml:"caching" json:"caching,omitempty"`
	// PerType are GCP's per-VM limits by disk type.
	PerType map[string]*Pair `yaml:"per_type" json:"per_type,omitempty"`
	// BandwidthMbps is an IBM VSI's total bandwidth.
	BandwidthMbps float64 `yaml:"bandwidth_mbps" json:"bandwidth_mbps,omitempty"`
	// NetworkMbps is the VM's expected network bandwidth (Mbps, 10^6
	// bit/s): the cap on file shares mounted over NFS or SMB.
	NetworkMbps float64 `yaml:"network_mbps" json:"network_mbps,omitempty"`
	// NetworkEarlier are figures of earlier documents, each until a date.
	NetworkEarlier []DatedMbps `yaml:"network_earlier" json:"network_earlier,omitempty"`
	// NetworkNote says why a size has no network figure.
	NetworkNote string `yaml:"network_note" json:"network_note,omitempty"`
	// NetworkBurstMbps is the "up to" network bandwidth of a size that
	// bursts on network credits (AWS "up to 10 Gbps"): not sustained, so
	// a share is never judged sustained on it.
	NetworkBurstMbps    float64  `yaml:"network_burst_mbps" json:"network_burst_mbps,omitempty"`
	NetworkBurstSources []string `yaml:"network_burst_sources" json:"network_burst_sources,omitempty"`
	// Series is the machine series (n2, e2) attach rules name; for GCP
	// it defaults to the id's first word.
	Series string `yaml:"series" json:"series,omitempty"`
	// From dates the first document in the catalog that shows the size.
	From       string   `yaml:"from" json:"from,omitempty"`
	SourceKeys []string `yaml:"sources" json:"sources"`
	Unverified []string `yaml:"unverified" json:"unverified,omitempty"`
	Note       string   `yaml:"note" json:"note,omitempty"`
}

// DatedMbps is a network figure that applied until To (YYYY or YYYY-MM).
type DatedMbps struct {
	To         string   `yaml:"to" json:"to"`
	Mbps       float64  `yaml:"mbps" json:"mbps"`
	SourceKeys []string `yaml:"sources" json:"sources"`
}

// NetworkAt is the VM's network bandwidth in Mbps at date ("" for
// today), and the sources of that figure.
func (v *VM) NetworkAt(date string) (float64, []string) {
	if date != "" {
		for _, n := range v.NetworkEarlier {
			if date < n.To {
				return n.Mbps, n.SourceKeys
			}
		}
	}
	return v.NetworkMbps, v.SourceKeys
}

// BurstAt is the VM's burst allowance at date ("" for today): nil before
// the first document that shows it.
func (v *VM) BurstAt(date string) *Burst {
	if v.Burst == nil || date != "" && v.Burst.From != "" && date < v.Burst.From {
		return nil
	}
	return v.Burst
}

// Pair is an IOPS and throughput limit, with an optional write override.
type Pair struct {
	IOPS     float64 `yaml:"iops" json:"iops"`
	Tput     float64 `yaml:"tput" json:"tput"`
	CacheGiB float64 `yaml:"cache_gib" json:"cache_gib,omitempty"`
	Write    *Pair   `yaml:"write" json:"write,omitempty"`
}

// forDir returns the pair that applies to reads or writes.
func (p *Pair) forDir(write bool) *Pair {
	if write && p.Write != nil {
		return p.Write
	}
	return p
}

var (
	defaultOnce sync.Once
	defaultCat  *Catalog
	defaultErr  error
)

// Default returns the catalog built into iolens.
func Default() (*Catalog, error) {
	defaultOnce.Do(func() { defaultCat, defaultErr = Load(bytes.NewReader(embedded)) })
	return defaultCat, defaultErr
}

// MustDefault is Default for callers that cannot handle an error; the
// embedded catalog is validated by the package tests.
func MustDefault() *Catalog {
	c, err := Default()
	if err != nil {
		panic(err)
	}
	return c
}

// Load reads and validates a catalog. Unknown fields are errors, so that
// a typo in a figure's name cannot silently drop it.
func Load(r io.Reader) (*Catalog, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var c Catalog
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks the catalog's internal consistency: known schema,
// sources that exist, units that say their base, sane figures.
func (c *Catalog) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Schema != SchemaV1 {
		bad("schema %q, want %q", c.Schema, SchemaV1)
	}
	srcs := func(where string, keys []string) {
		if len(keys) == 0 {
			bad("%s: no sources", where)
		}
		for _, k := range keys {
			if _, ok := c.Sources[k]; !ok {
				bad("%s: unknown source %q", where, k)
			}
		}
	}
	for k, s := range c.Sources {
		if s.Title == "" || s.URL == "" && s.Repo == "" && s.Note == "" {
			bad("source %s: needs a title and a url, repo or note", k)
		}
	}
	for name, p := range c.Providers {
		srcs("provider "+name, p.SourceKeys)
		if p.PriceRegion == "" {
			bad("provider %s: no price_region", name)
		}
		if p.SizeUnit != "GiB" && p.SizeUnit != "GB" {
			bad("provider %s: size_unit %q", name, p.SizeUnit)
		}
		if !ValidPriceDate(p.PricesFrom) {
			bad("provider %s: prices_from %q is not YYYY or YYYY-MM", name, p.PricesFrom)
		}
	}
	checkLatency := func(where string, l *Latency) {
		if len(l.TypicalMs) != 2 || !(l.TypicalMs[0] > 0) || l.TypicalMs[1] < l.TypicalMs[0] || l.TypicalMs[1] > 1e4 {
			bad("%s: latency typical_ms must be [low, high] in ms, 0 < low <= high", where)
		}
		if len(l.FsyncP99Ms) > 0 && (len(l.FsyncP99Ms) != 2 || !(l.FsyncP99Ms[0] > 0) || l.FsyncP99Ms[1] < l.FsyncP99Ms[0]) {
			bad("%s: latency fsync_p99_ms must be [low, high]", where)
		}
		if l.Basis == "" || len(l.FsyncP99Ms) > 0 && l.FsyncBasis == "" {
			bad("%s: latency needs a basis (and an fsync_basis for a measured fsync band)", where)
		}
		if !l.Assumed || len(l.SourceKeys) > 0 {
			srcs(where+" latency", l.SourceKeys)
		}
	}
	ids := map[string]bool{}
	names := map[string]string{}
	for _, f := range c.Families {
		where := "family " + f.ID
		if ids[f.ID] {
			bad("%s: duplicate id", where)
		}
		ids[f.ID] = true
		if _, ok := c.Providers[f.Provider]; !ok || !strings.HasPrefix(f.ID, f.Provider+":") {
			bad("%s: provider %q unknown or not the id's prefix", where, f.Provider)
		}
		if f.Kind != "disk" && f.Kind != "file" {
			bad("%s: kind %q", where, f.Kind)
		}
		for _, a := range append([]string{strings.TrimPrefix(f.ID, f.Provider+":")}, f.Aliases...) {
			k := f.Provider + ":" + strings.ToLower(a)
			if other, dup := names[k]; dup && other != f.ID {
				bad("%s: alias %q also names %s", where, a, other)
			}
			names[k] = f.ID
		}
		if len(f.Editions) == 0 {
			bad("%s: no editions", where)
		}
		if a := f.Attach; a != nil {
			if len(a.Series) == 0 || a.Basis == "" {
				bad("%s: attach needs series and a basis", where)
			}
			srcs(where+" attach", a.SourceKeys)
		}
		if f.Latency == nil {
			bad("%s: no latency (give a sourced figure or an assumption marked assumed: true)", where)
		} else {
			checkLatency(where, f.Latency)
		}
		current := 0
		for i, e := range f.Editions {
			ew := fmt.Sprintf("%s edition %s", where, e.From)
			if e.Current() {
				current++
				if i != 0 {
					bad("%s: the current edition must come first", ew)
				}
			}
			if i > 0 && e.From > f.Editions[i-1].From {
				bad("%s: editions must be newest first", ew)
			}
			if e.To != "" && e.To < e.From {
				bad("%s: to %s before from", ew, e.To)
			}
			if e.Unit != "MB/s" && e.Unit != "MiB/s" {
				bad("%s: unit %q must be MB/s or MiB/s", ew, e.Unit)
			}
			srcs(ew, e.SourceKeys)
			if e.Latency != nil {
				checkLatency(ew, e.Latency)
			}
			switch {
			case len(e.Tiers) > 0:
				if e.IOPS != nil || e.Tput != nil || e.SizeGiB != nil {
					bad("%s: tiers exclude iops/tput/size formulas", ew)
				}
				for j, t := range e.Tiers {
					if t.Name == "" || t.SizeGiB <= 0 || t.IOPS <= 0 || t.Tput <= 0 {
						bad("%s: tier %q needs a size, iops and tput", ew, t.Name)
					}
					if j > 0 && t.SizeGiB <= e.Tiers[j-1].SizeGiB {
						bad("%s: tier %s not larger than the one before", ew, t.Name)
					}
					checkBurst(bad, ew+" tier "+t.Name, t.Burst, t.IOPS, t.Tput)
				}
			case e.IOPS == nil || e.Tput == nil:
				bad("%s: needs tiers, or iops and tput", ew)
			default:
				if e.SizeGiB != nil && (e.SizeGiB.Min <= 0 || e.SizeGiB.Max < e.SizeGiB.Min) {
					bad("%s: size range %v", ew, *e.SizeGiB)
				}
				if e.IOPS.PerTput > 0 && e.Tput.FromIOPS != nil {
					bad("%s: iops from tput and tput from iops", ew)
				}
				checkBurst(bad, ew, e.Burst, 0, 0)
			}
		}
		if current != 1 {
			bad("%s: %d current editions, want 1", where, current)
		}
	}
	vms := map[string]bool{}
	for _, v := range c.VMs {
		where := "vm " + v.ID
		if vms[strings.ToLower(v.ID)] {
			bad("%s: duplicate id", where)
		}
		vms[strings.ToLower(v.ID)] = true
		if _, ok := c.Providers[v.Provider]; !ok || !strings.HasPrefix(v.ID, v.Provider+":") {
			bad("%s: provider %q unknown or not the id's prefix", where, v.Provider)
		}
		srcs(where, v.SourceKeys)
		switch {
		case v.BandwidthMbps > 0:
		case v.Uncached != nil || len(v.PerType) > 0:
			if v.Unit != "MB/s" && v.Unit != "MiB/s" {
				bad("%s: unit %q must be MB/s or MiB/s", where, v.Unit)
			}
		default:
			bad("%s: no limits", where)
		}
		if v.Uncached != nil {
			checkBurst(bad, where, v.Burst, v.Uncached.IOPS, v.Uncached.Tput)
		}
		if v.NetworkBurstMbps > 0 {
			srcs(where+" network burst", v.NetworkBurstSources)
		}
		if v.NetworkMbps <= 0 && v.BandwidthMbps <= 0 && v.NetworkNote == "" {
			bad("%s: no network bandwidth and no network_note saying why", where)
		}
		for _, n := range v.NetworkEarlier {
			if !ValidPriceDate(n.To) || n.Mbps <= 0 {
				bad("%s: network_earlier needs to: YYYY[-MM] and mbps", where)
			}
			srcs(where+" network_earlier", n.SourceKeys)
		}
		if v.From != "" && !ValidPriceDate(v.From) || v.Burst != nil && v.Burst.From != "" && !ValidPriceDate(v.Burst.From) {
			bad("%s: from dates are YYYY or YYYY-MM", where)
		}
	}
	for i, p := range c.Prices {
		if err := c.checkPrice(p, c.Sources); err != nil {
			bad("price %d (%s%s %s): %v", i+1, p.Family, p.VM, p.Tier, err)
		}
	}
	return errors.Join(errs...)
}

func checkBurst(bad func(string, ...any), where string, b *Burst, iops, tput float64) {
	if b == nil {
		return
	}
	switch b.Model {
	case "credit", "on-demand", "instance":
	default:
		bad("%s: burst model %q", where, b.Model)
	}
	if b.IOPS > 0 && b.IOPS < iops || b.Tput > 0 && b.Tput < tput {
		bad("%s: burst below baseline", where)
	}
	if b.Model != "on-demand" && b.Seconds == 0 && b.BucketIOs == 0 && b.BucketBytesPerTiB == 0 && b.IOPSFormula == nil {
		bad("%s: a %s burst needs a duration or a bucket", where, b.Model)
	}
}

// Family looks a family up by id or alias ("azure:premium-ssd",
// "azure:Premium_LRS"), case-insensitively.
func (c *Catalog) Family(provider, name string) *Family {
	name = strings.ToLower(name)
	for _, f := range c.Families {
		if f.Provider != provider {
			continue
		}
		if strings.ToLower(strings.TrimPrefix(f.ID, provider+":")) == name {
			return f
		}
		for _, a := range f.Aliases {
			if strings.ToLower(a) == name {
				return f
			}
		}
	}
	return nil
}

// VM looks a VM size up by id, case-insensitively; the provider prefix
// may be left out when the name is unique.
func (c *Catalog) VM(id string) *VM {
	l := strings.ToLower(id)
	var hit *VM
	for _, v := range c.VMs {
		vid := strings.ToLower(v.ID)
		if vid == l {
			return v
		}
		if _, name, _ := strings.Cut(vid, ":"); name == l {
			if hit != nil {
				return nil
			}
			hit = v
		}
	}
	if hit == nil && strings.Contains(l, ".") {
		// IBM's own CLI and node labels write flavours with a dot
		// (bx2.16x64); the VPC API and this catalog use a dash.
		if v := c.VM(strings.Replace(l, ".", "-", 1)); v != nil && v.Provider == "ibm" {
			return v
		}
	}
	if prov, name, ok := strings.Cut(l, ":"); hit == nil && !strings.HasPrefix(name, "standard_") && (!ok || prov == "azure") {
		// Azure sizes are written without their "Standard_" too
		// (DS2_v2, D8s_v3), as the seeds and the portal's pickers do.
		if !ok {
			name = l
		}
		if v := c.VM("azure:standard_" + name); v != nil {
			return v
		}
	}
	return hit
}

// ProviderNames lists the providers, sorted.
func (c *Catalog) ProviderNames() []string {
	var out []string
	for k := range c.Providers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DiskNames lists the disk specs that need no size: every family's id,
// and each of its current tiers as the spec that reads back as it
// (provider:tier, or family:tier where the tier's name also names
// something else).
func (c *Catalog) DiskNames() []string {
	var vals []string
	for _, f := range c.Families {
		vals = append(vals, f.ID)
		for _, t := range f.Editions[0].Tiers {
			if d, err := c.ParseDisk(f.ID + ":" + t.Name); err == nil {
				vals = append(vals, d.Spec)
			}
		}
	}
	return vals
}

// VMNames lists the VM ids of a provider ("" for all).
func (c *Catalog) VMNames(provider string) []string {
	var out []string
	for _, v := range c.VMs {
		if provider == "" || v.Provider == provider {
			out = append(out, v.ID)
		}
	}
	return out
}

// FamilyNames lists the family ids of a provider ("" for all).
func (c *Catalog) FamilyNames(provider string) []string {
	var out []string
	for _, f := range c.Families {
		if provider == "" || f.Provider == provider {
			out = append(out, f.ID)
		}
	}
	return out
}

// Edition returns the edition in force at date (YYYY or YYYY-MM; "" for
// today).
func (f *Family) Edition(date string) *Edition {
	if date == "" {
		return f.Editions[0]
	}
	for _, e := range f.Editions {
		if e.From <= date && (e.To == "" || date < e.To) {
			return e
		}
	}
	// Before the oldest edition: the oldest is the best we know.
	old := f.Editions[len(f.Editions)-1]
	if date < old.From {
		return old
	}
	return nil
}
