package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// repeatRows formats the statistics of every repeated test: IOPS mean,
// sd, 95% CI, CV, min, max, and latency percentiles of the merged
// histograms.
func repeatRows(rs []result.Result) [][]string {
	var out [][]string
	for _, tr := range analysis.Repeats(rs) {
		for _, d := range tr.Dirs {
			s := d.IOPS
			flag := ""
			if d.Unstable {
				flag = "UNSTABLE: " + d.Why
			}
			p50, p99, p999 := units.Millis(d.P50Ns), units.Millis(d.P99Ns), units.Millis(d.P999Ns)
			if d.NoPercentiles {
				p50, p99, p999 = "n/a", "n/a", "n/a"
			}
			out = append(out, []string{tr.Test, d.Dir, fmt.Sprint(s.N), units.Whole(s.Mean), units.Whole(s.SD),
				ciText(s), fmt.Sprintf("%.1f%%", s.CV*100), units.Whole(s.Min), units.Whole(s.Max), p50, p99, p999, flag})
		}
	}
	return out
}

// ciText is a 95% interval as the reports print it. An interval that
// analysis stopped at zero says why: the runs were too few to bound the
// mean from below.
func ciText(s analysis.Summary) string {
	t := units.Whole(s.CILow) + ".." + units.Whole(s.CIHigh)
	if s.Truncated {
		t += " (too few runs)"
	}
	return t
}

var repeatHeader = []string{"test", "dir", "n", "IOPS mean", "sd", "95% CI", "CV", "min", "max", "p50", "p99", "p99.9", ""}

func writeRepeatsText(w io.Writer, rs []result.Result) error {
	rows := repeatRows(rs)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRepeats (IOPS over the runs; 95% CI from Student's t; latency percentiles in ms from the merged histograms)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  "+strings.Join(repeatHeader, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = cell(c) // a tab in a name is not a column, a huge one is clipped
		}
		fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

func writeRepeatsMD(w io.Writer, rs []result.Result) {
	rows := repeatRows(rs)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Repeats\n\nIOPS over the runs; 95%% CI from Student's t; latency percentiles in ms from the merged histograms.\n\n")
	fmt.Fprintln(w, "| "+strings.Join(repeatHeader[:len(repeatHeader)-1], " | ")+" | stability |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, r := range rows {
		for i := range r {
			r[i] = mdEscape(r[i])
		}
		fmt.Fprintln(w, "| "+strings.Join(r, " | ")+" |")
	}
}
