package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Operand is one side of a comparison. Name is what the user gave (a
// file, a selector, a run id); Label says what was measured in words
// (empty: Name says it).
type Operand struct {
	Name    string          `json:"name"`
	Label   string          `json:"label,omitempty"`
	Results []result.Result `json:"-"`
	// Diagnosis is the diagnosis of Results, built once by the command
	// that read them, and Stories its findings as the reports list them
	// (report.Stories): the operand's verdict and findings in the
	// comparison. Without them the comparison has neither.
	Diagnosis *diagnosis.Diagnosis `json:"-"`
	Stories   []Story              `json:"-"`
}

// Story is one line of an operand's findings: a curve, a test's stalls,
// the etcd verdict, or one finding however many tests drew it.
type Story struct {
	Severity, Subject, Summary string
}

// Title is how reports name an operand: its label, else its name.
func (o Operand) Title() string {
	if o.Label != "" {
		return o.Label
	}
	return o.Name
}

// Comparison is the whole side-by-side table.
type Comparison struct {
	// Schema says what the JSON is: no command reads it back as
	// results, and the reader says so.
	Schema   string   `json:"schema"`
	Operands []string `json:"operands"`
	// Labels name the operands in words, in the same order.
	Labels []string `json:"labels"`
	// Statuses say what became of each operand's runs (interrupted,
	// partial, failed or complete), in the same order.
	Statuses []result.RunStatus `json:"statuses"`
	Alpha    float64            `json:"alpha"`
	Rows     []Row              `json:"rows"`
	// Mismatches are the parameters that differ between operands for
	// the same test: a warning that the figures are not like for like.
	Mismatches []Mismatch `json:"mismatches"`
	// Costs has one entry per operand: what its disk costs per measured
	// IOPS and MB/s, nil when the disk is unknown or not priced.
	Costs []*Cost `json:"costs"`
	// Verdicts are each operand's diagnosis, side by side.
	Verdicts []Verdict `json:"verdicts"`
	// Findings are every operand's findings once per story, worst first
	// across operands.
	Findings []Finding `json:"findings"`
}

// Verdict is one operand's diagnosis as a comparison shows it.
type Verdict struct {
	Lines    []string `json:"verdict"`
	ToChange []string `json:"to_change"`
	// Figures are the headline figures by row name (FigureRows), each
	// with how sure it is and what binds it.
	Figures map[string]string `json:"figures"`
}

// Finding is one story of one operand.
type Finding struct {
	Operand  int    `json:"operand"`
	Severity string `json:"severity"`
	Subject  string `json:"subject"`
	Summary  string `json:"summary"`
}

// Row is one test and direction across the operands.
type Row struct {
	Test string `json:"test"`
	Dir  string `json:"dir"`
	// BlockSize is the test's block size (the first operand's that ran it).
	BlockSize int64 `json:"bs_bytes"`
	// Cells has one entry per operand, nil when it lacks the test.
	Cells []*Cell `json:"cells"`
}

// Cell is one operand's figures for a row.
type Cell struct {
	// N is the number of results (repeats, or runs in a selection).
	N       int     `json:"n"`
	IOPS    float64 `json:"iops"`     // mean over the N results
	BWBytes float64 `json:"bw_bytes"` // bytes/s, mean over the N results
	P50Ns   float64 `json:"p50_ns"`   // from the merged histogram
	P99Ns   float64 `json:"p99_ns"`
	P999Ns  float64 `json:"p99_9_ns"`
	Samples uint64  `json:"lat_samples"`
	// NoPercentiles: several results without histograms, whose
	// percentiles cannot be merged (and must not be averaged).
	NoPercentiles bool      `json:"no_percentiles,omitempty"`
	IOPSAll       []float64 `json:"iops_values"`
	P99All        []float64 `json:"p99_ns_values"`
	// IOPSWindows is the rate of each second of a lone result (fio's
	// series, its 250 ms windows merged into seconds): what a side of
	// one result is compared by.
	IOPSWindows []float64 `json:"iops_windows,omitempty"`
	// Diff* are percent differences to the first operand's cell (absent
	// for the first operand itself or when it lacks the row).
	DiffIOPSPct *float64 `json:"diff_iops_pct,omitempty"`
	DiffBWPct   *float64 `json:"diff_bw_pct,omitempty"`
	DiffP50Pct  *float64 `json:"diff_p50_pct,omitempty"`
	DiffP99Pct  *float64 `json:"diff_p99_pct,omitempty"`
	DiffP999Pct *float64 `json:"diff_p99_9_pct,omitempty"`
	// IOPSTest and P99Test compare the per-result values with the first
	// operand's.
	IOPSTest *Welch `json:"iops_test,omitempty"`
	P99Test  *Welch `json:"p99_test,omitempty"`
}

// Welch is the outcome of Welch's t-test between two samples.
type Welch struct {
	// Enough is false when either side has fewer than two values or
	// neither varies: then T, DF and P are not set.
	Enough bool `json:"enough_data"`
	// Basis says what the samples were: "results" (repeats, or runs in
	// a selection), or "windows" (one result a side: the rate of each
	// second of it, fio's per-window series).
	Basis       string  `json:"basis,omitempty"`
	T           float64 `json:"t"`
	DF          float64 `json:"df"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// Verdict is the short form used in tables.
func (w *Welch) Verdict() string {
	switch {
	case w == nil:
		return ""
	case !w.Enough:
		return "not enough data"
	case w.Significant:
		return "significant"
	}
	return "not significant"
}

// Strength words how sure a significant difference is: "clear" below
// p=0.01, "likely" below the significance level, "noise" above it.
func (w *Welch) Strength() string {
	switch {
	case w == nil || !w.Enough:
		return ""
	case w.P < 0.01:
		return "clear"
	case w.Significant:
		return "likely"
	}
	return "noise"
}

// Change words a test's outcome for a figure where higher is better when
// higherBetter: "better" or "worse" when the difference is significant,
// "same" when it is not, "" when there is no test (the first operand, or
// too few results on either side).
func (w *Welch) Change(higherBetter bool) string {
	switch {
	case w == nil || !w.Enough:
		return ""
	case !w.Significant:
		return "same"
	case (w.T > 0) == higherBetter:
		return "better"
	}
	return "worse"
}

// IOPSChange is the IOPS test's outcome: more IOPS is better.
func (x *Cell) IOPSChange() string {
	if x == nil {
		return ""
	}
	return x.IOPSTest.Change(true)
}

// P99Change is the p99 test's outcome: a lower p99 is better.
func (x *Cell) P99Change() string {
	if x == nil {
		return ""
	}
	return x.P99Test.Change(false)
}

// FigureRows name the headline figures of Verdict.Figures, in order.
var FigureRows = []string{"read IOPS", "read MB/s", "write IOPS", "write MB/s", "QD1 read latency", "fsync p99", "looks like"}

// Cost is what an operand's disk costs for what was measured on it: its
// monthly list price divided by the most IOPS (small blocks) and the
// most MB/s (large blocks) any of its tests delivered.
type Cost struct {
	// Disk is the catalog disk the results were compared with (their
	// "expect" label: --expect, a storage class or cloud metadata).
	Disk        string   `json:"disk"`
	USDPerMonth float64  `json:"usd_per_month"`
	Region      string   `json:"region"`
	AsOf        string   `json:"as_of"`
	Source      string   `json:"source"`
	Notes       []string `json:"notes,omitempty"`
	// IOPS is the highest small-block IOPS measured (IOPSTest's), and
	// USDPerIOPS the monthly price over it; 0 when none was measured.
	IOPS       float64 `json:"iops"`
	IOPSTest   string  `json:"iops_test,omitempty"`
	USDPerIOPS float64 `json:"usd_per_iops_month"`
	// BWBytes is the highest large-block bytes/s measured (BWTest's),
	// and USDPerMBps the monthly price per MB/s (10^6 B/s) of it.
	BWBytes    float64 `json:"bw_bytes"`
	BWTest     string  `json:"bw_test,omitempty"`
	USDPerMBps float64 `json:"usd_per_mbps_month"`
}

// Mismatch is a parameter that differs between the operands for some
// tests: their figures are then not like for like.
type Mismatch struct {
	Param string `json:"param"`
	// Values has one entry per operand: the parameter's values over its
	// results of the tests ("a, b" when they vary within it), empty when
	// the operand lacks them.
	Values []string `json:"values"`
	// Tests are the tests it concerns, in row order.
	Tests []string `json:"tests"`
	// Shared is how many tests two operands or more ran: when Tests has
	// them all, the parameter differs everywhere.
	Shared int `json:"-"`
}

// String says it in a line: "runtime differs: A 60 s; B 20 s (in
// randread-4k)".
func (m Mismatch) String() string {
	var parts []string
	for i, v := range m.Values {
		if v != "" {
			parts = append(parts, Letter(i)+" "+v)
		}
	}
	var in string
	switch n := len(m.Tests); {
	case n > 1 && n == m.Shared:
		in = fmt.Sprintf("in all %d tests", n)
	case n > 3:
		in = fmt.Sprintf("in %s and %d more tests", strings.Join(m.Tests[:2], ", "), n-2)
	default:
		in = "in " + strings.Join(m.Tests, ", ")
	}
	return fmt.Sprintf("%s differs: %s (%s)", m.Param, strings.Join(parts, "; "), in)
}

// Letter names operand i in tables: A, B, ... Z, then A2, B2...
func Letter(i int) string {
	s := string(rune('A' + i%26))
	if i >= 26 {
		s += strconv.Itoa(i/26 + 1)
	}
	return s
}

// Figure is one figure of a node's disk model.
type Figure struct {
	// Name says what it is ("read IOPS", "fsync p99").
	Name string `json:"name"`
	// Value is the node's figure; Others the median of all nodes' (the
	// other node's figure for a pair).
	Value  float64 `json:"value"`
	Others float64 `json:"median"`
	// Unit is "iops", "bytes/s" or "ns".
	Unit string `json:"unit"`
	// Limit is the code of the limit that binds the node's figure, and
	// OthersLimit the others' when they agree ("" when unknown).
	Limit       string `json:"limit,omitempty"`
	OthersLimit string `json:"others_limit,omitempty"`
	// Ratio is Value/Others.
	Ratio float64 `json:"ratio"`
}

// Outlier is a node whose figures differ from the other nodes'.
type Outlier struct {
	Node    string   `json:"node"`
	Figures []Figure `json:"figures"`
	// Why is what may explain it.
	Why string `json:"why"`
}

// NodeComparison is the comparison of the nodes of one diagnose run.
type NodeComparison struct {
	Nodes []string `json:"nodes"`
	// Threshold is the relative difference counted as beyond noise.
	Threshold float64   `json:"threshold"`
	Outliers  []Outlier `json:"outliers"`
}

// FormatFigure writes a node's figure in its unit.
func FormatFigure(f Figure) string { return units.Measure(f.Value, f.Unit) }

// FormatOthers writes the other nodes' median in the figure's unit.
func FormatOthers(f Figure) string { return units.Measure(f.Others, f.Unit) }

// StatusMark is " [interrupted: why]" after an operand whose runs did not
// all end complete, and "" otherwise.
func (c Comparison) StatusMark(i int) string {
	if i >= len(c.Statuses) || c.Statuses[i].State == "" || c.Statuses[i].State == result.RunComplete {
		return ""
	}
	return " [" + c.Statuses[i].String() + "]"
}
