package analysis

import (
	"math"

	"github.com/iolens/iolens/internal/result"
)

// LatLog analyses a per-IO latency log (fio's write_lat_log without
// log_avg_msec) as it streams by: a latency histogram on fio's grid, and
// 1 s windows of throughput fed to the stall and cliff detectors. Memory
// is constant whatever the log's length. Rows must come in time order, as
// fio writes them (a row a little out of order joins the current window).
type LatLog struct {
	hist   result.Histogram
	maxNs  float64
	sumNs  float64
	stall  *StallDetector
	cliff  *CliffDetector
	unit   string
	sec    int64 // current window: (sec-1, sec] seconds
	ios    float64
	bytes  float64
	found  []result.Finding
	first  bool
	rows   uint64
	nWins  int
	noSize bool
}

// NewLatLog starts an analysis.
func NewLatLog() *LatLog {
	return &LatLog{first: true}
}

// Add takes one row of the log: its time in ms, the IO's latency in ns
// and its size in bytes (0 when the log has none).
func (a *LatLog) Add(timeMs int64, latNs float64, bs int64) {
	a.rows++
	ns := math.Max(latNs, 0)
	a.hist.Add(uint64(ns), 1)
	a.sumNs += ns
	a.maxNs = math.Max(a.maxNs, ns)
	sec := (timeMs + 999) / 1000 // the window (s-1, s] holds the row
	if a.first {
		a.first = false
		a.noSize = bs <= 0
		a.unit = unitBytes
		if a.noSize {
			a.unit = UnitIOPS
		}
		a.stall = newStallDetector(StallConfig{Unit: a.unit})
		a.cliff = NewCliffDetector(CliffConfig{Unit: a.unit})
		a.sec = max(sec, 1)
	}
	if sec > a.sec {
		a.emit()
		a.sec = sec
	}
	a.ios++
	a.bytes += float64(max(bs, 0))
}

func (a *LatLog) emit() {
	v := a.bytes
	if a.noSize {
		v = a.ios
	}
	t := float64(a.sec)
	a.found = append(a.found, a.stall.Add(t, v, nil)...)
	a.found = append(a.found, a.cliff.Add(t, v, nil)...)
	a.ios, a.bytes = 0, 0
	a.nWins++
}

// LatLogSummary is what a latency log showed.
type LatLogSummary struct {
	IOs                  uint64
	MeanNs, MaxNs        float64
	P50Ns, P99Ns, P999Ns float64
	Seconds              int
	Unit                 string
	Findings             []result.Finding
	Histogram            *result.Histogram
}

// Finish ends the log and returns the summary. The last window is
// usually partial and is left out of the series.
func (a *LatLog) Finish() LatLogSummary {
	s := LatLogSummary{IOs: a.rows, MaxNs: a.maxNs, Unit: a.unit, Histogram: &a.hist}
	if a.rows == 0 {
		return s
	}
	s.MeanNs = a.sumNs / float64(a.rows)
	p := a.hist.Percentiles([]float64{50, 99, 99.9})
	s.P50Ns, s.P99Ns, s.P999Ns = result.ClipNs(p[0], a.maxNs), result.ClipNs(p[1], a.maxNs), result.ClipNs(p[2], a.maxNs)
	s.Seconds = a.nWins
	if a.nWins >= minSeriesS {
		s.Findings = append(a.found, a.stall.Flush()...)
		s.Findings = append(s.Findings, a.cliff.Flush()...)
	} else {
		s.Findings = []result.Finding{{Kind: kindSteady, Code: result.CodeNotJudged, Severity: SevInfo,
			Summary: "not enough data: the log covers fewer than 10 whole seconds; stalls and cliffs were not judged"}}
	}
	return s
}
