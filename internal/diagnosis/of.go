package diagnosis

import (
	"math"
	"sort"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
)

// Of builds the disk model of one run's results, their findings read
// over the whole run (analysis.Revise), as every report opens with it:
// the catalog disks that fit the measured ceilings, and the disk the
// results were compared with (the expect labels --expect, a storage
// class or cloud metadata put on them).
func Of(rs []result.Result, unknown []string) Diagnosis {
	o := Options{Unknown: unknown}
	if c, err := limits.Default(); err == nil {
		o.Match = func(iops, bw float64) []Match {
			var out []Match
			for _, f := range c.Fits(iops, bw, 5) {
				out = append(out, Match{Disk: f.Disk, VM: f.VM, IOPS: f.IOPS, BWBytes: f.BWBytes, Distance: f.Distance})
			}
			return out
		}
	}
	for _, r := range rs {
		if l := r.Target.Labels; l[limits.LabelExpect] != "" {
			src := l[limits.LabelExpectSource]
			if src == "" {
				src = "--expect"
			}
			o.Expected = &Expected{Disk: l[limits.LabelExpect], VM: l[limits.LabelExpectVM], Source: src}
			break
		}
	}
	if c, err := limits.Default(); err == nil {
		expected := ""
		if o.Expected != nil {
			expected = o.Expected.Disk
		}
		o.MatchBurst = func(iops, bw float64) []BurstMatch { return burstFits(c, expected, iops, bw) }
	}
	return Build(rs, o)
}

// burstWithin is the largest gap between a flat level and a burst rate
// that names it.
const burstWithin = 0.05

// burstFits lists the catalog's current tiered disks (the expected one
// first) whose credit burst rates fit the flat levels measured (iops and
// bwBytes, 0 when that figure is not flat), nearest first: a level that
// is a burst rate says what the disk does while its credits last, not
// what it holds.
func burstFits(c *limits.Catalog, expected string, iops, bw float64) []BurstMatch {
	if iops <= 0 && bw <= 0 {
		return nil
	}
	gap := func(got, rate float64) float64 {
		switch {
		case got <= 0:
			return 0
		case rate <= 0:
			return math.Inf(1)
		}
		return math.Abs(got-rate) / rate
	}
	var specs []string
	if expected != "" {
		specs = append(specs, expected)
	}
	for _, f := range c.Families {
		if f.Kind == "file" || len(f.Editions) == 0 {
			continue
		}
		for _, t := range f.Editions[0].Tiers {
			if t.Burst != nil {
				specs = append(specs, f.ID+":"+t.Name)
			}
		}
	}
	var out []BurstMatch
	seen := map[string]bool{}
	for _, spec := range specs {
		d, err := c.ParseDisk(spec)
		if err != nil || d.Burst == nil || d.Burst.OptIn || seen[d.Spec] {
			continue
		}
		seen[d.Spec] = true
		b := d.Burst
		dist := math.Max(gap(iops, b.IOPS), gap(bw, b.BWBytes))
		if dist > burstWithin {
			continue
		}
		m := BurstMatch{Disk: d.Spec, BurstIOPS: b.IOPS, BurstBWBytes: b.BWBytes, BaseIOPS: b.BaselineIOPS, BaseBWBytes: b.BaselineBWBytes,
			BucketIOs: b.BucketIOs, BucketBytes: b.BucketBytes, Distance: dist}
		// How long a full bucket lasts at the rate measured: the
		// shorter of the IO and the byte bucket's.
		ios, bytes := b.Buckets(1)
		for _, x := range []struct {
			k    *limits.Bucket
			rate float64
		}{{ios, iops}, {bytes, bw}} {
			if x.k == nil || x.rate <= 0 {
				continue
			}
			if left := x.k.LeftS(x.rate); left > 0 && (m.LastsS == 0 || left < m.LastsS) {
				m.LastsS = left
			}
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Disk == expected) != (out[j].Disk == expected) {
			return out[i].Disk == expected
		}
		return out[i].Distance < out[j].Distance
	})
	return out
}
