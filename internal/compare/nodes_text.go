package compare

import (
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

// outlierThreshold is the relative difference between nodes counted as
// beyond noise: well above the precision each figure is measured to, and
// above what identical cloud disks differ by from run to run.
const outlierThreshold = 0.15

// NodeDiagnoses is k8s diagnose's report: each node's disk model and the
// comparison of the nodes.
type NodeDiagnoses struct {
	Schema     string                         `json:"schema"`
	Nodes      map[string]diagnosis.Diagnosis `json:"nodes"`
	Comparison NodeComparison                 `json:"comparison"`
}

// OfNodes compares the nodes of an outcome by their diagnoses, built
// with it: each node's volume is one target. A node with several is
// diagnosed here over all of them, as one disk.
func OfNodes(out diagnosis.Outcome) NodeDiagnoses {
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
	return NodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: models, Comparison: Nodes(models, outlierThreshold)}
}
