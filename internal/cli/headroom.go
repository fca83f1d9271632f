package cli

import (
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

// headroomOptions are headroom's flags.
type headroomOptions struct {
	headroom.Request
	output, html string
}

func newHeadroomCommand(streams IOStreams) *cobra.Command {
	var o headroomOptions
	cmd := &cobra.Command{
		Use:   "headroom --prometheus URL [--match SEL] [--since 14d] [--expect DEVICE=SPEC... | --mapping FILE]",
		Short: "Judge every volume against its own caps from Prometheus history: at the cap, the VM's cap, smaller or larger disks with prices",
		Long: `headroom reads the node exporter's disk counters of every node and device
from Prometheus over a range (14 days unless --since or --from say otherwise)
and judges each volume against what it should deliver: its use counted as
the provider counts it (read and write IOPS and bytes together, large IOs
as several where the catalog says so), p50, p99 and the highest step, the
time at 95% or more of the cap in force (the burst while credit lasts,
followed with the catalog's bucket model from a full bucket), each node's
sum against its VM's caps, and a recommendation with list prices: keep, a
smaller disk (the cheapest of the same provider and kind that sustains
p99 plus --margin with the peak in its burst), or raise. The worst volume
comes first.

Each device's cap comes from --expect (DEVICE=SPEC, INSTANCE/DEVICE=SPEC,
or a SPEC for every device; SPEC a catalog disk or iops=N,bw=RATE) or a
mapping file; a device without one is listed with its use and an unknown
cap. --vm (or the mapping file's nodes) gives the VM size whose caps the
sum of a node's devices is judged against.`,
		Example: `  iolens headroom --prometheus http://prometheus:9090 --since 14d --expect azure:P10 --vm Standard_D4s_v3
  iolens headroom --prometheus $P --match '{job="node"}' --expect sdb=aws:gp3:200GiB --expect sdc=iops=500,bw=100MB
  iolens headroom --prometheus $P --mapping volumes.yaml -o csv > headroom.csv
  iolens headroom --prometheus $P --mapping volumes.yaml --html headroom.html
  iolens headroom --prometheus $P --mapping volumes.yaml --rules iolens-rules.yaml --rules-format operator`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, streams) },
	}
	f := cmd.Flags()
	f.StringVar(&o.URL, "prometheus", "", "the Prometheus to read (node exporter series), e.g. http://prometheus:9090")
	promAuthFlags(f, &o.Auth)
	f.StringVar(&o.Match, "match", "", `a label selector for the node exporters' series, e.g. '{job="node-exporter"}' (default: every one)`)
	f.Var(&o.Since, "since", "the range ends now and starts this long ago, e.g. 14d or 6h (default 14d)")
	f.StringVar(&o.From, "from", "", "start of the range, RFC 3339 (2026-03-01T00:00:00Z) or Unix seconds")
	f.StringVar(&o.To, "to", "", "end of the range (default now)")
	f.Var(&o.Step, "step", "resolution (default: the scrape interval, coarser when the range holds more than 50,000 of them)")
	f.StringArrayVar(&o.Expect, "expect", nil, "a device's cap: DEVICE=SPEC, INSTANCE/DEVICE=SPEC or SPEC for every device (repeatable); SPEC a catalog disk (azure:P10) or iops=N,bw=RATE")
	f.StringVar(&o.Mapping, "mapping", "", "a YAML file of volumes (instance, device, expect, claim) and nodes (instance, vm)")
	f.StringVar(&o.VM, "vm", "", "the VM size of every node the mapping file does not name (catalog id, e.g. Standard_D4s_v3)")
	f.Float64Var(&o.MarginPct, "margin", 30, "headroom in % a smaller disk must leave above the p99")
	f.BoolVar(&o.Cluster, "cluster", false, "take every bound claim of the cluster (--namespace for one namespace): its node, device and class, its cap from the class through the catalog, the nodes' VM sizes")
	f.StringVar(&o.Namespace, "namespace", "", "with --cluster: the claims of this namespace only (default: all)")
	f.StringVar(&o.Selector, "selector", "", "with --cluster: the claims with these labels, e.g. app=postgres")
	f.StringVar(&o.PVC, "pvc", "", "with --cluster: one claim, NAMESPACE/NAME")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "with --cluster: kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&o.KubeContext, "context", "", "with --cluster: kubeconfig context (default: the current one)")
	dbFlag(f, &o.DB)
	outputFlag(f, &o.output, report.Headrooms, "format: ")
	f.StringVar(&o.html, "html", "", htmlFlagHelp)
	f.StringVar(&o.Rules, "rules", "", "also write Prometheus rules to this file: each volume's caps recorded, alerts at the cap for 10 minutes, burst credit running out within 15, the VM's cap binding")
	f.StringVar(&o.RulesFormat, "rules-format", headroom.RulesPlain, "--rules as a plain rules file (plain) or a prometheus-operator PrometheusRule (operator)")
	markOutput(f, "html", "rules")
	markInput(f, "mapping", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key", "kubeconfig")
	groupFlags(cmd, flagGroup{Title: "Flags"},
		flagGroup{"The volumes of a cluster", []string{"cluster", "namespace", "selector", "pvc", "kubeconfig", "context", "db"}},
		flagGroup{"Reaching Prometheus", []string{"prometheus-user", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key"}})
	return cmd
}

func (o *headroomOptions) run(cmd *cobra.Command, streams IOStreams) error {
	o.Set, o.Progress = cmd.Flags().Changed, progressTo(streams.ErrOut)
	if err := o.Check(); err != nil {
		return err
	}
	format, err := report.Headrooms.Lookup(o.output)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("-o %q", o.output), Help: hint.Of(err)}
	}
	var inputs []string
	if o.Mapping != "" {
		inputs = append(inputs, o.Mapping)
	}
	if err := checkOutputs(reads{inputs: inputs}, [2]string{"--html", o.html}, [2]string{"--rules", o.Rules}); err != nil {
		return err
	}
	rep, err := o.Run(contextOf(cmd), time.Now())
	if err != nil {
		return err
	}
	in := report.Input{Headroom: headroom.Page{R: rep, Loc: time.Local}}
	if o.html != "" {
		if err := writeFile(o.html, report.Headrooms, "html", in); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	return writeReport(streams.Out, format, in)
}
