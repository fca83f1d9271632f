package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/compare"
)

// nodesText writes each node's verdict, then the nodes that differ.
func nodesText(w io.Writer, nd compare.NodeDiagnoses) error {
	models, cmp := nd.Nodes, nd.Comparison
	var names []string
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
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
			figs = append(figs, fmt.Sprintf("%s %s against %s (%.2fx)", f.Name, compare.FormatFigure(f), compare.FormatOthers(f), f.Ratio))
		}
		fmt.Fprintf(w, "OUTLIER: node %s: %s; %s\n", o.Node, strings.Join(figs, ", "), o.Why)
	}
	return nil
}
