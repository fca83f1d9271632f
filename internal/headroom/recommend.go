package headroom

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/units"
)

// Actions of a recommendation.
const (
	ActionKeep    = "keep"
	ActionSmaller = "smaller"
	ActionRaise   = "raise"
	ActionNone    = "none"
)

// Recommendation is what to do with a volume, and what it costs.
type Recommendation struct {
	// Action: keep, smaller, raise, or none (not judged, Why says why).
	Action string `json:"action"`
	Why    string `json:"why"`
	// Target is what a disk must sustain: the p99 of combined IOPS and
	// bytes per second with the margin; Peak the highest step.
	TargetIOPS    float64 `json:"target_iops"`
	TargetBWBytes float64 `json:"target_bw_bytes"`
	PeakIOPS      float64 `json:"peak_iops"`
	PeakBWBytes   float64 `json:"peak_bw_bytes"`
	// AtCapPerDayS is the time at the cap per day of samples.
	AtCapPerDayS float64 `json:"at_cap_per_day_s"`
	Current      string  `json:"current,omitempty"`
	// CurrentUSD is the current disk's monthly list price; nil when
	// unknown, and CurrentPriceUnknown says why.
	CurrentUSD          *float64 `json:"current_usd_month"`
	CurrentPriceUnknown string   `json:"current_price_unknown,omitempty"`
	Proposed            string   `json:"proposed,omitempty"`
	ProposedUSD         *float64 `json:"proposed_usd_month"`
	// DeltaUSD is proposed minus current a month; nil when either price
	// is unknown.
	DeltaUSD *float64 `json:"delta_usd_month"`
	// PriceSource cites the prices (region, date, document).
	PriceSource string `json:"price_source,omitempty"`
}

// candidate is a catalog disk that might replace a volume's.
type candidate struct {
	d    *limits.Disk
	cost *limits.Cost
}

// candidates are the current disks of the family's provider and kind at
// the volume's size (tiers of that size or larger, formulas and
// provisioned families at the size with their default figures), priced,
// and attachable to vm when one is known.
func candidates(cat *limits.Catalog, cur *limits.Disk, vm string) []candidate {
	prov := cur.Family.Provider
	size := cur.SizeGiB
	if cur.Tier != nil {
		size = cur.Tier.SizeGiB
	}
	unit := "GiB"
	if p := cat.Providers[prov]; p != nil && p.SizeUnit != "" {
		unit = p.SizeUnit
	}
	var specs []string
	for _, f := range cat.Families {
		if f.Provider != prov || f.Kind != cur.Family.Kind || len(f.Editions) == 0 || !f.Editions[0].Current() {
			continue
		}
		e := f.Editions[0]
		if len(e.Tiers) > 0 {
			for _, t := range e.Tiers {
				if t.SizeGiB >= size {
					specs = append(specs, prov+":"+t.Name)
				}
			}
			continue
		}
		if size > 0 {
			specs = append(specs, f.ID+":"+units.Exact(size)+unit)
		}
	}
	var out []candidate
	for _, s := range specs {
		d, err := cat.ParseDisk(s)
		if err != nil {
			continue
		}
		if vm != "" {
			if _, err := cat.ParseExpectation(d.Spec, vm, nil, ""); err != nil {
				continue
			}
		}
		co := cat.DiskCost(d, "")
		if co == nil || co.Price.NoTotal {
			continue
		}
		out = append(out, candidate{d: d, cost: co})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].cost.Price.USDPerMonth < out[j].cost.Price.USDPerMonth })
	return out
}

// carries reports whether d sustains iops and bw, and reaches the peak
// within its burst.
func carries(d *limits.Disk, iops, bw, peakIOPS, peakBW float64) bool {
	if d.Read.IOPS > 0 && d.Read.IOPS < iops || d.Read.BWBytes > 0 && d.Read.BWBytes < bw {
		return false
	}
	pi, pb := d.Read.IOPS, d.Read.BWBytes
	if b := d.Burst; b != nil && !b.OptIn {
		pi, pb = math.Max(pi, b.IOPS), math.Max(pb, b.BWBytes)
	}
	return (pi <= 0 || pi >= peakIOPS) && (pb <= 0 || pb >= peakBW)
}

func usd(x float64) *float64 { return &x }

// recommend gives each judged volume its recommendation.
func recommend(rep *Report, o Options) {
	for _, v := range rep.Volumes {
		v.Rec = recommendOne(v, o, rep)
	}
}

func recommendOne(v *Volume, o Options, rep *Report) *Recommendation {
	if v.Status == StatusNoData {
		return &Recommendation{Action: ActionNone, Why: "no data: nothing to judge"}
	}
	if v.Cap == nil {
		return &Recommendation{Action: ActionNone, Why: "its cap is unknown: give --expect, or a mapping file, to judge it"}
	}
	m := 1 + o.Margin
	rec := &Recommendation{TargetIOPS: v.IOPS.P99 * m, TargetBWBytes: v.BWBytes.P99 * m, PeakIOPS: v.IOPS.Max, PeakBWBytes: v.BWBytes.Max}
	if v.CoveredS > 0 {
		rec.AtCapPerDayS = v.AtCapS / v.CoveredS * 86400
	}
	raise := rec.AtCapPerDayS >= RaisePerDayS
	d := v.Cap.Disk
	if d == nil || o.Catalog == nil {
		rec.Action = ActionKeep
		if raise {
			rec.Action = ActionRaise
		}
		rec.Why = "not a catalog disk: no price, no other disk proposed (give a catalog disk to --expect, e.g. azure:P10)"
		if raise {
			rec.Why = fmt.Sprintf("at its cap %s a day; ", units.FormatSeconds(rec.AtCapPerDayS)) + rec.Why
		}
		return rec
	}
	cat := o.Catalog
	rec.Current = d.Spec
	if co := cat.DiskCost(d, ""); co != nil && !co.Price.NoTotal {
		rec.CurrentUSD = usd(co.Price.USDPerMonth)
		rec.PriceSource = co.Price.Region + ", " + co.Price.AsOf + ", " + co.Price.Source
	} else {
		rec.CurrentPriceUnknown = "unknown"
		if g := cat.PriceGap(d, ""); g != "" {
			rec.CurrentPriceUnknown = "unknown: " + g
		}
	}
	vm := o.VMs[v.Instance]
	if vm == "" {
		vm = o.DefaultVM
	}
	if cat.VM(vm) == nil {
		vm = ""
	}
	cands := candidates(cat, d, vm)
	pick := func(iops, bw, pi, pb float64) *candidate {
		for i := range cands {
			if carries(cands[i].d, iops, bw, pi, pb) {
				return &cands[i]
			}
		}
		return nil
	}
	setProposed := func(c *candidate) {
		rec.Proposed = c.d.Spec
		rec.ProposedUSD = usd(c.cost.Price.USDPerMonth)
		if rec.CurrentUSD != nil {
			rec.DeltaUSD = usd(*rec.ProposedUSD - *rec.CurrentUSD)
		}
	}
	attach := ""
	if vm != "" {
		attach = ", attachable to " + vm
	}
	if raise {
		rec.Action = ActionRaise
		rec.Why = fmt.Sprintf("at its cap %s a day", units.FormatSeconds(rec.AtCapPerDayS))
		// The option that carries the peak sustained.
		if c := pick(v.IOPS.Max, v.BWBytes.Max, v.IOPS.Max, v.BWBytes.Max); c != nil && c.d.Spec != d.Spec {
			setProposed(c)
			rec.Why += "; the cheapest " + d.Family.Kind + " of " + d.Family.Provider + " at its size that sustains the peak" + attach
		} else {
			rec.Why += "; no " + d.Family.Provider + " " + d.Family.Kind + " at its size in the catalog sustains the peak" + attach + " (a larger size may)"
		}
		return rec
	}
	c := pick(rec.TargetIOPS, rec.TargetBWBytes, rec.PeakIOPS, rec.PeakBWBytes)
	switch {
	case c == nil || c.d.Spec == d.Spec:
		rec.Action = ActionKeep
		rec.Why = "no cheaper " + d.Family.Provider + " " + d.Family.Kind + " at its size carries p99 + margin with the peak in its burst" + attach
	case rec.CurrentUSD == nil:
		rec.Action = ActionKeep
		setProposed(c)
		rec.Why = "the current disk's price is unknown: no saving claimed; " + c.d.Spec + " would carry it"
	case c.cost.Price.USDPerMonth < *rec.CurrentUSD*0.99:
		rec.Action = ActionSmaller
		setProposed(c)
		rec.Why = fmt.Sprintf("%s sustains p99 + %s margin with the peak in its burst%s", c.d.Spec, units.Share(o.Margin), attach)
	default:
		rec.Action = ActionKeep
		rec.Why = "the cheapest disk that carries p99 + margin costs no less"
	}
	return rec
}

// severity orders statuses, worst first.
func severity(s string) int {
	switch s {
	case StatusAtCap:
		return 0
	case StatusNear:
		return 1
	case StatusNoData:
		return 2
	case StatusUnknown:
		return 3
	case StatusOK:
		return 4
	}
	return 5
}

// rank sorts the volumes worst first: by status, then time at the cap,
// then the p99 share of the cap. Prices never rank.
func rank(rep *Report) {
	sort.SliceStable(rep.Volumes, func(i, j int) bool {
		a, b := rep.Volumes[i], rep.Volumes[j]
		if sa, sb := severity(a.Status), severity(b.Status); sa != sb {
			return sa < sb
		}
		if a.AtCapS != b.AtCapS {
			return a.AtCapS > b.AtCapS
		}
		pa, pb := -1.0, -1.0
		if a.CapPct != nil {
			pa = a.CapPct.P99
		}
		if b.CapPct != nil {
			pb = b.CapPct.P99
		}
		if pa != pb {
			return pa > pb
		}
		return a.Instance+a.Device < b.Instance+b.Device
	})
	sort.SliceStable(rep.Nodes, func(i, j int) bool {
		if rep.Nodes[i].AtCapS != rep.Nodes[j].AtCapS {
			return rep.Nodes[i].AtCapS > rep.Nodes[j].AtCapS
		}
		return rep.Nodes[i].Instance < rep.Nodes[j].Instance
	})
}

func totals(rep *Report) Totals {
	t := Totals{Volumes: len(rep.Volumes)}
	ns := map[string]*NamespaceTotal{}
	for _, v := range rep.Volumes {
		switch v.Status {
		case StatusAtCap:
			t.AtCap++
		case StatusNoData:
			t.NoData++
		case StatusUnknown:
			t.CapUnknown++
		}
		r := v.Rec
		if r == nil || r.Current == "" {
			continue
		}
		switch r.Action {
		case ActionSmaller:
			t.Smaller++
		case ActionRaise:
			t.Raise++
		}
		if r.CurrentUSD == nil {
			t.PriceUnknown++
			continue
		}
		prop := *r.CurrentUSD
		if r.ProposedUSD != nil && (r.Action == ActionSmaller || r.Action == ActionRaise) {
			prop = *r.ProposedUSD
		}
		t.CurrentUSD += *r.CurrentUSD
		t.ProposedUSD += prop
		if nsName, _, ok := strings.Cut(v.Claim, "/"); ok {
			n := ns[nsName]
			if n == nil {
				n = &NamespaceTotal{Namespace: nsName}
				ns[nsName] = n
			}
			n.CurrentUSD += *r.CurrentUSD
			n.ProposedUSD += prop
			n.DeltaUSD = n.ProposedUSD - n.CurrentUSD
		}
	}
	t.DeltaUSD = t.ProposedUSD - t.CurrentUSD
	for _, n := range rep.Nodes {
		if n.AtCapS > 0 {
			t.NodesBound++
		}
	}
	for _, n := range ns {
		t.ByNamespace = append(t.ByNamespace, *n)
	}
	sort.Slice(t.ByNamespace, func(i, j int) bool { return t.ByNamespace[i].Namespace < t.ByNamespace[j].Namespace })
	return t
}

// verdict is the cluster's, in a sentence or two.
func verdict(rep *Report) string {
	t := rep.Totals
	var parts []string
	switch {
	case t.AtCap > 0:
		w := rep.Volumes[0]
		parts = append(parts, fmt.Sprintf("%d of %d volumes met their cap (worst: %s %s, %s at the cap)", t.AtCap, t.Volumes, w.Instance, w.Device, units.FormatSeconds(w.AtCapS)))
	default:
		parts = append(parts, fmt.Sprintf("none of %d volumes met its cap", t.Volumes))
	}
	if t.NodesBound > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d nodes met a VM cap", t.NodesBound, len(rep.Nodes)))
	}
	if t.Smaller > 0 || t.Raise > 0 {
		s := fmt.Sprintf("%d could be smaller, %d need more", t.Smaller, t.Raise)
		if t.CurrentUSD > 0 {
			s += fmt.Sprintf(" (%s a month of %s now, %s proposed", units.SignedUSD(t.DeltaUSD), units.USD(t.CurrentUSD), units.USD(t.ProposedUSD))
			if t.PriceUnknown > 0 {
				s += fmt.Sprintf("; %d prices unknown, not counted", t.PriceUnknown)
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	if n := t.NoData + t.CapUnknown; n > 0 {
		parts = append(parts, fmt.Sprintf("%d not judged (%d without data, %d with an unknown cap)", n, t.NoData, t.CapUnknown))
	}
	return strings.Join(parts, "; ")
}
