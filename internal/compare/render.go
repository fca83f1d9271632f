package compare

import (
	"io"

	"github.com/iolens/iolens/internal/report"
)

// The comparison's records and their rendering are report's, which holds
// every output format; these names keep compare's API.
type (
	Operand        = report.CompareOperand
	Comparison     = report.Comparison
	Verdict        = report.CompareVerdict
	Finding        = report.CompareFinding
	Row            = report.CompareRow
	Cell           = report.CompareCell
	Welch          = report.Welch
	Cost           = report.Cost
	Mismatch       = report.Mismatch
	Figure         = report.NodeFigure
	Outlier        = report.NodeOutlier
	NodeComparison = report.NodeComparison
)

// FigureRows name the headline figures of Verdict.Figures, in order.
var FigureRows = report.FigureRows

// Letter names operand i in tables: A, B, ... Z, then A2, B2...
func Letter(i int) string { return report.Letter(i) }

// Text writes c for a terminal.
func Text(w io.Writer, c Comparison) error { return report.CompareText(w, c) }

// CSV writes c's rows, one per test, direction and operand.
func CSV(w io.Writer, c Comparison) error { return report.CompareCSV(w, c) }

// Markdown writes c as Markdown tables.
func Markdown(w io.Writer, c Comparison) error { return report.CompareMarkdown(w, c) }

// Page is the HTML form of a comparison.
func Page(ops []Operand, c Comparison) report.Page { return report.ComparePage(ops, c) }

// FormatFigure writes a figure of a comparison in its unit.
func FormatFigure(f Figure) string { return report.FormatFigure(f) }

// FormatOthers writes the other nodes' median in the figure's unit.
func FormatOthers(f Figure) string { return report.FormatOthers(f) }

// Write renders c in format (report.Comparisons).
func Write(w io.Writer, format string, c Comparison) error {
	f, err := report.Comparisons.Lookup(format)
	if err != nil {
		return err
	}
	return f.Write(w, report.Input{Comparison: &c})
}
