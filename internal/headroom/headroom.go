package headroom

import (
	"context"
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist/promql"
)

// Schema names the version of the Report document.
const Schema = "iolens.headroom/v1"

// Where a volume's caps came from.
const (
	SourceExpect  = "--expect"
	SourceMapping = "mapping file"
	SourceHistory = "measured"
	SourceCatalog = "catalog"
)

// Cap is what a volume should deliver: sustained caps on combined
// (read+write) IOPS and bytes per second, a credit burst when it has one,
// and how the provider counts IOs.
type Cap struct {
	// Name is what was given or found: azure:P10, iops=500,bw=100MB.
	Name string `json:"name"`
	// Source is where the figure came from: --expect, mapping file,
	// measured (the history of a class) or catalog.
	Source string `json:"source"`
	// IOPS and BWBytes are the sustained caps (0: none of that kind).
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	// BurstIOPS, BurstBWBytes and BurstSeconds are the credit burst
	// (zero without one): the rates while credit lasts, and how long a
	// full bucket lasts at them.
	BurstIOPS    float64 `json:"burst_iops"`
	BurstBWBytes float64 `json:"burst_bw_bytes"`
	BurstSeconds float64 `json:"burst_s"`
	// IOUnitBytes: the provider counts an IO larger than this as
	// several (0: one IO is one IO).
	IOUnitBytes float64 `json:"io_unit_bytes"`
	// Disk is the catalog disk, when the cap is one (for prices and
	// recommendations).
	Disk *limits.Disk `json:"-"`
}

// bursts reports whether the cap has a credit bucket.
func (c *Cap) bursts() bool {
	return c != nil && c.BurstSeconds > 0 && (c.BurstIOPS > c.IOPS || c.BurstBWBytes > c.BWBytes)
}

// Rule gives a cap to the devices it matches: Instance "" matches every
// node exporter, Device "" every device. The most specific rule wins.
type Rule struct {
	Instance string
	Device   string
	// Claim names the volume (namespace/name) in the report.
	Claim string
	Cap   *Cap
	// Unknown says why Cap is nil (a class the catalog has no entry for).
	Unknown string
	// VolumeID is the provider's id of the volume (an EBS vol-...), for
	// its own counters.
	VolumeID string
	// OSDiskOf names the node whose OS disk the device is.
	OSDiskOf string
}

// rank orders where caps come from: --expect, then a mapping file, then
// what iolens measured, then the catalog (a rule that knows no cap
// last).
func (r Rule) rank() int {
	if r.Cap == nil {
		return -1
	}
	switch r.Cap.Source {
	case SourceExpect:
		return 3
	case SourceMapping:
		return 2
	case SourceHistory:
		return 1
	}
	return 0
}

func (r Rule) matches(inst, dev string) bool {
	return (r.Instance == "" || r.Instance == inst) && (r.Device == "" || r.Device == dev)
}

func (r Rule) weight() int {
	w := 0
	if r.Instance != "" {
		w += 2
	}
	if r.Device != "" {
		w++
	}
	return w
}

// Options say what to read and how to judge it.
type Options struct {
	// Selector picks the node exporter's series (--match).
	Selector promql.Selector
	From, To time.Time
	// Step is the resolution; 0 takes the scrape interval.
	Step time.Duration
	// Rules give each device its cap; a device no rule matches is listed
	// with its cap unknown.
	Rules []Rule
	// VMs are the VM sizes by instance; DefaultVM applies to the others
	// ("" for unknown).
	VMs       map[string]string
	DefaultVM string
	// Catalog prices disks and finds smaller ones; nil leaves
	// recommendations out.
	Catalog *limits.Catalog
	// Margin is the headroom a smaller disk must leave above the p99
	// (0.3: 30%).
	Margin float64
	// CreditStart is the share of a burst bucket assumed held when the
	// range starts (default 1: full, the state of a disk idle before).
	CreditStart float64
	// Measured, for FromCluster, gives a storage class's caps as iolens
	// measured them (iolens k8s diagnose of the class, in the history
	// database): nil, or a nil cap, when it was not measured.
	Measured func(ctx context.Context, class string) (*Cap, error)
	// Progress, when set, is told how far the reading is.
	Progress func(string)
	// Bounds; zero takes the defaults.
	MaxSeries   int // series of one query (default 4000)
	ChunkPoints int // points of one query (default 500,000)
	ChunkSteps  int // instants of one query (default 1000)
	MaxSteps    int // instants over the range (default 50,000)
	BandPoints  int // points of each volume's band over time (default 720)
	MaxGaps     int // gaps listed per volume (default 20)
	MaxRetries  int // refused queries asked again smaller (default 6)
}

func (o Options) withDefaults() Options {
	if o.MaxSeries <= 0 {
		o.MaxSeries = 4000
	}
	if o.ChunkPoints <= 0 {
		o.ChunkPoints = 500_000
	}
	if o.ChunkSteps <= 0 {
		o.ChunkSteps = 1000
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 50_000
	}
	if o.BandPoints <= 0 {
		o.BandPoints = 720
	}
	if o.MaxGaps <= 0 {
		o.MaxGaps = 20
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 6
	}
	if o.CreditStart <= 0 || o.CreditStart > 1 {
		o.CreditStart = 1
	}
	if o.Margin < 0 {
		o.Margin = 0
	}
	return o
}

// capOf is the cap for a device: of the rules that match it, the one
// from the first source (--expect, mapping, measured, catalog), the most
// specific of those; its claim (from any rule that names one), and why
// the cap is unknown when no rule gives one.
func (o Options) capOf(inst, dev string) (c *Cap, claim, unknown, volumeID string) {
	bestRank, bestWeight := -2, -1
	unknown = "no --expect or mapping names it"
	for _, r := range o.Rules {
		if !r.matches(inst, dev) {
			continue
		}
		if r.Claim != "" && claim == "" {
			claim = r.Claim
		}
		if r.VolumeID != "" && volumeID == "" {
			volumeID = r.VolumeID
		}
		if r.Cap == nil && r.Unknown != "" {
			unknown = r.Unknown
		}
		if k, w := r.rank(), r.weight(); k > bestRank || k == bestRank && w > bestWeight {
			bestRank, bestWeight, c = k, w, r.Cap
		}
	}
	return c, claim, unknown, volumeID
}

// osDiskOf names the node whose OS disk a device is, if a rule says so.
func (o Options) osDiskOf(inst, dev string) string {
	for _, r := range o.Rules {
		if r.OSDiskOf != "" && r.Instance == inst && r.Device == dev {
			return r.OSDiskOf
		}
	}
	return ""
}

// Report is the whole judgement.
type Report struct {
	Schema     string    `json:"schema"`
	Prometheus string    `json:"prometheus"`
	Selector   string    `json:"selector"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	StepS      float64   `json:"step_s"`
	// ScrapeIntervalS is the node exporter's, as its samples show it.
	ScrapeIntervalS float64 `json:"scrape_interval_s"`
	MarginPct       float64 `json:"margin_pct"`
	// CreditStartPct is the burst credit assumed when the range starts.
	CreditStartPct float64   `json:"credit_start_pct"`
	Verdict        string    `json:"verdict"`
	Notes          []string  `json:"notes"`
	Volumes        []*Volume `json:"volumes"`
	Nodes          []*Node   `json:"nodes"`
	Totals         Totals    `json:"totals"`
}

// Stats are the p50, p99 and maximum of per-step figures.
type Stats struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Gap is a stretch without samples.
type Gap struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// BandPoint is one slot of a volume's band over time: its highest and
// mean per-step share of the cap in force, in %.
type BandPoint struct {
	T       time.Time `json:"t"`
	MaxPct  float64   `json:"max_pct"`
	MeanPct float64   `json:"mean_pct"`
}

// Volume is one device's judgement.
type Volume struct {
	Instance string `json:"instance"`
	Device   string `json:"device"`
	Claim    string `json:"claim,omitempty"`
	// OSDiskOf names the node whose OS disk this is (with a cluster).
	OSDiskOf string `json:"os_disk_of,omitempty"`
	VolumeID string `json:"volume_id,omitempty"`
	// Status: at-cap, near, ok, idle, no-data or unknown-cap.
	Status string `json:"status"`
	// Why says what the status rests on, in a sentence.
	Why string `json:"why"`
	Cap *Cap   `json:"cap"`
	// CapUnknown says why there is no cap (then no share of it is
	// given).
	CapUnknown string `json:"cap_unknown,omitempty"`
	// Intervals judged, and the seconds they cover of the range.
	Intervals int     `json:"intervals"`
	CoveredS  float64 `json:"covered_s"`
	Gaps      []Gap   `json:"gaps"`
	// GapsDropped counts gaps beyond those listed.
	GapsDropped int `json:"gaps_dropped"`
	// IOPS are combined read+write IOPS as the provider counts them
	// (large IOs as several, from each step's mean IO size); BWBytes
	// combined bytes per second; AwaitMs the mean time an IO took.
	IOPS    Stats `json:"iops"`
	BWBytes Stats `json:"bw_bytes"`
	AwaitMs Stats `json:"await_ms"`
	// CapPct is the per-step share of the cap in force, in % (absent
	// when the cap is unknown).
	CapPct *Stats `json:"cap_pct,omitempty"`
	// AtCapS is the time at 95% or more of the cap in force.
	AtCapS     float64    `json:"at_cap_s"`
	AtCapFirst *time.Time `json:"at_cap_first,omitempty"`
	AtCapLast  *time.Time `json:"at_cap_last,omitempty"`
	// CreditMinPct is the lowest burst credit (% of the bucket) and when
	// (absent for a cap without a burst).
	CreditMinPct *float64  `json:"credit_min_pct,omitempty"`
	CreditMinAt  time.Time `json:"credit_min_at,omitzero"`
	// VMBoundS is the time the node's VM cap was met while this volume
	// did IO below its own cap: the VM, not the volume, bound.
	VMBoundS float64 `json:"vm_bound_s"`
	// Provider is what the provider's own counters say (EBS), when
	// Prometheus has them.
	Provider *Provider `json:"provider,omitempty"`
	// Recommendation, with money; nil when not judged.
	Rec  *Recommendation `json:"recommendation,omitempty"`
	Band []BandPoint     `json:"band"`

	acc *volAcc
}

// Node is one node's sum of volumes against its VM's caps.
type Node struct {
	Instance string   `json:"instance"`
	VM       string   `json:"vm,omitempty"`
	Devices  []string `json:"devices"`
	// VMIOPS and VMBWBytes are the VM's uncached caps (0: unknown).
	VMIOPS    float64 `json:"vm_iops"`
	VMBWBytes float64 `json:"vm_bw_bytes"`
	// VMBurstIOPS, VMBurstBWBytes and VMBurstS are the VM's credit burst
	// (zero without one): the caps while its credit lasts.
	VMBurstIOPS    float64 `json:"vm_burst_iops"`
	VMBurstBWBytes float64 `json:"vm_burst_bw_bytes"`
	VMBurstS       float64 `json:"vm_burst_s"`
	// VMUnknown says why the caps are unknown.
	VMUnknown string `json:"vm_unknown,omitempty"`
	IOPS      Stats  `json:"iops"`
	BWBytes   Stats  `json:"bw_bytes"`
	// CapPct is the per-step share of the VM's caps, in %.
	CapPct *Stats `json:"cap_pct,omitempty"`
	// AtCapS is the time the sum met 95% of a VM cap; Binds which one
	// (VM IOPS or VM throughput) for the longest.
	AtCapS     float64     `json:"at_cap_s"`
	AtCapIOPSS float64     `json:"at_cap_iops_s"`
	AtCapBWS   float64     `json:"at_cap_bw_s"`
	Binds      string      `json:"binds,omitempty"`
	AtCapFirst *time.Time  `json:"at_cap_first,omitempty"`
	Band       []BandPoint `json:"band"`
}

// Totals are the monthly prices summed over the volumes whose prices are
// known.
type Totals struct {
	Volumes      int              `json:"volumes"`
	AtCap        int              `json:"at_cap"`
	NoData       int              `json:"no_data"`
	CapUnknown   int              `json:"cap_unknown"`
	Smaller      int              `json:"smaller"`
	Raise        int              `json:"raise"`
	NodesBound   int              `json:"nodes_bound"`
	CurrentUSD   float64          `json:"current_usd_month"`
	ProposedUSD  float64          `json:"proposed_usd_month"`
	DeltaUSD     float64          `json:"delta_usd_month"`
	PriceUnknown int              `json:"price_unknown"`
	ByNamespace  []NamespaceTotal `json:"by_namespace,omitempty"`
}

// NamespaceTotal is one namespace's prices (cluster mode).
type NamespaceTotal struct {
	Namespace   string  `json:"namespace"`
	CurrentUSD  float64 `json:"current_usd_month"`
	ProposedUSD float64 `json:"proposed_usd_month"`
	DeltaUSD    float64 `json:"delta_usd_month"`
}

// Statuses, worst first.
const (
	StatusAtCap   = "at-cap"
	StatusNear    = "near"
	StatusOK      = "ok"
	StatusIdle    = "idle"
	StatusNoData  = "no-data"
	StatusUnknown = "unknown-cap"
)

// Thresholds of the judgement.
const (
	// AtCapPct is the share of the cap in force counted as at the cap.
	AtCapPct = 95
	// NearPct is the p99 share of the cap called near it.
	NearPct = 80
	// IdlePct is the p99 share of the cap under which a volume is idle.
	IdlePct = 5
	// RaisePerDayS is the time at the cap a day that asks for a larger
	// disk: 5 minutes a day on average.
	RaisePerDayS = 300
)

// NoNodeExporterError is a Prometheus without the node exporter's disk
// series.
type NoNodeExporterError struct {
	Prometheus string
	From, To   time.Time
}

func (e *NoNodeExporterError) Error() string {
	return fmt.Sprintf("Prometheus at %s has no node_disk_io_time_seconds_total series between %s and %s: it scrapes no node exporter",
		e.Prometheus, e.From.UTC().Format(time.RFC3339), e.To.UTC().Format(time.RFC3339))
}

// Hint says what to deploy.
func (e *NoNodeExporterError) Hint() string {
	return "deploy the node exporter on every node with its diskstats collector (kube-prometheus-stack or the prometheus-node-exporter Helm chart in a cluster, the prometheus-node-exporter package on a host) and have this Prometheus scrape it; then ask again once it holds the range"
}
