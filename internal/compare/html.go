package compare

import (
	"fmt"
	"github.com/iolens/iolens/internal/units"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/report"
)

// Page is the HTML form of a comparison: the warning about mismatched
// parameters first, the table with better and worse in colour (only where
// Welch's test finds the difference significant), what each disk cost per
// measured IOPS and MB/s, then each operand's verdict and charts as one
// set of the report.
func Page(ops []Operand, c Comparison) report.Page {
	titles := c.Operands
	if len(c.Labels) == len(c.Operands) {
		titles = c.Labels
	}
	p := report.Page{Title: "iolens compare " + strings.Join(titles, " vs ")}
	for i, op := range ops {
		p.Sets = append(p.Sets, report.Set{Name: Letter(i) + ": " + op.Title(), Results: op.Results})
	}
	if len(c.Mismatches) > 0 {
		p.WarningTitle = "Warning: " + MismatchHeadline
		for _, m := range c.Mismatches {
			p.Warnings = append(p.Warnings, m.String())
		}
	}
	t := &report.Table{ID: "compare", Title: "Comparison",
		Header: append([]string{"test", ""}, append(Header, "n")...)}
	for _, r := range c.Rows {
		for i, x := range r.Cells {
			name := ""
			if i == 0 {
				name = r.Test + " · " + r.Dir
			}
			n := "-"
			if x != nil {
				n = strconv.Itoa(x.N)
			}
			t.Rows = append(t.Rows, append([]string{name, Letter(i)}, append(Cells(x, r.Dir), n)...))
			// Colour follows the tests: IOPS and the IOPS change by the
			// IOPS test, p99 and the p99 change by the p99 test.
			ic, pc := x.IOPSChange(), x.P99Change()
			cls := []string{"group", "", ic + " num", "num", "num", pc + " num", "num", ic, pc, "num"}
			t.Class = append(t.Class, cls)
		}
	}
	var ops2 []string
	for i, op := range c.Operands {
		ops2 = append(ops2, Letter(i)+" = "+titles[i]+map[bool]string{true: " (" + op + ")"}[titles[i] != op])
	}
	t.Note = fmt.Sprintf("%s. MB/s = 10^6 bytes/s; percentiles from merged histograms; differences against A. Green and red: better and worse than A where the difference is significant; grey: not significant. %s.",
		strings.Join(ops2, ", "), TestNote(c.Alpha))
	p.Tables = append(p.Tables, t)
	if lines := CostLines(c); len(lines) > 0 {
		ct := &report.Table{ID: "cost", Title: "Cost per measured rate",
			Header: []string{"", "disk", "$ a month", "most IOPS", "$ per IOPS", "most MB/s", "$ per MB/s", "price"}}
		for i, x := range c.Costs {
			if x == nil {
				continue
			}
			row := []string{Letter(i), x.Disk, units.Dollars(x.USDPerMonth), "-", "-", "-", "-", x.Region + ", as of " + x.AsOf + ": " + x.Source}
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
	if rows := VerdictRows(c); len(rows) > 0 {
		vt := &report.Table{ID: "verdicts", Title: "Verdicts side by side", Header: []string{""}}
		for i := range c.Operands {
			vt.Header = append(vt.Header, Letter(i))
		}
		vt.Rows = rows
		vt.Note = "Each operand's headline figures, with how sure each is (the interval of the rate) and what binds it; the full verdicts are above."
		p.Tables = append(p.Tables, vt)
	}
	return p
}
