package units

import (
	"fmt"
	"math"
	"strconv"
)

// A Quantity is a kind of measured figure and the range a real one lies
// in. Every reader of figures it did not compute itself (saved records,
// watch logs, the history, etcd's and Prometheus's answers) checks each
// against its quantity: NaN, an infinity, a negative or an absurd value
// is a refusal naming the field, or an unknown figure, never 0 and never
// a number wrapped round an integer. The bounds are far above what any
// disk, bus or machine does (a RAM disk on a large host does tens of
// millions of IOPS and hundreds of GB/s), so only a value that cannot be
// a measurement is refused.
type Quantity struct {
	// Name says what the figure is, for messages ("an IO rate").
	Name string
	// Min and Max bound a plausible value, both included.
	Min, Max float64
	// Unit is printed after Min and Max in messages.
	Unit string
	// Sentinel, when HasSentinel is set, is one value outside the range
	// that a format uses for "none" (-1 for IO pressure on a kernel
	// without PSI).
	Sentinel    float64
	HasSentinel bool
}

// The quantities iolens reads.
var (
	// IOPSFigure is an IO rate: IOs per second.
	IOPSFigure = Quantity{Name: "an IO rate", Max: 1e9, Unit: "IOPS"}
	// BandwidthFigure is a data rate in bytes per second.
	BandwidthFigure = Quantity{Name: "a data rate", Max: 1e13, Unit: "bytes/s"}
	// LatencyNsFigure is a latency in nanoseconds (up to about a day).
	LatencyNsFigure = Quantity{Name: "a latency", Max: 1e14, Unit: "ns"}
	// LatencyMsFigure is a latency in milliseconds (up to about a day).
	LatencyMsFigure = Quantity{Name: "a latency", Max: 1e8, Unit: "ms"}
	// LatencySecondsFigure is a latency in seconds (up to about a day).
	LatencySecondsFigure = Quantity{Name: "a latency", Max: 1e5, Unit: "s"}
	// SecondsFigure is a length of time in seconds (up to about 30 years).
	SecondsFigure = Quantity{Name: "a length of time", Max: 1e9, Unit: "s"}
	// TimeOffsetFigure is a time on a result's axis in seconds: samples
	// taken before the measurement began are negative.
	TimeOffsetFigure = Quantity{Name: "a time on the result's axis", Min: -1e9, Max: 1e9, Unit: "s"}
	// CountFigure is a count of IOs, samples or events.
	CountFigure = Quantity{Name: "a count", Max: 1e15}
	// BytesFigure is an amount of data in bytes (up to an exabyte).
	BytesFigure = Quantity{Name: "an amount of data", Max: 1e18, Unit: "bytes"}
	// DepthFigure is a queue depth, a number of jobs or of IOs in flight.
	DepthFigure = Quantity{Name: "a queue depth", Max: 1e7}
	// PercentFigure is a share of one thing (a device's busy time, the
	// CPUs' time) in percent, with room for sampling's jitter.
	PercentFigure = Quantity{Name: "a percentage", Max: 200, Unit: "%"}
	// PercentSumFigure is a percentage summed over several things (the
	// busy time of every other disk) or a rate against a ceiling.
	PercentSumFigure = Quantity{Name: "a percentage", Max: 1e6, Unit: "%"}
	// PressureFigure is the share of time some task waited on IO, or -1
	// when the kernel keeps no pressure figures.
	PressureFigure = Quantity{Name: "an IO pressure", Max: 100.5, Unit: "%", Sentinel: -1, HasSentinel: true}
	// FigureAny is a figure of no particular unit (evidence, slopes): any
	// sign, but finite and within what a measurement can be.
	FigureAny = Quantity{Name: "a figure", Min: -1e18, Max: 1e18}
)

// Known reports whether v is a plausible figure of q.
func (q Quantity) Known(v float64) bool {
	return v >= q.Min && v <= q.Max || q.HasSentinel && v == q.Sentinel
}

// Check is nil when v is a plausible figure of q, else a *FigureError
// naming field.
func (q Quantity) Check(field string, v float64) error {
	if q.Known(v) {
		return nil
	}
	return &FigureError{Field: field, Value: v, Quantity: q}
}

// Or is v when it is a plausible figure of q, else NaN: a figure that is
// unknown, which every formatter here prints as "-".
func (q Quantity) Or(v float64) float64 {
	if q.Known(v) {
		return v
	}
	return math.NaN()
}

// FigureError is a figure no measurement could give: NaN, an infinity, a
// negative or an absurd value, in a field a reader names.
type FigureError struct {
	Field    string
	Value    float64
	Quantity Quantity
}

func (e *FigureError) Error() string {
	q := e.Quantity
	why := "out of range"
	switch {
	case math.IsNaN(e.Value):
		why = "not a number"
	case math.IsInf(e.Value, 0):
		why = "infinite"
	case e.Value < 0 && q.Min >= 0:
		why = "negative"
	}
	unit := ""
	if q.Unit != "" {
		unit = " " + q.Unit
	}
	return fmt.Sprintf("%s is %s (%s): not %s, which lies between %s and %s%s",
		e.Field, strconv.FormatFloat(e.Value, 'g', 6, 64), why, q.Name, strconv.FormatFloat(q.Min, 'g', -1, 64), strconv.FormatFloat(q.Max, 'g', -1, 64), unit)
}

// Hint says what to do.
func (e *FigureError) Hint() string {
	return "no measurement gives this figure: the input was changed or damaged after it was written; read the original, or remove that record"
}

// printable reports whether x can be printed as a figure: finite and
// within what an int64 holds, so that no formatter wraps it round.
func printable(x float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && math.Abs(x) < 9e18
}
