package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/units"
)

// cmpDiff is a difference in percent, or, beyond ±1000%, the ratio it
// stands for ("81×"): "+8073.5%" is read by nobody.
func cmpDiff(p *float64) string {
	if p == nil {
		return ""
	}
	if *p >= 1000 {
		return units.Ratio(1 + *p/100)
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

// with appends a bracketed difference to a figure.
func cmpWith(fig string, p *float64) string {
	if d := cmpDiff(p); d != "" {
		return fig + " (" + d + ")"
	}
	return fig
}

// changeText words a test's outcome for the tables in words a person
// reads: "better (clear)", "worse (likely)", "no change (noise)" or "not
// enough data". The p-value goes in changeTitle.
func changeText(w *compare.Welch, higherBetter bool) string {
	switch {
	case w == nil:
		return ""
	case !w.Enough:
		return "not enough data"
	}
	switch w.Change(higherBetter) {
	case "better":
		return "better (" + w.Strength() + ")"
	case "worse":
		return "worse (" + w.Strength() + ")"
	}
	return "no change (noise)"
}

// changeTitle is the test behind changeText: its p-value and what it was
// taken over, for a hover title.
func changeTitle(w *compare.Welch) string {
	if w == nil || !w.Enough {
		return ""
	}
	over := map[string]string{"windows": "the rate of each second of each run", "results": "the results (repeats, or runs of a selection)",
		"histograms": "each run's latency histogram (the 95% interval of its p99)"}[w.Basis]
	t := "p=" + strconv.FormatFloat(w.P, 'g', 2, 64)
	if over != "" {
		t += ", over " + over
	}
	return t
}

// compareCells formats one cell the way every table shows it: IOPS, MB/s, p50,
// p99, p99.9 (ms), each with its difference to the first operand, then
// whether the IOPS and p99 are better or worse, when significant.
func compareCells(x *compare.Cell, dir string) []string {
	if x == nil {
		return []string{"-", "-", "-", "-", "-", "", ""}
	}
	mb := cmpWith(units.MB(x.BWBytes), x.DiffBWPct)
	if dir == "sync" {
		mb = "-"
	}
	lat := func(ns float64, p *float64) string {
		if x.NoPercentiles {
			return "n/a"
		}
		return cmpWith(units.Millis(ns), p)
	}
	return []string{cmpWith(units.Whole(x.IOPS), x.DiffIOPSPct), mb, lat(x.P50Ns, x.DiffP50Pct), lat(x.P99Ns, x.DiffP99Pct),
		lat(x.P999Ns, x.DiffP999Pct), changeText(x.IOPSTest, true), changeText(x.P99Test, false)}
}

// compareHeader names the columns of CompareCells.
var compareHeader = []string{"IOPS", "MB/s", "p50 ms", "p99 ms", "p99.9 ms", "IOPS change", "p99 change"}

// CompareText prints one block per test and direction, one line per operand.
func CompareText(w io.Writer, c compare.Comparison) error {
	if len(c.Rows) == 0 {
		_, err := fmt.Fprintln(w, "nothing to compare: no successful results")
		return err
	}
	if len(c.Mismatches) > 0 {
		fmt.Fprintln(w, "WARNING: "+mismatchHeadline)
		for _, m := range c.Mismatches {
			fmt.Fprintf(w, "  %s\n", cmpOneLine(m.String()))
		}
		fmt.Fprintln(w)
	}
	writeOperands(w, c, func(s string) string { return cmpOneLine(s) })
	fmt.Fprintln(w)
	if len(c.Verdicts) > 0 {
		fmt.Fprintln(w, "Verdicts side by side")
		vt := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := []string{""}
		for i := range c.Operands {
			head = append(head, "["+compare.Letter(i)+"]")
		}
		fmt.Fprintln(vt, "  "+strings.Join(head, "\t"))
		for _, row := range verdictRows(c) {
			for j := range row {
				row[j] = cmpOneLine(row[j])
			}
			fmt.Fprintln(vt, "  "+strings.Join(row, "\t"))
		}
		if err := vt.Flush(); err != nil {
			return err
		}
		for i, v := range c.Verdicts {
			for _, a := range v.ToChange {
				fmt.Fprintf(w, "  [%s] to change: %s\n", compare.Letter(i), cmpOneLine(a))
			}
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "test\tdir\t\t%s\tn\n", strings.Join(compareHeader, "\t"))
	for _, r := range c.Rows {
		for i, x := range r.Cells {
			name, dir := cmpOneLine(r.Test), r.Dir
			if i > 0 {
				name, dir = "", ""
			}
			n := "-"
			if x != nil {
				n = strconv.Itoa(x.N)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, dir, compare.Letter(i), strings.Join(compareCells(x, r.Dir), "\t"), n)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Findings) > 0 {
		fmt.Fprintln(w, "\nFindings, worst first across operands")
		for _, f := range c.Findings {
			fmt.Fprintf(w, "  [%s] %s%s: %s\n", compare.Letter(f.Operand), cmpSevTag(f.Severity), cmpOneLine(f.Subject), cmpOneLine(f.Summary))
		}
	}
	if lines := costLines(c); len(lines) > 0 {
		fmt.Fprintln(w, "\nCost (list price a month, over the most IOPS and MB/s measured)")
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", cmpOneLine(l))
		}
	}
	_, err := fmt.Fprintf(w, "\nMB/s = 10^6 bytes/s; percentiles from merged histograms; differences against [A]; %s\n", testNote(c.Alpha))
	return err
}

// testNote says how significance is judged.
func testNote(alpha float64) string {
	return fmt.Sprintf("Welch's t-test at alpha %.2f over the results (repeats, or runs of a selection); with one result a side, over the IOPS of each of its seconds (fio's per-window series), and for p99 over each run's latency histogram (the 95%% interval of its p99); clear: p below 0.01, likely: below %.2f, noise: above (the p-values are in -o json and csv)", alpha, alpha)
}

// writeOperands lists the operands: the letter, the label, and what the
// user gave when the label differs from it.
func writeOperands(w io.Writer, c compare.Comparison, esc func(string) string) {
	for i, op := range c.Operands {
		label := op
		if i < len(c.Labels) && c.Labels[i] != "" {
			label = c.Labels[i]
		}
		if label != op {
			fmt.Fprintf(w, "[%s] %s (%s)%s\n", compare.Letter(i), esc(label), esc(op), c.StatusMark(i))
		} else {
			fmt.Fprintf(w, "[%s] %s%s\n", compare.Letter(i), esc(label), c.StatusMark(i))
		}
	}
}

// verdictRows are the operands' headline figures side by side: a row
// per figure any of them measured, its name then one cell per operand.
func verdictRows(c compare.Comparison) [][]string {
	var out [][]string
	for _, name := range compare.FigureRows {
		row := []string{name}
		any := false
		for _, v := range c.Verdicts {
			cell := v.Figures[name]
			any = any || cell != ""
			if cell == "" {
				cell = "-"
			}
			row = append(row, cell)
		}
		if any {
			out = append(out, row)
		}
	}
	return out
}

func cmpSevTag(sev string) string {
	switch sev {
	case "fail":
		return "FAIL "
	case "warn":
		return "WARN "
	}
	return ""
}

func cmpOneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, s)
}

// compareCSV writes one row per test, direction and operand, in raw units.
func compareCSV(w io.Writer, c compare.Comparison) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"test", "dir", "operand", "n", "iops", "bw_bytes_per_s", "lat_p50_ns", "lat_p99_ns", "lat_p99_9_ns",
		"diff_iops_pct", "diff_bw_pct", "diff_p50_pct", "diff_p99_pct", "diff_p99_9_pct", "iops_p_value", "iops_verdict", "p99_p_value", "p99_verdict", "iops_change", "p99_change", "operand_label", "iops_test_basis", "operand_status"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fp := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', 2, 64)
	}
	pv := func(t *compare.Welch) string {
		if t == nil || !t.Enough {
			return ""
		}
		return strconv.FormatFloat(t.P, 'g', 4, 64)
	}
	for _, r := range c.Rows {
		for i, x := range r.Cells {
			if x == nil {
				continue
			}
			t := csvText
			rec := []string{t(r.Test), t(r.Dir), t(c.Operands[i]), strconv.Itoa(x.N), f(x.IOPS), f(x.BWBytes)}
			if x.NoPercentiles {
				rec = append(rec, "", "", "")
			} else {
				rec = append(rec, f(x.P50Ns), f(x.P99Ns), f(x.P999Ns))
			}
			rec = append(rec, fp(x.DiffIOPSPct), fp(x.DiffBWPct), fp(x.DiffP50Pct), fp(x.DiffP99Pct), fp(x.DiffP999Pct),
				pv(x.IOPSTest), x.IOPSTest.Verdict(), pv(x.P99Test), x.P99Test.Verdict(), x.IOPSChange(), x.P99Change())
			label, basis := c.Operands[i], ""
			if i < len(c.Labels) {
				label = c.Labels[i]
			}
			if x.IOPSTest != nil {
				basis = x.IOPSTest.Basis
			}
			status := ""
			if i < len(c.Statuses) {
				status = c.Statuses[i].State
			}
			rec = append(rec, label, basis, status)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// CompareMarkdown writes one table: a row per test, direction and operand.
func CompareMarkdown(w io.Writer, c compare.Comparison) error {
	fmt.Fprintln(w, "## Comparison")
	fmt.Fprintln(w)
	if len(c.Mismatches) > 0 {
		fmt.Fprintf(w, "> **Warning:** %s\n>\n", cmpMDEscape(mismatchHeadline))
		for _, m := range c.Mismatches {
			fmt.Fprintf(w, "> - %s\n", cmpMDEscape(m.String()))
		}
		fmt.Fprintln(w)
	}
	for i, op := range c.Operands {
		label := op
		if i < len(c.Labels) && c.Labels[i] != "" && c.Labels[i] != op {
			label = c.Labels[i] + " (" + op + ")"
		}
		fmt.Fprintf(w, "- **%s**: %s\n", compare.Letter(i), cmpMDEscape(label+c.StatusMark(i)))
	}
	fmt.Fprintln(w)
	if rows := verdictRows(c); len(rows) > 0 {
		fmt.Fprintf(w, "### Verdicts side by side\n\n|")
		for i := range c.Operands {
			fmt.Fprintf(w, " | %s", compare.Letter(i))
		}
		fmt.Fprintf(w, " |\n|---%s|\n", strings.Repeat("|---", len(c.Operands)))
		for _, r := range rows {
			for j := range r {
				r[j] = cmpMDEscape(r[j])
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| test | dir | | %s | n |\n", strings.Join(compareHeader, " | "))
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|---|---|--:|")
	for _, r := range c.Rows {
		for i, x := range r.Cells {
			n := "-"
			if x != nil {
				n = strconv.Itoa(x.N)
			}
			cells := compareCells(x, r.Dir)
			for j := range cells {
				cells[j] = cmpMDEscape(cells[j])
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", cmpMDEscape(r.Test), r.Dir, compare.Letter(i), strings.Join(cells, " | "), n)
		}
	}
	if lines := costLines(c); len(lines) > 0 {
		fmt.Fprintf(w, "\n### Cost\n\nList price a month, over the most IOPS and MB/s measured.\n\n")
		for _, l := range lines {
			fmt.Fprintf(w, "- %s\n", cmpMDEscape(l))
		}
	}
	if len(c.Findings) > 0 {
		fmt.Fprintf(w, "\n### Findings, worst first across operands\n\n")
		for _, f := range c.Findings {
			fmt.Fprintf(w, "- **%s** %s %s: %s\n", compare.Letter(f.Operand), f.Severity, cmpMDEscape(f.Subject), cmpMDEscape(f.Summary))
		}
	}
	_, err := fmt.Fprintf(w, "\nMB/s = 10^6 bytes/s; percentiles from merged histograms; differences against A; %s.\n", testNote(c.Alpha))
	return err
}

func cmpMDEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_", "`", "\\`").Replace(s)
}

// mismatchHeadline opens the warning about mismatched parameters.
const mismatchHeadline = "the operands did not run these tests alike, so their differences may come from the parameters, not the storage"

// costLines says, per priced operand, what its disk costs per measured
// IOPS and MB/s.
func costLines(c compare.Comparison) []string {
	var out []string
	for i, x := range c.Costs {
		if x == nil {
			continue
		}
		s := fmt.Sprintf("[%s] %s: $%s a month (%s, as of %s)", compare.Letter(i), x.Disk, units.Dollars(x.USDPerMonth), x.Region, x.AsOf)
		if x.IOPS > 0 {
			s += fmt.Sprintf("; $%s per IOPS (%s IOPS in %s)", units.Dollars(x.USDPerIOPS), units.Whole(x.IOPS), x.IOPSTest)
		}
		if x.BWBytes > 0 {
			s += fmt.Sprintf("; $%s per MB/s (%s MB/s in %s)", units.Dollars(x.USDPerMBps), units.MB(x.BWBytes), x.BWTest)
		}
		out = append(out, s)
	}
	return out
}

// ComparePage is the HTML form of a comparison: the warning about mismatched
// parameters first, the table with better and worse in colour (only where
// Welch's test finds the difference significant), what each disk cost per
// measured IOPS and MB/s, then each operand's verdict and charts as one
// set of the
func ComparePage(ops []compare.Operand, c compare.Comparison) Page {
	titles := c.Operands
	if len(c.Labels) == len(c.Operands) {
		titles = c.Labels
	}
	p := Page{Title: "iolens compare " + strings.Join(titles, " vs ")}
	for i, op := range ops {
		p.Sets = append(p.Sets, Set{Name: compare.Letter(i) + ": " + op.Title(), Results: op.Results, Diagnosis: op.Diagnosis})
	}
	if len(c.Mismatches) > 0 {
		p.WarningTitle = "Warning: " + mismatchHeadline
		for _, m := range c.Mismatches {
			p.Warnings = append(p.Warnings, m.String())
		}
	}
	t := &Table{ID: "compare", Title: "Comparison",
		Header: append([]string{"test", "run"}, append(compareHeader, "n")...)}
	for _, r := range c.Rows {
		for i, x := range r.Cells {
			// Every row names its test (a phone shows each as a card);
			// the table shows it once per group.
			name, nameClass := r.Test+" · "+r.Dir, "group"
			if i > 0 {
				nameClass = "repeat"
			}
			n := "-"
			if x != nil {
				n = strconv.Itoa(x.N)
			}
			t.Rows = append(t.Rows, append([]string{name, compare.Letter(i)}, append(compareCells(x, r.Dir), n)...))
			// Colour follows the tests: IOPS and the IOPS change by the
			// IOPS test, p99 and the p99 change by the p99 test.
			ic, pc := x.IOPSChange(), x.P99Change()
			cls := []string{nameClass, "", ic + " num", "num", "num", pc + " num", "num", ic, pc, "num"}
			t.Class = append(t.Class, cls)
			titles := make([]string, len(cls))
			if x != nil {
				titles[7], titles[8] = changeTitle(x.IOPSTest), changeTitle(x.P99Test)
			}
			t.Titles = append(t.Titles, titles)
		}
	}
	var ops2 []string
	for i, op := range c.Operands {
		ops2 = append(ops2, compare.Letter(i)+" = "+titles[i]+map[bool]string{true: " (" + op + ")"}[titles[i] != op]+c.StatusMark(i))
	}
	t.Note = fmt.Sprintf("%s. MB/s = 10^6 bytes/s; percentiles from merged histograms; differences against A. Green and red: better and worse than A where the difference is significant; grey: not significant. %s.",
		strings.Join(ops2, ", "), testNote(c.Alpha))
	p.Tables = append(p.Tables, t)
	if lines := costLines(c); len(lines) > 0 {
		ct := &Table{ID: "cost", Title: "Cost per measured rate",
			Header: []string{"", "disk", "$ a month", "most IOPS", "$ per IOPS", "most MB/s", "$ per MB/s", "price"}}
		for i, x := range c.Costs {
			if x == nil {
				continue
			}
			row := []string{compare.Letter(i), x.Disk, units.Dollars(x.USDPerMonth), "-", "-", "-", "-", x.Region + ", as of " + x.AsOf + ": " + x.Source}
			if x.IOPS > 0 {
				row[3], row[4] = units.Whole(x.IOPS)+" ("+x.IOPSTest+")", units.Dollars(x.USDPerIOPS)
			}
			if x.BWBytes > 0 {
				row[5], row[6] = units.MB(x.BWBytes)+" ("+x.BWTest+")", units.Dollars(x.USDPerMBps)
			}
			ct.Rows = append(ct.Rows, row)
		}
		ct.Note = "List prices from the catalog for the disk each operand was compared with (--expect, a storage class or cloud metadata), divided by what was measured: a month of the disk per IOPS and per MB/s it delivered."
		p.Tables = append(p.Tables, ct)
	}
	if rows := verdictRows(c); len(rows) > 0 {
		vt := &Table{ID: "verdicts", Title: "Verdicts side by side", Header: []string{""}}
		for i := range c.Operands {
			vt.Header = append(vt.Header, compare.Letter(i))
		}
		vt.Rows = rows
		vt.Note = "Each operand's headline figures, with how sure each is (the interval of the rate) and what binds it; the full verdicts are above."
		p.Tables = append(p.Tables, vt)
	}
	return p
}
