package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// outlierThreshold is the relative difference between nodes counted as
// beyond noise: well above the precision each figure is measured to, and
// above what identical cloud disks differ by from run to run.
const outlierThreshold = 0.15

// nodeDiagnoses is the -o json form: each node's disk model and the
// comparison of the nodes.
type nodeDiagnoses struct {
	Schema     string                         `json:"schema"`
	Nodes      map[string]diagnosis.Diagnosis `json:"nodes"`
	Comparison NodeComparison                 `json:"comparison"`
}

// WriteNodeDiagnoses builds each node's diagnosis from its results,
// compares the nodes, and writes both as output (text or json).
func WriteNodeDiagnoses(w io.Writer, output string, rs []result.Result) error {
	byNode := map[string][]result.Result{}
	for _, r := range rs {
		n := r.Target.Labels["k8s.node"]
		byNode[n] = append(byNode[n], r)
	}
	models := map[string]diagnosis.Diagnosis{}
	var names []string
	for n, nrs := range byNode {
		models[n] = report.Diagnose(nrs, nil)
		names = append(names, n)
	}
	sort.Strings(names)
	cmp := Nodes(models, outlierThreshold)
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(nodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: models, Comparison: cmp})
	}
	for _, n := range names {
		d := models[n]
		fmt.Fprintf(w, "== node %s", n)
		if it := d.Target.Labels["k8s.node.node.kubernetes.io/instance-type"]; it != "" {
			fmt.Fprintf(w, " (%s)", it)
		}
		if pvc := d.Target.Path; pvc != "" {
			fmt.Fprintf(w, ", %s", pvc)
		}
		fmt.Fprintln(w)
		for _, v := range d.Verdict {
			fmt.Fprintln(w, "  "+v)
		}
		for i, a := range d.ToChange {
			if i == 0 {
				fmt.Fprintln(w, "  to change: "+a)
			} else {
				fmt.Fprintln(w, "             "+a)
			}
		}
		for _, u := range d.Unknown {
			fmt.Fprintln(w, "  not established: "+u)
		}
		fmt.Fprintln(w)
	}
	if len(names) < 2 {
		return nil
	}
	if len(cmp.Outliers) == 0 {
		fmt.Fprintf(w, "nodes %s: no figure differs by more than %.0f%% between them\n", strings.Join(names, ", "), cmp.Threshold*100)
		return nil
	}
	for _, o := range cmp.Outliers {
		var figs []string
		for _, f := range o.Figures {
			figs = append(figs, fmt.Sprintf("%s %s against %s (%.2fx)", f.Name, FormatFigure(f), FormatOthers(f), f.Ratio))
		}
		fmt.Fprintf(w, "OUTLIER: node %s: %s; %s\n", o.Node, strings.Join(figs, ", "), o.Why)
	}
	return nil
}
