package compare

import (
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// outlierThreshold is the relative difference between nodes counted as
// beyond noise: well above the precision each figure is measured to, and
// above what identical cloud disks differ by from run to run.
const outlierThreshold = 0.15

// NodeDiagnoses compares the nodes of an outcome by their diagnoses,
// built with it: each node's volume is one target. A node with several
// is diagnosed here over all of them, as one disk.
func NodeDiagnoses(out diagnosis.Outcome) report.NodeDiagnoses {
	byNode := map[string][]result.Result{}
	for _, r := range out.Results {
		n := r.Target.Labels["k8s.node"]
		byNode[n] = append(byNode[n], r)
	}
	models := map[string]diagnosis.Diagnosis{}
	for n, nrs := range byNode {
		if d := out.For(nrs); d != nil && len(diagnosis.Groups(nrs)) == 1 {
			models[n] = *d
		} else {
			models[n] = diagnosis.Saved(nrs)
		}
	}
	return report.NodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: models, Comparison: Nodes(models, outlierThreshold)}
}
