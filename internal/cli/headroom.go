package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// headroomOptions are headroom's flags.
type headroomOptions struct {
	url      string
	auth     promhist.Auth
	match    string
	since    units.Duration
	from, to string
	step     units.Duration
	expect   []string
	mapping  string
	vm       string
	margin   float64
	output   string
	html     string
	rules    string
	rulesFmt string
	cluster  bool
	ns       string
	kubecfg  string
	kubeCtx  string
	selector string
	pvc      string
	db       string
}

// maxMappingFile bounds a mapping file.
const maxMappingFile = 8 << 20

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
	f.StringVar(&o.url, "prometheus", "", "the Prometheus to read (node exporter series), e.g. http://prometheus:9090")
	promAuthFlags(f, &o.auth)
	f.StringVar(&o.match, "match", "", `a label selector for the node exporters' series, e.g. '{job="node-exporter"}' (default: every one)`)
	f.Var(&o.since, "since", "the range ends now and starts this long ago, e.g. 14d or 6h (default 14d)")
	f.StringVar(&o.from, "from", "", "start of the range, RFC 3339 (2026-03-01T00:00:00Z) or Unix seconds")
	f.StringVar(&o.to, "to", "", "end of the range (default now)")
	f.Var(&o.step, "step", "resolution (default: the scrape interval, coarser when the range holds more than 50,000 of them)")
	f.StringArrayVar(&o.expect, "expect", nil, "a device's cap: DEVICE=SPEC, INSTANCE/DEVICE=SPEC or SPEC for every device (repeatable); SPEC a catalog disk (azure:P10) or iops=N,bw=RATE")
	f.StringVar(&o.mapping, "mapping", "", "a YAML file of volumes (instance, device, expect, claim) and nodes (instance, vm)")
	f.StringVar(&o.vm, "vm", "", "the VM size of every node the mapping file does not name (catalog id, e.g. Standard_D4s_v3)")
	f.Float64Var(&o.margin, "margin", 30, "headroom in % a smaller disk must leave above the p99")
	f.BoolVar(&o.cluster, "cluster", false, "take every bound claim of the cluster (--namespace for one namespace): its node, device and class, its cap from the class through the catalog, the nodes' VM sizes")
	f.StringVar(&o.ns, "namespace", "", "with --cluster: the claims of this namespace only (default: all)")
	f.StringVar(&o.selector, "selector", "", "with --cluster: the claims with these labels, e.g. app=postgres")
	f.StringVar(&o.pvc, "pvc", "", "with --cluster: one claim, NAMESPACE/NAME")
	f.StringVar(&o.kubecfg, "kubeconfig", "", "with --cluster: kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&o.kubeCtx, "context", "", "with --cluster: kubeconfig context (default: the current one)")
	dbFlag(f, &o.db)
	outputFlag(f, &o.output, report.Headrooms, "format: ")
	f.StringVar(&o.html, "html", "", htmlFlagHelp)
	f.StringVar(&o.rules, "rules", "", "also write Prometheus rules to this file: each volume's caps recorded, alerts at the cap for 10 minutes, burst credit running out within 15, the VM's cap binding")
	f.StringVar(&o.rulesFmt, "rules-format", headroom.RulesPlain, "--rules as a plain rules file (plain) or a prometheus-operator PrometheusRule (operator)")
	markOutput(f, "html", "rules")
	markInput(f, "mapping", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key", "kubeconfig")
	groupFlags(cmd, flagGroup{Title: "Flags"},
		flagGroup{"The volumes of a cluster", []string{"cluster", "namespace", "selector", "pvc", "kubeconfig", "context", "db"}},
		flagGroup{"Reaching Prometheus", []string{"prometheus-user", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key"}})
	return cmd
}

func (o *headroomOptions) run(cmd *cobra.Command, streams IOStreams) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if o.url == "" {
		return &UsageError{Err: errors.New("headroom needs --prometheus"), Help: "e.g. iolens headroom --prometheus http://prometheus:9090 --since 14d --expect azure:P10"}
	}
	format, err := report.Headrooms.Lookup(o.output)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("-o %q", o.output), Help: hint.Of(err)}
	}
	if o.margin < 0 || o.margin > 1000 {
		return &UsageError{Err: fmt.Errorf("--margin %g", o.margin), Help: "a percentage from 0 to 1000, e.g. --margin 30"}
	}
	var inputs []string
	if o.mapping != "" {
		inputs = append(inputs, o.mapping)
	}
	if o.rulesFmt != headroom.RulesPlain && o.rulesFmt != headroom.RulesOperator {
		return &UsageError{Err: fmt.Errorf("--rules-format %q", o.rulesFmt), Help: "plain or operator"}
	}
	for _, n := range []string{"namespace", "selector", "pvc", "kubeconfig", "context", "db"} {
		if cmd.Flags().Changed(n) && !o.cluster {
			return &UsageError{Err: fmt.Errorf("--%s needs --cluster", n), Help: "e.g. --cluster --namespace databases"}
		}
	}
	if cmd.Flags().Changed("rules-format") && o.rules == "" {
		return &UsageError{Err: errors.New("--rules-format needs --rules"), Help: "e.g. --rules headroom-rules.yaml --rules-format operator"}
	}
	if err := checkOutputs(reads{inputs: inputs}, [2]string{"--html", o.html}, [2]string{"--rules", o.rules}); err != nil {
		return err
	}
	pw := promOptions{since: o.since, from: o.from, to: o.to}
	if !cmd.Flags().Changed("since") && o.from == "" && o.to == "" {
		pw.since = units.Duration(14 * 24 * time.Hour)
	}
	from, to, err := pw.window(cmd, time.Now())
	if err != nil {
		return err
	}
	cat, err := limits.Default()
	if err != nil {
		return err
	}
	ho := headroom.Options{From: from, To: to, Step: time.Duration(o.step), Catalog: cat, Margin: o.margin / 100,
		Progress: func(s string) { fmt.Fprintf(streams.ErrOut, "iolens: %s\n", s) }}
	if o.match != "" {
		if ho.Selector, err = promql.ParseSelector(o.match); err != nil {
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
	}
	if o.vm != "" {
		v := cat.VM(o.vm)
		if v == nil {
			return &UsageError{Err: fmt.Errorf("--vm %q is not in the catalog", o.vm), Help: "iolens limits --vms lists the sizes"}
		}
		ho.DefaultVM = v.ID
	}
	if o.mapping != "" {
		b, err := userfile.ReadFile(o.mapping, maxMappingFile)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("--mapping: %w", err), Help: "give a readable YAML file of at most 8 MiB"}
		}
		rules, vms, err := headroom.ParseMapping(b, cat)
		if err != nil {
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
		ho.Rules, ho.VMs = rules, vms
	}
	for _, e := range o.expect {
		r, err := headroom.ParseRule(e, headroom.SourceExpect, cat)
		if err != nil {
			if u := specError(err); u != err {
				return u
			}
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
		ho.Rules = append(ho.Rules, r)
	}
	c, err := promhist.NewClient(o.url, o.auth, promhist.Limits{})
	if err != nil {
		return err
	}
	var clusterNotes []string
	if o.cluster {
		cf := genericclioptions.NewConfigFlags(false)
		cf.KubeConfig, cf.Context = &o.kubecfg, &o.kubeCtx
		kc, _, _, err := k8s.Connect(cf, o.kubeCtx)
		if err != nil {
			return err
		}
		// The classes iolens measured (k8s diagnose) give their caps
		// before the catalog does; without a history there are none.
		st, err := openStore(ctx, o.db)
		switch {
		case err == nil:
			defer st.Close()
			ho.Measured = headroom.MeasuredCaps(func(ctx context.Context, class string) ([]result.Result, error) {
				sel, err := store.ParseSelector("k8s.storage-class=" + class)
				if err != nil {
					return nil, err
				}
				return st.Select(ctx, sel)
			}, func(rs []result.Result) diagnosis.Diagnosis { return diagnosis.Saved(rs) })
		case errors.Is(err, store.ErrNoDatabase):
		default:
			clusterNotes = append(clusterNotes, "the history database could not be read ("+err.Error()+"): no class's measured caps are used")
		}
		pick := headroom.Claims{Namespace: o.ns, Selector: o.selector}
		if o.pvc != "" {
			ns, name, err := promhist.ParsePVC(o.pvc)
			if err != nil {
				return &UsageError{Err: err, Help: hint.Of(err)}
			}
			if o.ns != "" && o.ns != ns {
				return &UsageError{Err: fmt.Errorf("--pvc %s is not in --namespace %s", o.pvc, o.ns), Help: "give one of them"}
			}
			pick.Namespace, pick.Name = ns, name
		}
		inv, err := headroom.FromCluster(ctx, kc.CS, c, cat, pick, ho)
		if err != nil {
			return err
		}
		ho.Add(inv)
		clusterNotes = append(clusterNotes, inv.Notes...)
	}
	rep, err := headroom.Run(ctx, c, ho)
	if err != nil {
		return err
	}
	rep.Notes = append(clusterNotes, rep.Notes...)
	if o.rules != "" {
		b, err := headroom.Rules(rep, ho.Selector, o.rulesFmt)
		if err != nil {
			return err
		}
		if err := userfile.Write(o.rules, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return fmt.Errorf("--rules: %w", err)
		}
	}
	in := report.Input{Headroom: headroom.Page{R: rep, Loc: time.Local}}
	if o.html != "" {
		if err := writeFile(o.html, report.Headrooms, "html", in); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	return writeReport(streams.Out, format, in)
}
