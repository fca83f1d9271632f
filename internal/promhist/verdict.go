package promhist

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Clock prints the instants of one analysis: the time of day when the
// range lies within one day, the date too when it does not, in one zone.
type Clock struct {
	Loc     *time.Location
	withDay bool
}

// NewClock prints a's instants in loc (UTC when nil).
func NewClock(a *Analysis, loc *time.Location) Clock {
	if loc == nil {
		loc = time.UTC
	}
	f, t := a.From.In(loc), a.To.In(loc)
	return Clock{Loc: loc, withDay: f.YearDay() != t.YearDay() || f.Year() != t.Year()}
}

// At prints an instant.
func (c Clock) At(t time.Time) string {
	if c.withDay {
		return t.In(c.Loc).Format("Jan 02 15:04:05")
	}
	return t.In(c.Loc).Format("15:04:05")
}

// Span prints from–to.
func (c Clock) Span(a, b time.Time) string { return c.At(a) + "–" + c.At(b) }

// Full prints an instant with its date, its zone and the zone's offset
// from UTC: "2026-03-01 14:00:00 UTC+00:00", "2026-03-01 15:00:00 CET+01:00".
func (c Clock) Full(t time.Time) string { return t.In(c.Loc).Format("2006-01-02 15:04:05 MST-07:00") }

// Line is one statement of the verdict.
type Line struct {
	Severity string
	Device   string
	Start    time.Time
	End      time.Time
	Text     string
}

// Describe says what a finding is, with its times.
func (c Clock) Describe(f Finding) string {
	ev := f.Evidence
	span := fmt.Sprintf("%s (%s)", c.Span(f.Start, f.End), units.FormatDuration(f.End.Sub(f.Start)))
	still := ""
	if f.Ongoing {
		still = ", still going when the samples stop"
	}
	who := f.Device
	if who != "" {
		who += " "
	}
	switch f.Kind {
	case result.KindStall:
		from, to := ev["ref_bytes_s"], ev["min_bytes_s"]
		if f.Ongoing {
			to = ev["bytes_s"]
		}
		return fmt.Sprintf("%sstalled %s%s at %s, from %s before (queue up to %.1f)", who, span, still, units.MBps(to), units.MBps(from), math.Max(ev["peak_aqu_sz"], ev["aqu_sz"]))
	case result.KindSaturation:
		return fmt.Sprintf("%ssaturated %s%s: aqu-sz up to %.1f, await up to %s ms", who, span, still,
			math.Max(ev["peak_aqu_sz"], ev["aqu_sz"]), units.Figure(ev["peak_await_ms"]))
	case result.KindCap:
		return fmt.Sprintf("%sat the expected ceiling %s%s", who, span, still)
	case result.KindCliff:
		unit := units.MBps
		if strings.Contains(f.Summary, " IOPS") {
			unit = units.IOPS
		}
		hi, lo := ev["burst_rate"], ev["plateau_rate"]
		drop := 0.0
		if hi > 0 {
			drop = (1 - lo/hi) * 100
		}
		// A history shows the rate, not the workload: a workload that
		// eased looks the same as a disk whose credits ran out.
		return fmt.Sprintf("%scliff at %s: %s for %s from %s, then %s (%.0f%% lower) and it stayed there: burst credits or a write cache ran out, or the workload eased (the series alone cannot tell which)",
			who, c.At(f.End), unit(hi), units.FormatDuration(f.End.Sub(f.Start)), c.At(f.Start), unit(lo), drop)
	case result.KindWriteback:
		return fmt.Sprintf("writeback storm %s%s: up to %s under writeback, %s dirty, iowait up to %.0f%%", span, still,
			units.HumanBytes(math.Max(ev["peak_writeback_bytes"], ev["writeback_bytes"])), units.HumanBytes(math.Max(ev["peak_dirty_bytes"], ev["dirty_bytes"])),
			math.Max(ev["peak_iowait_pct"], ev["iowait_pct"]))
	}
	return fmt.Sprintf("%s%s: %s", who, c.At(f.Start), f.Summary)
}

// DescribeCeiling says what a flat ceiling is, where it showed and what
// it fits.
func (c Clock) DescribeCeiling(cl Ceiling) string {
	var b strings.Builder
	dir := cl.Dir
	if dir == "total" {
		dir = "read+write"
	}
	fmt.Fprintf(&b, "%s flat %s ceiling %s", cl.Device, dir, cl.level())
	if cl.Code == result.CodeBandwidthCap {
		fmt.Fprintf(&b, " (%s IOPS", units.Figure(cl.IOPS))
	} else {
		fmt.Fprintf(&b, " (%s", units.MBps(cl.BWBytes))
	}
	if cl.ReqBytes > 0 {
		fmt.Fprintf(&b, " of %s", units.HumanBytes(cl.ReqBytes))
	}
	b.WriteString(")")
	first := cl.Episodes[0]
	if cl.NEpisodes == 1 {
		fmt.Fprintf(&b, ", held %s (%s)", c.Span(first.Start, first.End), units.FormatDuration(first.End.Sub(first.Start)))
	} else {
		fmt.Fprintf(&b, ", held %s in %d spans, the first %s", units.FormatSeconds(cl.HeldS), cl.NEpisodes, c.Span(first.Start, first.End))
	}
	var why []string
	if cl.PeakIowaitPct >= ceilingIowaitPct {
		why = append(why, fmt.Sprintf("iowait up to %.0f%%", cl.PeakIowaitPct))
	}
	if cl.PeakQueue >= 1 {
		why = append(why, fmt.Sprintf("aqu-sz up to %.1f", cl.PeakQueue))
	}
	if cl.MeanUtilPct >= 50 {
		why = append(why, fmt.Sprintf("util %.0f%%", cl.MeanUtilPct))
	}
	if len(why) > 0 {
		fmt.Fprintf(&b, ", with IO waiting (%s)", strings.Join(why, ", "))
	}
	if len(cl.Fits) > 0 {
		var fs []string
		for _, f := range cl.Fits {
			fs = append(fs, fmt.Sprintf("%s (%s, %.0f%% off)", f.Name, units.IOPS(f.IOPS)+", "+units.MBps(f.BWBytes), f.Distance*100))
		}
		fmt.Fprintf(&b, "; matches %s", strings.Join(fs, ", "))
	}
	return b.String()
}

// maxLines bounds the verdict of one node; -o json has every finding.
const maxLines = 30

// Verdict is what a node's history shows, in time order: each finding
// and ceiling with its times, then the gaps.
func (c Clock) Verdict(n *Node) []Line {
	var ls []Line
	for _, f := range n.Findings {
		switch f.Kind {
		case "device", "expect", "discovery":
			continue
		}
		ls = append(ls, Line{Severity: f.Severity, Device: f.Device, Start: f.Start, End: f.End, Text: c.Describe(f)})
	}
	for _, cl := range n.Ceilings {
		ls = append(ls, Line{Severity: "info", Device: cl.Device, Start: cl.Episodes[0].Start, End: cl.Episodes[0].End, Text: c.DescribeCeiling(cl)})
	}
	for _, g := range n.Gaps {
		ls = append(ls, Line{Severity: "info", Start: g.From, End: g.To, Text: fmt.Sprintf("%s %s (%s): nothing can be said of it", gapWhy(g), c.Span(g.From, g.To), units.FormatDuration(g.To.Sub(g.From)))})
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].Start.Before(ls[j].Start) })
	if len(ls) > maxLines {
		more := len(ls) - maxLines + 1
		ls = append(ls[:maxLines-1], Line{Severity: "info", Text: fmt.Sprintf("and %d more (-o json lists them all)", more)})
	}
	if n.Dropped > 0 {
		ls = append(ls, Line{Severity: "info", Text: fmt.Sprintf("%d more findings were not kept (at most %d a node)", n.Dropped, maxFindings)})
	}
	return ls
}

// Nothing is the verdict of a node where nothing was found.
const Nothing = "nothing found: no stall, cliff, flat ceiling, saturation or writeback storm"

// Results are the analysis as iolens records (for --out and the HTML
// report): one per device, with the device's series and the host's, and
// the findings on the result's own time axis, their summaries printed
// in loc.
func (a *Analysis) Results(loc *time.Location) []result.Result {
	clk := NewClock(a, loc)
	var out []result.Result
	for _, n := range a.Nodes {
		out = append(out, n.results(a, clk)...)
	}
	return out
}

func (n *Node) results(a *Analysis, clk Clock) []result.Result {
	var out []result.Result
	for i, d := range n.Devices {
		r := result.Result{Schema: result.Schema, RunID: "prometheus:" + a.Prometheus, Suite: "prometheus", Index: i + 1, Repeat: 1,
			Test:   result.TestSpec{Name: d, Description: "the node exporter's counters of " + d + " on " + n.Instance},
			Target: result.Target{Kind: "prometheus", Path: n.Instance, Device: d, Devices: []string{d}, Labels: map[string]string{"selector": a.Selector}},
			Host:   result.Host{Hostname: n.Instance}, Start: n.First, End: n.Last, Status: "ok", SampleIntervalS: a.StepS,
			FioSeries: []result.FioSample{}, Devices: []result.DeviceSeries{}, System: []result.SystemSample{}, Notes: a.Notes}
		if a.Expect != "" {
			r.Target.Labels["expect"] = a.Expect
		}
		rel := func(t time.Time) *float64 { v := t.Sub(n.First).Seconds(); return &v }
		if st := n.series[d]; st != nil {
			ds := result.DeviceSeries{Device: d, Role: "direct", Samples: []result.DeviceSample{}}
			for _, p := range st.points() {
				s := p.s
				s.T = p.end.Sub(n.First).Seconds()
				ds.Samples = append(ds.Samples, s)
			}
			r.Devices = append(r.Devices, ds)
			if pts := st.points(); len(pts) > 1 {
				r.SampleIntervalS = pts[len(pts)-1].dt
			}
		}
		for _, p := range n.system.points() {
			s := p.s
			s.T = p.end.Sub(n.First).Seconds()
			r.System = append(r.System, s)
		}
		for _, f := range n.Findings {
			if f.Device != d && (f.Device != "" || i > 0) {
				continue
			}
			rf := f.Finding
			rf.Summary = clk.Describe(f)
			rf.StartS = rel(f.Start)
			dd := f.End.Sub(f.Start).Seconds()
			rf.DurationS = &dd
			r.Findings = append(r.Findings, rf)
		}
		for _, cl := range n.Ceilings {
			if cl.Device != d {
				continue
			}
			dir := cl.Dir
			if dir == "total" {
				dir = ""
			}
			ev := map[string]float64{"iops": cl.IOPS, "bw_bytes": cl.BWBytes, "req_bytes": cl.ReqBytes, "held_s": cl.HeldS,
				"episodes": float64(cl.NEpisodes), "peak_iowait_pct": cl.PeakIowaitPct, "peak_aqu_sz": cl.PeakQueue}
			if cl.Code == result.CodeIOPSCap {
				ev["limit_iops"] = cl.IOPS
			} else {
				ev["limit_bw_bytes"] = cl.BWBytes
			}
			e := cl.Episodes[0]
			dd := e.End.Sub(e.Start).Seconds()
			r.Findings = append(r.Findings, result.Finding{Kind: result.KindLimit, Code: cl.Code, Severity: "info", Dir: dir,
				Summary: clk.DescribeCeiling(cl), StartS: rel(e.Start), DurationS: &dd, Evidence: ev})
		}
		out = append(out, r)
	}
	return out
}
