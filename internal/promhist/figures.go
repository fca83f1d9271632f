package promhist

import (
	"fmt"
	"sort"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/units"
)

// The quantities of what the node exporter's series hold. A sample
// outside its quantity (1e308, a negative gauge) is unknown: the instant
// has no sample, as when the scrape is missing, never a figure read as
// it is.
var (
	// sampleTime is a scrape's time, in seconds since 1970.
	sampleTime = units.Quantity{Name: "a sample time", Max: 1e11, Unit: "s"}
	// busySeconds is a counter of seconds summed since boot: a device's
	// busy or waiting time, the CPUs' time, the time tasks waited on IO.
	busySeconds = units.Quantity{Name: "a counter of seconds", Max: 1e15, Unit: "s"}
	// memoryBytes is a host's dirty or writeback memory.
	memoryBytes = units.Quantity{Name: "an amount of memory", Max: 1e15, Unit: "bytes"}
)

// counterQuantity is the quantity of each of deviceCounters.
var counterQuantity = [len(deviceCounters)]units.Quantity{
	units.CountFigure, units.CountFigure, units.BytesFigure, units.BytesFigure,
	busySeconds, busySeconds, busySeconds, busySeconds,
}

// known is v with every value outside q unknown (NaN).
func known(v []float64, q units.Quantity) []float64 {
	for i, x := range v {
		v[i] = q.Or(x)
	}
	return v
}

// implausible names the first figure of an interval that no disk or host
// gives, "" when there is none: counters that are each plausible can still
// jump by more in one step than a device moves (1e15 bytes in 15 s).
func implausible(tk diskstats.Tick) string {
	names := make([]string, 0, len(tk.Devices))
	for d := range tk.Devices {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		r := tk.Devices[d]
		for _, c := range []struct {
			field string
			v     float64
			q     units.Quantity
		}{
			{"r/s", r.ReadIOPS, units.IOPSFigure}, {"w/s", r.WriteIOPS, units.IOPSFigure},
			{"read bytes/s", r.ReadBWBytes, units.BandwidthFigure}, {"written bytes/s", r.WriteBWBytes, units.BandwidthFigure},
			{"r_await", r.ReadAwaitMs, units.LatencyMsFigure}, {"w_await", r.WriteAwaitMs, units.LatencyMsFigure},
			{"aqu-sz", r.QueueSize, units.DepthFigure}, {"in flight", float64(r.InFlight), units.DepthFigure},
			{"rareq-sz", r.ReadReqBytes, units.BytesFigure}, {"wareq-sz", r.WriteReqBytes, units.BytesFigure},
			{"util", r.UtilPct, units.PercentFigure},
		} {
			if err := c.q.Check(d+" "+c.field, c.v); err != nil {
				return err.Error()
			}
		}
	}
	s := tk.System
	if err := units.PercentSumFigure.Check("other disks' util", s.OtherUtilPct); err != nil {
		return err.Error()
	}
	for _, c := range []struct {
		field string
		v     uint64
	}{{"dirty memory", s.DirtyBytes}, {"writeback memory", s.WritebackBytes}} {
		if err := memoryBytes.Check(c.field, float64(c.v)); err != nil {
			return err.Error()
		}
	}
	return ""
}

// gapWhy is a gap's reason in a report's words.
func gapWhy(g Gap) string {
	if g.Why == "" {
		return "no samples"
	}
	return fmt.Sprintf("figures no disk gives (%s)", g.Why)
}
