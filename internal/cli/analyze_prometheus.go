package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/iolens/iolens/internal/watch"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// promOptions are analyze's flags for reading a node's history from
// Prometheus (--prometheus URL) instead of saved results.
type promOptions struct {
	url            string
	auth           promhist.Auth
	devices        []string
	instance       string
	match          string
	since          units.Duration
	from, to       string
	step           units.Duration
	pvc            string
	kubeconfig     string
	kubeContext    string
	annotationsOut string
	grafana        string
	grafanaToken   string
	grafanaDash    string
	local          bool
}

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
	f.StringVar(&p.url, "prometheus", "", "read a node's disk history from this Prometheus (node exporter series) instead of FILEs, e.g. http://prometheus:9090")
	promAuthFlags(f, &p.auth)
	f.StringArrayVar(&p.devices, "device", nil, "with --prometheus: a device to analyse, as the node exporter names it (sda, nvme0n1; repeatable; default: every device)")
	f.StringVar(&p.instance, "instance", "", "with --prometheus: the node exporter's instance label, e.g. node-1:9100")
	f.StringVar(&p.match, "match", "", `with --prometheus: a label selector for the node exporter's series, e.g. '{node="worker-3"}'`)
	f.Var(&p.since, "since", "with --prometheus: the range ends now and starts this long ago, e.g. 6h (default 1h)")
	f.StringVar(&p.from, "from", "", "with --prometheus: start of the range, RFC 3339 (2026-03-01T14:00:00Z) or Unix seconds")
	f.StringVar(&p.to, "to", "", "with --prometheus: end of the range (default now)")
	f.Var(&p.step, "step", "with --prometheus: resolution (default: the scrape interval, as the samples show it)")
	f.StringVar(&p.pvc, "pvc", "", "with --prometheus: NAMESPACE/NAME of a PVC: its node, node exporter and device, from the cluster")
	f.StringVar(&p.kubeconfig, "kubeconfig", "", "with --pvc: kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&p.kubeContext, "context", "", "with --pvc: kubeconfig context (default: the current one)")
	f.StringVar(&p.annotationsOut, "annotations-out", "", "with --prometheus: also write the findings as Grafana annotations (JSON) to this file")
	f.StringVar(&p.grafana, "grafana", "", "with --prometheus: post the findings as annotations to this Grafana (needs --grafana-token-file)")
	f.StringVar(&p.grafanaToken, "grafana-token-file", "", "file holding a Grafana service account token (annotations:write)")
	markOutput(f, "annotations-out")
	markInput(f, "grafana-token-file", "prometheus-password-file", "prometheus-token-file", "prometheus-ca", "prometheus-cert", "prometheus-key", "kubeconfig")
	f.StringVar(&p.grafanaDash, "grafana-dashboard", "", "UID of the dashboard the annotations belong to (default: organisation-wide, selected by tag)")
	f.BoolVar(&p.local, "local", false, "with --prometheus: print times in this machine's time zone (default UTC, so that a post-mortem's times match the cluster's logs wherever it is read)")
}

// checkArgs keeps the two modes apart: FILEs, or --prometheus.
func (p *promOptions) checkArgs(cmd *cobra.Command, args []string) error {
	if p.url == "" {
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

// window resolves --since, --from and --to against now.
func (p *promOptions) window(cmd *cobra.Command, now time.Time) (from, to time.Time, err error) {
	fl := cmd.Flags()
	if fl.Changed("since") && (p.from != "" || p.to != "") {
		return from, to, &UsageError{Err: errors.New("--since with --from or --to"), Help: "give --since 6h, or --from T [--to T]"}
	}
	to = now
	if p.to != "" {
		if to, err = units.ParseTime(p.to); err != nil {
			return from, to, &UsageError{Err: fmt.Errorf("--to: %w", err), Help: hint.Of(err)}
		}
	}
	switch {
	case p.from != "":
		if from, err = units.ParseTime(p.from); err != nil {
			return from, to, &UsageError{Err: fmt.Errorf("--from: %w", err), Help: hint.Of(err)}
		}
	case p.to != "":
		return from, to, &UsageError{Err: errors.New("--to without --from"), Help: "give --from too, e.g. --from 2026-03-01T13:00:00Z --to 2026-03-01T15:00:00Z"}
	default:
		d := time.Duration(p.since)
		if d == 0 {
			d = time.Hour
		}
		from = to.Add(-d)
	}
	if !to.After(from) {
		return from, to, &UsageError{Err: fmt.Errorf("the range %s to %s is empty", from.Format(time.RFC3339), to.Format(time.RFC3339)), Help: "--from must be before --to"}
	}
	return from, to, nil
}

// run is analyze --prometheus.
func (p *promOptions) run(cmd *cobra.Command, streams IOStreams, output, failOn string, files *outputFiles, expect *expectOptions) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
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
	if p.annotationsOut == "-" {
		return &UsageError{Err: errors.New("--annotations-out -: standard output carries the report"), Help: "give --annotations-out a file"}
	}
	for _, n := range []string{"attached", "cache"} {
		if cmd.Flags().Changed(n) {
			return &UsageError{Err: fmt.Errorf("--%s applies to saved results, not to --prometheus", n), Help: "--expect DISK [--vm VM] compares the history with a disk"}
		}
	}
	if (p.grafana == "") != (p.grafanaToken == "") && p.grafana == "" {
		return &UsageError{Err: errors.New("--grafana-token-file needs --grafana"), Help: "e.g. --grafana https://grafana.example.com --grafana-token-file token"}
	}
	from, to, err := p.window(cmd, time.Now())
	if err != nil {
		return err
	}
	o := promhist.Options{From: from, To: to, Step: time.Duration(p.step),
		Progress: func(s string) { fmt.Fprintf(streams.ErrOut, "iolens: %s\n", s) }}
	if p.match != "" {
		if o.Selector, err = promql.ParseSelector(p.match); err != nil {
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
	}
	if p.instance != "" {
		o.Selector = o.Selector.With("instance", "=", p.instance)
	}
	for _, d := range p.devices {
		d = strings.TrimPrefix(d, "/dev/")
		if d == "" || strings.ContainsAny(d, "/ \t\n") {
			return &UsageError{Err: fmt.Errorf("--device %q", d), Help: "a kernel device name as the node exporter labels it: sda, nvme0n1, dm-0"}
		}
		o.Devices = append(o.Devices, d)
	}
	if expect.disk != "" {
		c, err := watch.ParseExpect(expect.disk, expect.vm)
		if err != nil {
			if u := specError(err); u != err {
				return u
			}
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
		// The bucket's level when the range starts is unknown; a full one
		// is the usual state of a disk that was idle before.
		c.CreditStartPct = 100
		o.Ceiling = c
	} else if expect.vm != "" {
		return &UsageError{Err: errors.New("--vm needs --expect"), Help: "say which disk: --expect azure:P15 --vm Standard_DS2_v2"}
	}
	if cat, err := limits.Default(); err == nil {
		o.Catalog = promhist.CatalogFits(cat)
	}
	c, err := promhist.NewClient(p.url, p.auth, promhist.Limits{})
	if err != nil {
		return err
	}
	var pvcNotes []string
	if p.pvc != "" {
		ns, name, err := promhist.ParsePVC(p.pvc)
		if err != nil {
			return &UsageError{Err: err, Help: hint.Of(err)}
		}
		cf := genericclioptions.NewConfigFlags(false)
		cf.KubeConfig, cf.Context = &p.kubeconfig, &p.kubeContext
		kc, _, _, err := k8s.Connect(cf, p.kubeContext)
		if err != nil {
			return err
		}
		v, err := promhist.ResolvePVC(ctx, kc.CS, c, ns, name, from, to)
		if err != nil {
			return err
		}
		if p.instance == "" && p.match == "" {
			o.Selector = v.Selector
		}
		if len(o.Devices) == 0 && v.Device != "" {
			o.Devices = []string{v.Device}
		}
		pvcNotes = v.Notes
	}
	a, err := promhist.Analyze(ctx, c, o)
	if err != nil {
		return err
	}
	if len(pvcNotes) > 0 {
		a.Notes = append(pvcNotes, a.Notes...)
	}
	// UTC unless asked: a laptop in one zone reading a cluster in another
	// would shift every time by hours with nothing to say so. Every
	// full time printed names its zone and offset.
	loc := time.UTC
	if p.local {
		loc = time.Local
	}
	rs := a.Results(loc)
	in := report.Input{History: promhist.Report{A: a, Loc: loc}}
	if err := files.writeHTML(report.Histories, in); err != nil {
		return err
	}
	if err := files.writeCopy(rs); err != nil {
		return err
	}
	anns := promhist.Annotations(a, loc, p.grafanaDash)
	if p.annotationsOut != "" {
		if err := userfile.Write(p.annotationsOut, func(w io.Writer) error { return promhist.WriteAnnotations(w, anns) }); err != nil {
			return err
		}
	}
	if files.stdout() {
		if err := writeReport(streams.Out, format, in); err != nil {
			return err
		}
	}
	if p.grafana != "" {
		g, err := promhist.NewGrafana(p.grafana, promhist.Auth{TokenFile: p.grafanaToken, CAFile: p.auth.CAFile})
		if err != nil {
			return err
		}
		n, err := g.Post(ctx, anns)
		if err != nil {
			return err
		}
		fmt.Fprintf(streams.ErrOut, "iolens: posted %d annotations to %s\n", n, p.grafana)
	}
	if n := analysis.CountAtLeast(rs, failOn); n > 0 {
		return fmt.Errorf("%d findings at severity %s or worse: %w", n, failOn, ErrFindings)
	}
	return nil
}
