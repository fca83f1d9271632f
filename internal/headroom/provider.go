package headroom

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/units"
)

// The EBS CSI driver's node plugin counters of the time a volume's
// demand exceeded its own limits and its instance's (labelled volume_id,
// instance_id).
var ebsCounters = [...]string{
	"aws_ebs_csi_exceeded_iops_seconds_total",
	"aws_ebs_csi_exceeded_tp_seconds_total",
	"aws_ebs_csi_ec2_exceeded_iops_seconds_total",
	"aws_ebs_csi_ec2_exceeded_tp_seconds_total",
}

// Provider is what the provider's own counters say of a volume over the
// range: the seconds its demand exceeded the volume's IOPS and
// throughput limits, and the instance's.
type Provider struct {
	ExceededIOPSS    float64 `json:"exceeded_iops_s"`
	ExceededTPS      float64 `json:"exceeded_tp_s"`
	EC2ExceededIOPSS float64 `json:"ec2_exceeded_iops_s"`
	EC2ExceededTPS   float64 `json:"ec2_exceeded_tp_s"`
	// Agrees: the provider's time above the volume's limits (the longer
	// of IOPS and throughput) is within one step, or 10%, of iolens's
	// time at the cap; Says how they compare.
	Agrees bool   `json:"agrees"`
	Says   string `json:"says"`
}

// readProvider asks for the EBS counters of the volumes whose volume
// ids are known, one query per counter for all of them: each counter's
// increase over the range, from its values at the range's two ends (a
// series that starts inside the range counts from zero).
func (r *reader) readProvider(ctx context.Context) error {
	ids := map[string]*Volume{}
	var list []string
	for _, v := range r.vols {
		if v.VolumeID != "" {
			ids[v.VolumeID] = v
			list = append(list, v.VolumeID)
		}
	}
	if len(list) == 0 {
		return nil
	}
	sel := promql.Selector{{Name: "volume_id", Op: "=~", Value: promql.Alternatives(list)}}
	g := promhist.Grid{Start: r.o.From, Step: r.o.To.Sub(r.o.From).Round(time.Millisecond), N: 2}
	if g.Step <= 0 {
		return nil
	}
	got := map[string]*Provider{}
	for i, m := range ebsCounters {
		cols, _, err := r.c.Range(ctx, sel.Of(m), g, r.o.MaxSeries)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// The provider's view is an addition: without it the report
			// stands, and says why it lacks it.
			r.rep.Notes = append(r.rep.Notes, "the EBS CSI driver's counters could not be read: "+err.Error())
			return nil
		}
		for _, col := range cols {
			id := col.Labels["volume_id"]
			if ids[id] == nil || math.IsNaN(col.V[1]) {
				continue
			}
			inc := col.V[1]
			if !math.IsNaN(col.V[0]) && col.V[0] <= col.V[1] {
				inc = col.V[1] - col.V[0]
			}
			p := got[id]
			if p == nil {
				p = &Provider{}
				got[id] = p
			}
			switch i {
			case 0:
				p.ExceededIOPSS += inc
			case 1:
				p.ExceededTPS += inc
			case 2:
				p.EC2ExceededIOPSS += inc
			case 3:
				p.EC2ExceededTPS += inc
			}
		}
	}
	if len(got) == 0 {
		r.rep.Notes = append(r.rep.Notes, "no EBS CSI driver counters (aws_ebs_csi_exceeded_*) for the volumes' ids: the provider's own view is not compared (enable the driver's node metrics to have it)")
		return nil
	}
	for id, p := range got {
		ids[id].Provider = p
	}
	return nil
}

// compareProvider says whether the provider's time above the volume's
// limits agrees with iolens's time at the cap.
func (v *Volume) compareProvider(step float64) {
	p := v.Provider
	if p == nil {
		return
	}
	theirs := math.Max(p.ExceededIOPSS, p.ExceededTPS)
	tol := math.Max(step, 0.1*math.Max(theirs, v.AtCapS))
	p.Agrees = math.Abs(theirs-v.AtCapS) <= tol
	word := "agrees with"
	if !p.Agrees {
		word = "disagrees with"
	}
	p.Says = fmt.Sprintf("the provider counts %s above the volume's limits (%s above the instance's), which %s iolens's %s at the cap",
		units.FormatSeconds(theirs), units.FormatSeconds(math.Max(p.EC2ExceededIOPSS, p.EC2ExceededTPS)), word, units.FormatSeconds(v.AtCapS))
}
