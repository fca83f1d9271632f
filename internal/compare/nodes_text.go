package compare

import (
	"io"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// outlierThreshold is the relative difference between nodes counted as
// beyond noise: well above the precision each figure is measured to, and
// above what identical cloud disks differ by from run to run.
const outlierThreshold = 0.15

// NodeDiagnoses builds each node's diagnosis from its results and
// compares the nodes.
func NodeDiagnoses(rs []result.Result) report.NodeDiagnoses {
	byNode := map[string][]result.Result{}
	for _, r := range rs {
		n := r.Target.Labels["k8s.node"]
		byNode[n] = append(byNode[n], r)
	}
	models := map[string]diagnosis.Diagnosis{}
	for n, nrs := range byNode {
		models[n] = report.Diagnose(nrs, nil)
	}
	return report.NodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: models, Comparison: Nodes(models, outlierThreshold)}
}

// WriteNodeDiagnoses writes the nodes' diagnoses of rs as output (text or
// json).
func WriteNodeDiagnoses(w io.Writer, output string, rs []result.Result) error {
	f, err := report.NodeReports.Lookup(output)
	if err != nil {
		return err
	}
	n := NodeDiagnoses(rs)
	return f.Write(w, report.Input{Results: rs, Nodes: &n})
}
