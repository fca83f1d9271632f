package compare_test

import (
	"io"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
)

// compareTold compares ops, each told first, as the command tells them:
// its diagnosis built once from its results, and its findings as the
// reports list them.
func compareTold(ops []compare.Operand) compare.Comparison {
	for i := range ops {
		d := diagnosis.Saved(ops[i].Results)
		ops[i].Diagnosis, ops[i].Stories = &d, report.Stories(ops[i].Results, &d)
	}
	return compare.Compare(ops)
}

// writeFormat writes c in the comparison format named.
func writeFormat(w io.Writer, format string, c compare.Comparison) error {
	f, err := report.Comparisons.Lookup(format)
	if err != nil {
		return err
	}
	return f.Write(w, report.Input{Comparison: &c})
}
