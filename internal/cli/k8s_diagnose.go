package cli

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/plan"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

type k8sDiagnoseOptions struct {
	run       k8sRunOptions
	class     string
	pvcSize   string
	budget    units.Duration
	precision string
}

func newK8sDiagnoseCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	o := &k8sDiagnoseOptions{budget: units.Duration(3 * time.Minute), precision: "2%"}
	r := &o.run
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Diagnose a PVC of a storage class, or one on every node, and name the node that differs",
		Long: `Run 'iolens diagnose' (the adaptive plan: ceilings, QD1 latency, the knee,
fsync, a burst cliff, within --budget) on a PVC of --storage-class, on one
node the scheduler picks, on --nodes, or on every node with --all-nodes; all
at once by default, their plans starting together.

The class's catalog disk and each node's instance type (the label
node.kubernetes.io/instance-type) give the expectation. The report gives
each node's disk model, with the limit that binds each workload, then
compares the nodes: a node whose figures differ from the others' by more
than 15% is named as the outlier, with what may explain it (a noisy
neighbour, or a different disk).`,
		Example: `  iolens k8s diagnose -n iolens --storage-class managed-premium --pvc-size 256Gi
  iolens k8s diagnose -n iolens --storage-class fast --all-nodes --budget 5m
  iolens k8s diagnose -n iolens --storage-class fast --nodes n1,n2,n3 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.runCmd(cmd.Context(), streams, kf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.class, "storage-class", "", "storage class to diagnose (default: the default class)")
	f.StringVar(&o.pvcSize, "pvc-size", "100Gi", "PVC size (cloud disks are faster when larger)")
	f.StringSliceVar(&r.req.Nodes, "nodes", nil, "diagnose on these nodes, comma-separated")
	f.BoolVar(&r.req.AllNodes, "all-nodes", false, "diagnose on every ready, schedulable node (matching --node-selector)")
	f.Var(checkedString{&r.req.NodeSelector, k8s.CheckNodeSelector}, "node-selector", "only nodes with these labels: k=v[,k=v]")
	f.BoolVar(&r.req.Parallel, "parallel", true, "diagnose every node at once, their plans starting together (--parallel=false: one node after another)")
	f.Var(&o.budget, "budget", "time for each node's plan, layout included (e.g. 3m, 90s)")
	f.StringVar(&o.precision, "precision", o.precision, "relative precision of each figure (e.g. 2%, 0.05)")
	f.StringVar(&r.req.VolumeMode, "volume-mode", "Filesystem", "Filesystem or Block (Block runs as root; see docs/k8s.md)")
	outputFlag(f, &r.output, report.NodeReports, "report format: ")
	r.addPodFlags(f)
	return cmd
}

func (o *k8sDiagnoseOptions) runCmd(ctx context.Context, streams IOStreams, kf *kubeFlags) error {
	r := &o.run
	format, err := report.NodeReports.Lookup(r.output)
	if err != nil {
		return k8sUsage("diagnose", "-o %q: want %s", r.output, strings.Join(report.NodeReports.Names(), " or "))
	}
	a, err := k8s.PlanArgs(time.Duration(o.budget), o.precision, plan.MinBudget(), plan.Suite())
	if err != nil {
		return requestErr("see 'iolens k8s diagnose --help'", err)
	}
	cfg, err := r.podConfig("diagnose")
	if err != nil {
		return err
	}
	cfg.Agent = a
	r.render = func(w io.Writer, out diagnosis.Outcome) error {
		n := compare.OfNodes(out)
		return format.Write(w, report.Input{Outcome: out, Nodes: &n})
	}
	r.req.Classes, r.req.Sizes, r.req.SizesGiven, r.req.VolumesPerNode = nil, []string{o.pvcSize}, true, 1
	if o.class != "" {
		r.req.Classes = []string{o.class}
	}
	_, err = r.runRequest(ctx, streams, kf, cfg, "diagnose", &r.req)
	return err
}
