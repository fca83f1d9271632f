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

// OfNodes takes each node's results of rs (by their k8s.node label) to
// diagnose, which builds the node's diagnosis, and compares the nodes.
func OfNodes(rs []result.Result, diagnose func([]result.Result) diagnosis.Diagnosis) NodeDiagnoses {
	byNode := map[string][]result.Result{}
	for _, r := range rs {
		n := r.Target.Labels["k8s.node"]
		byNode[n] = append(byNode[n], r)
	}
	models := map[string]diagnosis.Diagnosis{}
	for n, nrs := range byNode {
		models[n] = diagnose(nrs)
	}
	return NodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: models, Comparison: Nodes(models, outlierThreshold)}
}
