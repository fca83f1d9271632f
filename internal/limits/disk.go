package limits

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

const (
	kib = 1024.0
	gib = 1024.0 * 1024 * 1024
)

// unitBytes is the size in bytes of a throughput unit's "M".
func unitBytes(unit string) float64 {
	if unit == "MiB/s" {
		return 1 << 20
	}
	return 1e6
}

// Disk is a catalog family resolved at a size: the disk's own limits.
type Disk struct {
	// Spec is the canonical form of what was asked for.
	Spec    string   `json:"spec"`
	Family  *Family  `json:"-"`
	Edition *Edition `json:"-"`
	// Tier is set for tiered families (Azure P15).
	Tier *Tier `json:"-"`
	// SizeGiB is the size in the provider's unit (GiB, or GB for IBM); 0
	// when unknown.
	SizeGiB float64 `json:"size"`
	// Read and Write are the sustained limits: IOPS and bytes per second.
	Read  Rate `json:"read"`
	Write Rate `json:"write"`
	// Tput is the throughput limit in Edition.Unit (reads).
	Tput float64 `json:"tput"`
	// Burst is the disk's burst allowance; nil when it does not burst.
	Burst *BurstInfo `json:"burst,omitempty"`
	// Notes are caveats about how the figures were resolved.
	Notes []string `json:"notes,omitempty"`
	// Date is the @date of the spec ("" for today's limits).
	Date string `json:"date,omitempty"`
	// UncappedBWBytes is the throughput the disk's formula gives before
	// the family's maximum; above Read.BWBytes only when the cap binds.
	UncappedBWBytes float64 `json:"-"`
}

// Rate is an IOPS and a bandwidth (bytes per second) limit.
type Rate struct {
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
}

// BurstInfo is a burst allowance in absolute figures, enough to model the
// credit bucket from an observed rate: the bucket drains by (rate -
// baseline) and refills by (baseline - rate).
type BurstInfo struct {
	Model string `json:"model"`
	// IOPS and BWBytes are the rates while bursting (0: that resource
	// does not burst); BaselineIOPS and BaselineBWBytes what it falls to.
	IOPS            float64 `json:"iops"`
	BWBytes         float64 `json:"bw_bytes"`
	BaselineIOPS    float64 `json:"baseline_iops"`
	BaselineBWBytes float64 `json:"baseline_bw_bytes"`
	// Seconds a full bucket lasts at the burst rate; 0 for no limit.
	Seconds float64 `json:"seconds"`
	// BucketIOs and BucketBytes are the bucket sizes (0: none of that kind).
	BucketIOs   float64 `json:"bucket_ios"`
	BucketBytes float64 `json:"bucket_bytes"`
	// StartsFull: a new disk has a full bucket (a fresh disk benchmarks
	// high). OptIn: only when enabled (and billed).
	StartsFull bool `json:"starts_full"`
	OptIn      bool `json:"opt_in"`
}

// SpecError is a bad disk or VM spec; its hint lists what is valid.
type SpecError struct {
	Spec   string
	Msg    string
	Advice string
}

func (e *SpecError) Error() string { return fmt.Sprintf("%q: %s", e.Spec, e.Msg) }

// Hint lists what is valid (hint.Of reads it).
func (e *SpecError) Hint() string { return e.Advice }

// ParseDisk reads a disk spec:
//
//	azure:P15                      a catalog tier
//	azure:P15@2019                 the tier as the 2019 table had it
//	azure:premium-ssd:500GiB       a family at a size (rounded up to a tier)
//	aws:gp2:100GiB                 a formula at a size
//	aws:gp3:iops=6000,throughput=250[:200GiB]   provisioned figures
//	ibm:10iops-tier:300GiB
//
// Sizes take GiB, GB, TiB, TB (and Kubernetes' Gi, G, Ti, T); a bare
// number is in the provider's unit. Throughput is in the family's unit.
func (c *Catalog) ParseDisk(spec string) (*Disk, error) {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return nil, &SpecError{spec, "want PROVIDER:NAME[:SIZE][:iops=N,throughput=M]", "providers: " + strings.Join(c.ProviderNames(), ", ") + "; e.g. azure:P15, azure:premium-ssd:500GiB, aws:gp3:iops=6000,throughput=250"}
	}
	prov := strings.ToLower(parts[0])
	if _, ok := c.Providers[prov]; !ok {
		return nil, &SpecError{spec, "unknown provider " + parts[0], "providers: " + strings.Join(c.ProviderNames(), ", ")}
	}
	name, date, dated := strings.Cut(parts[1], "@")
	if dated && !ValidPriceDate(date) {
		hint := "a year or a month after @, e.g. azure:P15@2019 or azure:ultra@2022-06"
		if f := c.Family(prov, name); f != nil {
			hint += "; editions of " + f.ID + ": " + strings.Join(f.editionNames(), ", ")
		}
		return nil, &SpecError{spec, "edition date " + strconv.Quote(date) + " is not YYYY or YYYY-MM", hint}
	}
	d := &Disk{}
	var sizeSet bool
	var iops, tput float64
	var tierPart string
	for _, p := range parts[2:] {
		switch {
		case strings.Contains(p, "="):
			for _, kv := range strings.Split(p, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "iops":
					if x, ok := boundWord(v); ok {
						iops = x
						continue
					}
					x, err := units.ParseNumber(v, 0, maxFigure)
					if err != nil || x == 0 {
						return nil, &SpecError{spec, "iops=" + v + " is not a positive number", "e.g. iops=6000, or iops=max for the most the size allows"}
					}
					iops = x
				case "throughput", "tput", "mbps", "bw":
					if x, ok := boundWord(v); ok {
						tput = x
						continue
					}
					x, err := units.ParseNumber(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(v), "/s"), "MiB"), "MB"), 0, maxFigure)
					if err != nil || x == 0 {
						return nil, &SpecError{spec, "throughput=" + v + " is not a positive number", "in the family's unit, e.g. throughput=250, or throughput=max"}
					}
					tput = x
				case "size":
					s, err := c.parseSize(prov, v)
					if err != nil {
						return nil, &SpecError{spec, err.Error(), "e.g. size=500GiB"}
					}
					d.SizeGiB, sizeSet = s, true
				default:
					return nil, &SpecError{spec, "unknown key " + k, "keys: iops, throughput, size"}
				}
			}
		default:
			s, err := c.parseSize(prov, p)
			if err != nil {
				if startsWithDigit(p) || tierPart != "" {
					return nil, &SpecError{spec, err.Error(), "sizes like 500GiB, 250GB, 2TiB"}
				}
				// A tier of the family named before it
				// (azure:files-standard:default), checked below.
				tierPart = p
				continue
			}
			d.SizeGiB, sizeSet = s, true
		}
	}

	f := c.Family(prov, name)
	var tier *Tier
	if f == nil {
		// A tier name: azure:P15.
		for _, fam := range c.Families {
			if fam.Provider != prov {
				continue
			}
			e := fam.Edition(date)
			if e == nil {
				continue
			}
			for _, t := range e.Tiers {
				if strings.EqualFold(t.Name, name) {
					f, tier = fam, t
				}
			}
			if f != nil {
				break
			}
		}
		if f == nil {
			return nil, &SpecError{spec, "no disk family or tier named " + name + " for " + prov, "valid: " + strings.Join(c.diskNames(prov), ", ")}
		}
		if sizeSet && d.SizeGiB > tier.SizeGiB {
			return nil, &SpecError{spec, fmt.Sprintf("%s holds %s, less than the size given", tier.Name, units.Stated(tier.SizeGiB, "GiB")), "give the family and the size instead, e.g. " + f.ID + ":" + strconv.FormatFloat(d.SizeGiB, 'f', -1, 64) + "GiB"}
		}
	}
	d.Family = f
	d.Edition = f.Edition(date)
	if d.Edition == nil {
		return nil, &SpecError{spec, "no edition of " + f.ID + " at " + date, "editions: " + strings.Join(f.editionNames(), ", ")}
	}
	e := d.Edition
	if tierPart != "" {
		if tier != nil || len(e.Tiers) == 0 {
			return nil, &SpecError{spec, "size " + strconv.Quote(tierPart) + " is not a number with a unit", "sizes like 500GiB, 250GB, 2TiB"}
		}
		for _, t := range e.Tiers {
			if strings.EqualFold(t.Name, tierPart) {
				tier = t
			}
		}
		if tier == nil {
			return nil, &SpecError{spec, f.ID + " has no tier " + tierPart, "tiers: " + f.tierList(e)}
		}
		if sizeSet && d.SizeGiB > tier.SizeGiB {
			return nil, &SpecError{spec, fmt.Sprintf("%s holds %s, less than the size given", tier.Name, units.Stated(tier.SizeGiB, "GiB")), "give the family and the size instead"}
		}
	}
	if len(e.Tiers) > 0 {
		if iops > 0 || tput > 0 {
			return nil, &SpecError{spec, f.ID + " has fixed tiers; iops= and throughput= do not apply", "give a tier or a size: " + f.tierList(e)}
		}
		if tier == nil {
			if !sizeSet {
				return nil, &SpecError{spec, f.ID + " needs a tier or a size", "tiers: " + f.tierList(e)}
			}
			for _, t := range e.Tiers {
				if t.SizeGiB >= d.SizeGiB {
					tier = t
					break
				}
			}
			if tier == nil {
				last := e.Tiers[len(e.Tiers)-1]
				return nil, &SpecError{spec, fmt.Sprintf("larger than the largest tier (%s, %s)", last.Name, units.Stated(last.SizeGiB, "GiB")), "tiers: " + f.tierList(e)}
			}
			if tier.SizeGiB != d.SizeGiB {
				d.Notes = append(d.Notes, fmt.Sprintf("%s rounds up to %s (%s)", units.Stated(round(d.SizeGiB, 2), "GiB"), tier.Name, units.Stated(tier.SizeGiB, "GiB")))
			}
		}
		d.Tier, d.SizeGiB = tier, tier.SizeGiB
		ub := unitBytes(e.Unit)
		d.Read = Rate{tier.IOPS, tier.Tput * ub}
		d.Write = d.Read
		d.Tput = tier.Tput
		d.Burst = burstFromTier(tier.Burst, d.Read, ub)
	} else {
		if err := d.resolveFormula(iops, tput, sizeSet); err != nil {
			return nil, &SpecError{spec, err.Error(), f.formulaHint(e)}
		}
	}
	d.Spec = c.canonical(d, date)
	d.Date = date
	if len(e.Unverified) > 0 {
		d.Notes = append(d.Notes, "unverified in the sources: "+strings.Join(e.Unverified, "; "))
	}
	if !e.Current() {
		d.Notes = append(d.Notes, fmt.Sprintf("limits as documented %s to %s, not today's", e.From, e.To))
	}
	return d, nil
}

// askMax and askMin stand for iops=max / iops=min (and throughput=):
// the most or the least the disk allows at its size, only when asked.
const (
	askMax = -1.0
	askMin = -2.0
)

// boundWord reads "max" or "min" as a provisioned figure.
func boundWord(v string) (float64, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "max":
		return askMax, true
	case "min":
		return askMin, true
	}
	return 0, false
}

// maxFigure bounds the IOPS, throughput and size figures of a spec: no
// cloud disk comes near it, and every figure stays finite.
const maxFigure = 1e12

func startsWithDigit(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.' || s[0] == '-' || s[0] == '+')
}

// parseSize returns a size in the provider's unit.
func (c *Catalog) parseSize(prov, s string) (float64, error) {
	s = strings.TrimSpace(s)
	i := len(s)
	for i > 0 && (s[i-1] >= 'a' && s[i-1] <= 'z' || s[i-1] >= 'A' && s[i-1] <= 'Z' || s[i-1] == ' ') {
		i--
	}
	v, err := units.ParseNumber(s[:i], 0, maxFigure)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("size %q is not a positive number with a unit", s)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	p := c.Providers[prov]
	var bytes float64
	switch unit {
	case "":
		return v, nil
	case "gib", "gi":
		bytes = v * gib
	case "gb", "g":
		bytes = v * 1e9
	case "tib", "ti":
		bytes = v * gib * 1024
	case "tb", "t":
		bytes = v * 1e12
	default:
		return 0, fmt.Errorf("size %q: unit must be GiB, GB, TiB or TB", s)
	}
	if p.SizeAsGiven {
		// The figure is the capacity whatever its suffix; only TB/TiB scale.
		switch unit {
		case "tib", "ti", "tb", "t":
			return v * 1000, nil
		}
		return v, nil
	}
	if p.SizeUnit == "GB" {
		return math.Ceil(bytes / 1e9), nil
	}
	// Providers allocate whole GiB.
	return math.Ceil(bytes/gib - 1e-9), nil
}

// resolveFormula fills the limits of a formula family from the size and
// provisioned figures.
func (d *Disk) resolveFormula(iops, tput float64, sizeSet bool) error {
	e := d.Edition
	if e.SizeGiB != nil && sizeSet {
		if d.SizeGiB < e.SizeGiB.Min || d.SizeGiB > e.SizeGiB.Max {
			return fmt.Errorf("size %g is outside %g-%g", d.SizeGiB, e.SizeGiB.Min, e.SizeGiB.Max)
		}
	}
	needSize := !e.IOPS.Provisioned && (e.IOPS.PerGiB != 0 || e.IOPS.Base != 0 && e.IOPS.Write == nil) ||
		!e.Tput.Provisioned && (e.Tput.PerGiB != 0 || e.Tput.PerTiB != 0 || len(e.Tput.Steps) > 0 || len(e.Tput.CeilPerGiB) > 0)
	if needSize && !sizeSet {
		return fmt.Errorf("%s needs a size", d.Family.ID)
	}
	if !e.IOPS.Provisioned && iops != 0 {
		return fmt.Errorf("%s derives IOPS from the size; iops= does not apply", d.Family.ID)
	}
	if !e.Tput.Provisioned && tput != 0 {
		return fmt.Errorf("%s derives throughput; throughput= does not apply", d.Family.ID)
	}
	size := d.SizeGiB
	ub := unitBytes(e.Unit)
	// Hyperdisk Throughput: IOPS follow from the throughput.
	var rT, wT, rI, wI float64
	var err error
	if e.IOPS.PerTput > 0 {
		if rT, err = e.Tput.provision("throughput", tput, size, 0, sizeSet, &d.Notes); err != nil {
			return err
		}
		wT = rT
		rI = e.IOPS.eval(size, 0, rT, ub, false)
		wI = rI
	} else {
		if rI, err = e.IOPS.provision("iops", iops, size, 0, sizeSet, &d.Notes); err != nil {
			return err
		}
		wI = rI
		if !e.IOPS.Provisioned {
			rI = e.IOPS.eval(size, 0, 0, ub, false)
			wI = e.IOPS.eval(size, 0, 0, ub, true)
		}
		if rT, err = e.Tput.provision("throughput", tput, size, rI, sizeSet, &d.Notes); err != nil {
			return err
		}
		wT = rT
		if !e.Tput.Provisioned {
			rT = e.Tput.eval(size, rI, 0, ub, false)
			wT = e.Tput.eval(size, wI, 0, ub, true)
		}
	}
	d.Read = Rate{rI, rT * ub}
	d.Write = Rate{wI, wT * ub}
	d.Tput = rT
	d.UncappedBWBytes = d.Read.BWBytes
	if !e.Tput.Provisioned && e.IOPS.PerTput == 0 {
		// The same formula without the family's maxima: IBM weights its
		// bandwidth split by the capped figure, and a split by size
		// would use this one.
		q := *e.Tput
		q.Max = 0
		q.FromIOPS = append([]IOPSStep(nil), e.Tput.FromIOPS...)
		for i := range q.FromIOPS {
			q.FromIOPS[i].Max = 0
		}
		d.UncappedBWBytes = q.eval(size, rI, 0, ub, false) * ub
	}
	d.Burst = d.formulaBurst(ub)
	return nil
}

// provision returns a provisioned figure (given, the provider's default,
// or the most or least the size allows when asked with max or min) after
// checking it against the bounds, or 0 for non-provisioned quantities
// (the caller evaluates them). With no figure and no default it is an
// error: a provisioned disk is never taken at its maximum unasked.
func (q *Quantity) provision(what string, given, size, iops float64, sizeKnown bool, notes *[]string) (float64, error) {
	if !q.Provisioned {
		return 0, nil
	}
	lo, hi := q.Min, q.Max
	if len(q.Bands) > 0 && sizeKnown {
		b := q.Bands[len(q.Bands)-1]
		for _, x := range q.Bands {
			if size <= x.ToGiB {
				b = x
				break
			}
		}
		if b.Min > 0 {
			lo = b.Min
		}
		if hi == 0 || b.Max < hi {
			hi = b.Max
		}
	}
	if q.MinPerTiB > 0 && sizeKnown {
		lo = math.Max(lo, q.MinPerTiB*size/1024)
	}
	if q.MaxPerGiB > 0 && sizeKnown {
		if m := math.Max(q.Min, q.MaxPerGiB*size); hi == 0 || m < hi {
			hi = m
		}
	}
	if q.MaxPerIOPS > 0 && iops > 0 {
		if m := math.Max(q.Min, q.MaxPerIOPS*iops); hi == 0 || m < hi {
			hi = m
		}
	}
	v := given
	switch {
	case v > 0:
	case given == askMax:
		if hi <= 0 {
			return 0, fmt.Errorf("%s=max: this disk publishes no maximum; give %s=N", what, what)
		}
		v = hi
		*notes = append(*notes, fmt.Sprintf("%s=max: assuming the most allowed at this size, %g", what, round(hi, 2)))
	case given == askMin:
		if lo <= 0 {
			return 0, fmt.Errorf("%s=min: this disk publishes no minimum; give %s=N", what, what)
		}
		v = lo
	case q.Default > 0 && q.Default < lo:
		v = lo
		*notes = append(*notes, fmt.Sprintf("no %s= given: the default %g is below this size's floor (%g per TiB); taking %g", what, q.Default, q.MinPerTiB, round(lo, 2)))
	case q.Default > 0:
		v = q.Default
		*notes = append(*notes, fmt.Sprintf("no %s= given: the provider's default, %g", what, q.Default))
	default:
		return 0, fmt.Errorf("no %s= given and the provider sets no default: give %s=N, or %s=max for the most this size allows", what, what, what)
	}
	if v < lo-1e-9 || hi > 0 && v > hi+1e-9 {
		why := ""
		if q.MinPerTiB > 0 && sizeKnown && lo > q.Min {
			why = fmt.Sprintf(" (at least %g per TiB of size)", q.MinPerTiB)
		}
		if !sizeKnown && (q.MaxPerGiB > 0 || len(q.Bands) > 0) {
			why = " (give a size for the exact bound)"
		}
		return 0, fmt.Errorf("%s=%g is outside %g-%g for this disk%s", what, v, lo, round(hi, 2), why)
	}
	if given != 0 && !sizeKnown && (q.MaxPerGiB > 0 || len(q.Bands) > 0) {
		*notes = append(*notes, "no size given: the per-size bound on "+what+" was not checked")
	}
	return v, nil
}

// eval computes a derived quantity at a size; iops and tput feed the
// figures derived from them; ub is the unit's bytes.
func (q *Quantity) eval(size, iops, tput, ub float64, write bool) float64 {
	if write && q.Write != nil {
		return q.Write.eval(size, iops, tput, ub, false)
	}
	v := q.Value + q.Base + q.PerGiB*size + q.PerTiB*size/1024
	for _, c := range q.CeilPerGiB {
		v += math.Ceil(c*size - 1e-9)
	}
	if q.PerTput > 0 {
		v = q.PerTput * tput
	}
	if len(q.Steps) > 0 {
		v = q.step(size).Value
	}
	if len(q.FromIOPS) > 0 {
		s := q.FromIOPS[len(q.FromIOPS)-1]
		for _, x := range q.FromIOPS {
			if x.ToIOPS > 0 && iops <= x.ToIOPS {
				s = x
				break
			}
		}
		per := s.PerIOPS
		if s.KiB > 0 {
			per = s.KiB * kib / ub
		}
		v = iops * per
		if s.Max > 0 && v > s.Max {
			v = s.Max
		}
	}
	if q.Min > 0 && v < q.Min {
		v = q.Min
	}
	if q.Max > 0 && v > q.Max {
		v = q.Max
	}
	return v
}

func (q *Quantity) step(size float64) SizeStep {
	for _, s := range q.Steps {
		if s.ToGiB > 0 && size <= s.ToGiB {
			return s
		}
	}
	return q.Steps[len(q.Steps)-1]
}

func burstFromTier(b *Burst, base Rate, ub float64) *BurstInfo {
	if b == nil {
		return nil
	}
	bi := &BurstInfo{Model: b.Model, IOPS: b.IOPS, BWBytes: b.Tput * ub, BaselineIOPS: base.IOPS, BaselineBWBytes: base.BWBytes,
		Seconds: b.Seconds, StartsFull: b.StartsFull, OptIn: b.OptIn}
	if b.Seconds > 0 {
		if b.IOPS > base.IOPS {
			bi.BucketIOs = (b.IOPS - base.IOPS) * b.Seconds
		}
		if bi.BWBytes > base.BWBytes {
			bi.BucketBytes = (bi.BWBytes - base.BWBytes) * b.Seconds
		}
	}
	return bi
}

// formulaBurst works out a sized disk's burst allowance (gp2, st1, Azure
// Files).
func (d *Disk) formulaBurst(ub float64) *BurstInfo {
	e := d.Edition
	b := e.Burst
	var stepBurst float64
	if e.Tput.Steps != nil {
		stepBurst = e.Tput.step(d.SizeGiB).Burst
	}
	if b == nil {
		return nil
	}
	if b.BelowGiB > 0 && d.SizeGiB >= b.BelowGiB {
		return nil
	}
	bi := &BurstInfo{Model: b.Model, BaselineIOPS: d.Read.IOPS, BaselineBWBytes: d.Read.BWBytes, StartsFull: b.StartsFull, OptIn: b.OptIn}
	if b.IOPS > d.Read.IOPS {
		bi.IOPS = b.IOPS
	}
	if b.IOPSFormula != nil {
		if x := b.IOPSFormula.eval(d.SizeGiB, 0, 0, ub, false); x > d.Read.IOPS {
			bi.IOPS = x
		}
	}
	if b.Tput*ub > d.Read.BWBytes {
		bi.BWBytes = b.Tput * ub
	}
	if stepBurst*ub > d.Read.BWBytes {
		bi.BWBytes = stepBurst * ub
	}
	if b.TputFormula != nil {
		if x := b.TputFormula.eval(d.SizeGiB, 0, 0, ub, false) * ub; x > d.Read.BWBytes {
			bi.BWBytes = x
		}
	}
	if bi.IOPS == 0 && bi.BWBytes == 0 {
		return nil
	}
	switch {
	case b.BucketIOs > 0 && bi.IOPS > 0:
		bi.BucketIOs = b.BucketIOs
		bi.Seconds = b.BucketIOs / (bi.IOPS - d.Read.IOPS)
	case b.BucketBytesPerTiB > 0 && bi.BWBytes > 0:
		bi.BucketBytes = b.BucketBytesPerTiB * d.SizeGiB / 1024
		bi.Seconds = bi.BucketBytes / (bi.BWBytes - d.Read.BWBytes)
	case b.Seconds > 0:
		bi.Seconds = b.Seconds
		if bi.IOPS > 0 {
			bi.BucketIOs = (bi.IOPS - d.Read.IOPS) * b.Seconds
		}
		if bi.BWBytes > 0 {
			bi.BucketBytes = (bi.BWBytes - d.Read.BWBytes) * b.Seconds
		}
	}
	return bi
}

// canonical is the spec that reads back as this disk: a tier as
// provider:TIER, unless that name also names a family or another
// family's tier (azure:default is the Standard SSD class of AKS), then as
// family:TIER.
func (c *Catalog) canonical(d *Disk, date string) string {
	f := d.Family
	at := ""
	if date != "" {
		at = "@" + date
	}
	if d.Tier != nil {
		short := f.Provider + ":" + d.Tier.Name + at
		if c.tierOwner(f.Provider, d.Tier.Name, date) == f {
			return short
		}
		return f.ID + at + ":" + d.Tier.Name
	}
	s := f.ID + at
	if d.SizeGiB > 0 {
		s += ":" + strconv.FormatFloat(d.SizeGiB, 'f', -1, 64) + f.sizeUnit()
	}
	var kv []string
	if d.Edition.IOPS.Provisioned {
		kv = append(kv, "iops="+strconv.FormatFloat(d.Read.IOPS, 'f', -1, 64))
	}
	if d.Edition.Tput.Provisioned {
		kv = append(kv, "throughput="+strconv.FormatFloat(round(d.Tput, 3), 'f', -1, 64))
	}
	if len(kv) > 0 {
		s += ":" + strings.Join(kv, ",")
	}
	return s
}

// tierOwner is the family a bare tier name resolves to, as ParseDisk
// resolves it: a family or alias of that name first, then the first
// family with such a tier at date.
func (c *Catalog) tierOwner(prov, name, date string) *Family {
	if f := c.Family(prov, name); f != nil {
		return f
	}
	for _, fam := range c.Families {
		if fam.Provider != prov {
			continue
		}
		if e := fam.Edition(date); e != nil {
			for _, t := range e.Tiers {
				if strings.EqualFold(t.Name, name) {
					return fam
				}
			}
		}
	}
	return nil
}

func (f *Family) sizeUnit() string {
	if f.Provider == "ibm" {
		return "GB"
	}
	return "GiB"
}

func (f *Family) tierList(e *Edition) string {
	var n []string
	for _, t := range e.Tiers {
		n = append(n, fmt.Sprintf("%s (%s)", t.Name, units.Stated(t.SizeGiB, "GiB")))
	}
	return strings.Join(n, ", ")
}

func (f *Family) editionNames() []string {
	var n []string
	for _, e := range f.Editions {
		n = append(n, "@"+e.From)
	}
	return n
}

func (f *Family) formulaHint(e *Edition) string {
	var b strings.Builder
	b.WriteString(f.ID)
	if e.SizeGiB != nil {
		fmt.Fprintf(&b, ": size %g-%g %s", e.SizeGiB.Min, e.SizeGiB.Max, f.sizeUnit())
	}
	if e.IOPS.Provisioned {
		b.WriteString("; iops=N provisioned")
	}
	if e.Tput.Provisioned {
		fmt.Fprintf(&b, "; throughput=N in %s provisioned", e.Unit)
	}
	return b.String()
}

// diskNames lists the family ids and tier names of a provider.
func (c *Catalog) diskNames(prov string) []string {
	var out []string
	for _, f := range c.Families {
		if f.Provider != prov {
			continue
		}
		out = append(out, strings.TrimPrefix(f.ID, prov+":"))
		for _, t := range f.Editions[0].Tiers {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}
