package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// promOptions are analyze's flags for reading a node's history from
// Prometheus (--prometheus URL) instead of saved results.
type promOptions struct{ promhist.Request }

// promOnly are the flags that mean something only with --prometheus.
var promOnly = []string{"prometheus-user", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key",
	"device", "instance", "match", "since", "from", "to", "step", "pvc", "kubeconfig", "context", "annotations-out", "grafana", "grafana-token-file", "grafana-dashboard", "local"}

// add gives analyze its --prometheus mode: the flags, and the usage.
func (p *promOptions) add(cmd *cobra.Command) {
	cmd.Use += " | analyze --prometheus URL [--instance I | --match SEL | --pvc NS/NAME] [--since D | --from T --to T]"
	cmd.Long += `

With --prometheus, analyze reads a node's disk history instead: the node
exporter's node_disk_*, CPU and memory series, at the scrape interval
(--step to change it), and judges it as 'iolens watch' judges a live
disk: stalls, cliffs, saturation, writeback storms, flat ceilings and
their level (and, with --expect, the disk's own ceiling), each with its
times. --annotations-out and --grafana put the findings on the Grafana
dashboards people already use.`
	cmd.Example += `
  iolens analyze --prometheus http://prometheus:9090 --instance node-1:9100 --since 6h
  iolens analyze --prometheus http://prometheus:9090 --match '{node="worker-3"}' --device sdb \
      --from 2026-03-01T13:30:00Z --to 2026-03-01T14:30:00Z --expect azure:P15 -o md
  iolens analyze --prometheus https://prom.example.com --prometheus-token-file token --pvc db/data-pg-0 \
      --since 24h --annotations-out stalls.json`
	p.addFlags(cmd.Flags())
	groupFlags(cmd, flagGroup{Title: "Flags"},
		flagGroup{"A node's history from Prometheus", []string{"prometheus", "instance", "match", "device", "pvc", "since", "from", "to", "step", "local", "kubeconfig", "context"}},
		flagGroup{"Reaching Prometheus", []string{"prometheus-user", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key"}},
		flagGroup{"Grafana annotations", []string{"annotations-out", "grafana", "grafana-token-file", "grafana-dashboard"}},
		cloudFlags, vendorFlags)
}

// promAuthFlags are the flags that reach a Prometheus: basic auth, a
// bearer token, TLS (analyze --prometheus and headroom share them).
func promAuthFlags(f *pflag.FlagSet, a *promhist.Auth) {
	f.StringVar(&a.User, "prometheus-user", "", "basic auth user for --prometheus (with --prometheus-password-file)")
	f.StringVar(&a.PasswordFile, "prometheus-password-file", "", "file holding the basic auth password")
	f.StringVar(&a.TokenFile, "prometheus-token-file", "", "file holding a bearer token for --prometheus")
	f.StringVar(&a.CAFile, "prometheus-ca", "", "CA certificate (PEM) that signed the Prometheus server's certificate")
	f.StringVar(&a.CertFile, "prometheus-cert", "", "client certificate (PEM) for --prometheus")
	f.StringVar(&a.KeyFile, "prometheus-key", "", "client certificate's key (PEM)")
}

func (p *promOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&p.URL, "prometheus", "", "read a node's disk history from this Prometheus (node exporter series) instead of FILEs, e.g. http://prometheus:9090")
	promAuthFlags(f, &p.Auth)
	f.StringArrayVar(&p.Devices, "device", nil, "with --prometheus: a device to analyse, as the node exporter names it (sda, nvme0n1; repeatable; default: every device)")
	f.StringVar(&p.Instance, "instance", "", "with --prometheus: the node exporter's instance label, e.g. node-1:9100")
	f.StringVar(&p.Match, "match", "", `with --prometheus: a label selector for the node exporter's series, e.g. '{node="worker-3"}'`)
	f.Var(&p.Since, "since", "with --prometheus: the range ends now and starts this long ago, e.g. 6h (default 1h)")
	f.StringVar(&p.From, "from", "", "with --prometheus: start of the range, RFC 3339 (2026-03-01T14:00:00Z) or Unix seconds")
	f.StringVar(&p.To, "to", "", "with --prometheus: end of the range (default now)")
	f.Var(&p.Step, "step", "with --prometheus: resolution (default: the scrape interval, as the samples show it)")
	f.StringVar(&p.PVC, "pvc", "", "with --prometheus: NAMESPACE/NAME of a PVC: its node, node exporter and device, from the cluster")
	f.StringVar(&p.Kubeconfig, "kubeconfig", "", "with --pvc: kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&p.KubeContext, "context", "", "with --pvc: kubeconfig context (default: the current one)")
	f.StringVar(&p.AnnotationsOut, "annotations-out", "", "with --prometheus: also write the findings as Grafana annotations (JSON) to this file")
	f.StringVar(&p.Grafana, "grafana", "", "with --prometheus: post the findings as annotations to this Grafana (needs --grafana-token-file)")
	f.StringVar(&p.GrafanaToken, "grafana-token-file", "", "file holding a Grafana service account token (annotations:write)")
	markOutput(f, "annotations-out")
	markInput(f, "grafana-token-file", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key", "kubeconfig")
	f.StringVar(&p.GrafanaDash, "grafana-dashboard", "", "UID of the dashboard the annotations belong to (default: organisation-wide, selected by tag)")
	f.BoolVar(&p.Local, "local", false, "with --prometheus: print times in this machine's time zone (default UTC, so that a post-mortem's times match the cluster's logs wherever it is read)")
}

// checkArgs keeps the two modes apart: FILEs, or --prometheus.
func (p *promOptions) checkArgs(cmd *cobra.Command, args []string) error {
	if p.URL == "" {
		for _, n := range promOnly {
			if cmd.Flags().Changed(n) {
				return &UsageError{Err: fmt.Errorf("--%s needs --prometheus", n), Help: "e.g. iolens analyze --prometheus http://prometheus:9090 --instance node-1:9100 --since 6h"}
			}
		}
		return cobra.MinimumNArgs(1)(cmd, args)
	}
	if len(args) > 0 {
		return &UsageError{Err: fmt.Errorf("--prometheus reads no FILE (got %s)", strings.Join(args, " ")), Help: "analyse saved results and a Prometheus history in two runs"}
	}
	return nil
}

// run is analyze --prometheus.
func (p *promOptions) run(cmd *cobra.Command, streams IOStreams, output, failOn string, files *outputFiles, expect *expectOptions) error {
	format, err := report.Histories.Lookup(output)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("-o %q with --prometheus", output), Help: hint.Of(err)}
	}
	if output == "html" && files.out != "" && files.html == "" {
		files.html, files.out, files.pageOnly = files.out, "", true
	}
	if files.out != "" && files.out == files.html {
		return &UsageError{Err: fmt.Errorf("--out and --html name the same file %q", files.out), Help: "give them different files"}
	}
	for _, n := range []string{"attached", "cache"} {
		if cmd.Flags().Changed(n) {
			return &UsageError{Err: fmt.Errorf("--%s applies to saved results, not to --prometheus", n), Help: "--expect DISK [--vm VM] compares the history with a disk"}
		}
	}
	p.SinceSet, p.Expect, p.VM, p.Progress = cmd.Flags().Changed("since"), expect.disk, expect.vm, progressTo(streams.ErrOut)
	ctx := contextOf(cmd)
	h, err := p.Run(ctx, time.Now())
	if err != nil {
		return err
	}
	in := report.Input{History: h.Report}
	if err := files.writeHTML(report.Histories, in); err != nil {
		return err
	}
	if err := files.writeCopy(h.Results); err != nil {
		return err
	}
	if err := p.WriteAnnotations(h); err != nil {
		return err
	}
	if files.stdout() {
		if err := writeReport(streams.Out, format, in); err != nil {
			return err
		}
	}
	if n, err := p.Post(ctx, h); err != nil {
		return err
	} else if p.Grafana != "" {
		fmt.Fprintf(streams.ErrOut, "iolens: posted %d annotations to %s\n", n, p.Grafana)
	}
	return failOnFindings(h.Results, failOn)
}

// progressTo reports a library's progress as lines on w.
func progressTo(w io.Writer) func(string) {
	return func(s string) { fmt.Fprintf(w, "iolens: %s\n", s) }
}

// contextOf is cmd's context: Background when it is run without one.
func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
