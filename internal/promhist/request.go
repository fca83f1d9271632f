package promhist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/iolens/iolens/internal/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
)

// Range is a range of time as a command asks for it: Since back from
// now, or From [To], each RFC 3339 or Unix seconds.
type Range struct {
	Since units.Duration
	// SinceSet says --since was given, even as 0.
	SinceSet bool
	From, To string
}

// Window resolves the range against now; without Since, From or To it
// is the last def. Mistakes are *hint.UsageError.
func (r Range) Window(now time.Time, def time.Duration) (from, to time.Time, err error) {
	if r.SinceSet && (r.From != "" || r.To != "") {
		return from, to, hint.Usage(errors.New("--since with --from or --to"), "give --since 6h, or --from T [--to T]")
	}
	to = now
	if r.To != "" {
		if to, err = units.ParseTime(r.To); err != nil {
			return from, to, hint.Usage(fmt.Errorf("--to: %w", err), hint.Of(err))
		}
	}
	switch {
	case r.From != "":
		if from, err = units.ParseTime(r.From); err != nil {
			return from, to, hint.Usage(fmt.Errorf("--from: %w", err), hint.Of(err))
		}
	case r.To != "":
		return from, to, hint.Usage(errors.New("--to without --from"), "give --from too, e.g. --from 2026-03-01T13:00:00Z --to 2026-03-01T15:00:00Z")
	default:
		d := time.Duration(r.Since)
		if d == 0 {
			d = def
		}
		from = to.Add(-d)
	}
	if !to.After(from) {
		return from, to, hint.Usage(fmt.Errorf("the range %s to %s is empty", from.Format(time.RFC3339), to.Format(time.RFC3339)), "--from must be before --to")
	}
	return from, to, nil
}

// Kube connects to the cluster of a kubeconfig file and context ("" for
// the defaults).
func Kube(kubeconfig, context string) (kubernetes.Interface, error) {
	cf := genericclioptions.NewConfigFlags(false)
	cf.KubeConfig, cf.Context = &kubeconfig, &context
	kc, _, _, err := k8s.Connect(cf, context)
	if err != nil {
		return nil, err
	}
	return kc.CS, nil
}

// Request is one analysis of a node's history as 'analyze --prometheus'
// asks for it: the Prometheus, which series, the range, the disk
// expected, and where the findings go as Grafana annotations.
type Request struct {
	URL  string
	Auth Auth
	Range
	Step units.Duration
	// Instance, Match and PVC pick the node exporter's series; Devices
	// the devices (every one when empty).
	Instance, Match, PVC    string
	Devices                 []string
	Kubeconfig, KubeContext string
	// Expect and VM are the disk every device is expected to be.
	Expect, VM string
	// AnnotationsOut is a file for the findings as Grafana annotations;
	// Grafana a server to post them to, with GrafanaToken's token, on
	// GrafanaDash's dashboard.
	AnnotationsOut, Grafana, GrafanaToken, GrafanaDash string
	// Local prints times in this machine's zone rather than UTC.
	Local bool
	// Progress, when set, is told what is being done.
	Progress func(string)
}

// History is a Request's analysis, its results and its annotations.
type History struct {
	Report
	Results     []result.Result
	Annotations []Annotation
}

// options checks what r asks for and turns it into Options. Mistakes
// are *hint.UsageError.
func (r *Request) options(now time.Time) (Options, error) {
	var o Options
	if r.AnnotationsOut == "-" {
		return o, hint.Usage(errors.New("--annotations-out -: standard output carries the report"), "give --annotations-out a file")
	}
	if r.Grafana == "" && r.GrafanaToken != "" {
		return o, hint.Usage(errors.New("--grafana-token-file needs --grafana"), "e.g. --grafana https://grafana.example.com --grafana-token-file token")
	}
	from, to, err := r.Window(now, time.Hour)
	if err != nil {
		return o, err
	}
	o = Options{From: from, To: to, Step: time.Duration(r.Step), Progress: r.Progress}
	if r.Match != "" {
		if o.Selector, err = promql.ParseSelector(r.Match); err != nil {
			return o, hint.Usage(err, hint.Of(err))
		}
	}
	if r.Instance != "" {
		o.Selector = o.Selector.With("instance", "=", r.Instance)
	}
	for _, d := range r.Devices {
		d = strings.TrimPrefix(d, "/dev/")
		if d == "" || strings.ContainsAny(d, "/ \t\n") {
			return o, hint.Usage(fmt.Errorf("--device %q", d), "a kernel device name as the node exporter labels it: sda, nvme0n1, dm-0")
		}
		o.Devices = append(o.Devices, d)
	}
	if r.Expect != "" {
		c, err := watch.ParseExpect(r.Expect, r.VM)
		if err != nil {
			var se *limits.SpecError
			if errors.As(err, &se) {
				err = se
			}
			return o, hint.Usage(err, hint.Of(err))
		}
		// The bucket's level when the range starts is unknown; a full one
		// is the usual state of a disk that was idle before.
		c.CreditStartPct = 100
		o.Ceiling = c
	} else if r.VM != "" {
		return o, hint.Usage(errors.New("--vm needs --expect"), "say which disk: --expect azure:P15 --vm Standard_DS2_v2")
	}
	if cat, err := limits.Default(); err == nil {
		o.Catalog = CatalogFits(cat)
	}
	return o, nil
}

// Run reads and judges the history r asks for. Mistakes in r are
// *hint.UsageError.
func (r *Request) Run(ctx context.Context, now time.Time) (*History, error) {
	o, err := r.options(now)
	if err != nil {
		return nil, err
	}
	c, err := NewClient(r.URL, r.Auth, Limits{})
	if err != nil {
		return nil, err
	}
	var pvcNotes []string
	if r.PVC != "" {
		ns, name, err := ParsePVC(r.PVC)
		if err != nil {
			return nil, hint.Usage(err, hint.Of(err))
		}
		cs, err := Kube(r.Kubeconfig, r.KubeContext)
		if err != nil {
			return nil, err
		}
		v, err := ResolvePVC(ctx, cs, c, ns, name, o.From, o.To)
		if err != nil {
			return nil, err
		}
		if r.Instance == "" && r.Match == "" {
			o.Selector = v.Selector
		}
		if len(o.Devices) == 0 && v.Device != "" {
			o.Devices = []string{v.Device}
		}
		pvcNotes = v.Notes
	}
	a, err := Analyze(ctx, c, o)
	if err != nil {
		return nil, err
	}
	if len(pvcNotes) > 0 {
		a.Notes = append(pvcNotes, a.Notes...)
	}
	// UTC unless asked: a laptop in one zone reading a cluster in another
	// would shift every time by hours with nothing to say so. Every
	// full time printed names its zone and offset.
	loc := time.UTC
	if r.Local {
		loc = time.Local
	}
	return &History{Report: Report{A: a, Loc: loc}, Results: a.Results(loc), Annotations: Annotations(a, loc, r.GrafanaDash)}, nil
}

// WriteAnnotations writes h's annotations to r's AnnotationsOut, when
// it is set.
func (r *Request) WriteAnnotations(h *History) error {
	if r.AnnotationsOut == "" {
		return nil
	}
	return userfile.Write(r.AnnotationsOut, func(w io.Writer) error { return WriteAnnotations(w, h.Annotations) })
}

// Post posts h's annotations to r's Grafana, when it is set, and says
// how many it posted.
func (r *Request) Post(ctx context.Context, h *History) (int, error) {
	if r.Grafana == "" {
		return 0, nil
	}
	g, err := NewGrafana(r.Grafana, Auth{TokenFile: r.GrafanaToken, CAFile: r.Auth.CAFile})
	if err != nil {
		return 0, err
	}
	return g.Post(ctx, h.Annotations)
}
