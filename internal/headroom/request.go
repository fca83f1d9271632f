package headroom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
)

// maxMappingFile bounds a mapping file.
const maxMappingFile = 8 << 20

// Request is one headroom report as the command asks for it: the
// Prometheus, the range, each device's cap (Expect, a Mapping file, or
// the claims of the Cluster) and the rules file to write.
type Request struct {
	URL  string
	Auth promhist.Auth
	promhist.Range
	Step units.Duration
	// Match picks the node exporters' series.
	Match string
	// Expect are DEVICE=SPEC, INSTANCE/DEVICE=SPEC or SPEC (ParseRule);
	// Mapping a YAML file of volumes and nodes (ParseMapping); VM the VM
	// size of the nodes it does not name.
	Expect      []string
	Mapping, VM string
	MarginPct   float64
	Rules       string
	RulesFormat string
	Cluster     bool
	Namespace   string
	Selector    string
	PVC         string
	Kubeconfig  string
	KubeContext string
	DB          string
	Progress    func(string)
	// Set says which options were given, even as their defaults.
	Set func(name string) bool
}

// Check refuses options that make no sense alone or together, before
// anything is read. Mistakes are *hint.UsageError.
func (r *Request) Check() error {
	if r.URL == "" {
		return hint.Usage(errors.New("headroom needs --prometheus"), "e.g. iolens headroom --prometheus http://prometheus:9090 --since 14d --expect azure:P10")
	}
	if r.MarginPct < 0 || r.MarginPct > 1000 {
		return hint.Usage(fmt.Errorf("--margin %g", r.MarginPct), "a percentage from 0 to 1000, e.g. --margin 30")
	}
	if r.RulesFormat != RulesPlain && r.RulesFormat != RulesOperator {
		return hint.Usage(fmt.Errorf("--rules-format %q", r.RulesFormat), "plain or operator")
	}
	for _, n := range []string{"namespace", "selector", "pvc", "kubeconfig", "context", "db"} {
		if r.Set(n) && !r.Cluster {
			return hint.Usage(fmt.Errorf("--%s needs --cluster", n), "e.g. --cluster --namespace databases")
		}
	}
	if r.Set("rules-format") && r.Rules == "" {
		return hint.Usage(errors.New("--rules-format needs --rules"), "e.g. --rules headroom-rules.yaml --rules-format operator")
	}
	return nil
}

// options turns r into Options, the caps of --expect and --mapping
// read. Mistakes in r are *hint.UsageError.
func (r *Request) options(now time.Time) (Options, *limits.Catalog, error) {
	rng := r.Range
	rng.SinceSet = r.Set("since")
	def := 14 * 24 * time.Hour
	if rng.SinceSet {
		def = time.Hour // --since 0, as analyze reads it
	}
	from, to, err := rng.Window(now, def)
	if err != nil {
		return Options{}, nil, err
	}
	cat, err := limits.Default()
	if err != nil {
		return Options{}, nil, err
	}
	o := Options{From: from, To: to, Step: time.Duration(r.Step), Catalog: cat, Margin: r.MarginPct / 100, Progress: r.Progress}
	if r.Match != "" {
		if o.Selector, err = promql.ParseSelector(r.Match); err != nil {
			return o, nil, hint.Usage(err, hint.Of(err))
		}
	}
	if r.VM != "" {
		v := cat.VM(r.VM)
		if v == nil {
			return o, nil, hint.Usage(fmt.Errorf("--vm %q is not in the catalog", r.VM), "iolens limits --vms lists the sizes")
		}
		o.DefaultVM = v.ID
	}
	if r.Mapping != "" {
		b, err := userfile.ReadFile(r.Mapping, maxMappingFile)
		if err != nil {
			return o, nil, hint.Usage(fmt.Errorf("--mapping: %w", err), "give a readable YAML file of at most 8 MiB")
		}
		if o.Rules, o.VMs, err = ParseMapping(b, cat); err != nil {
			return o, nil, hint.Usage(err, hint.Of(err))
		}
	}
	for _, e := range r.Expect {
		rule, err := ParseRule(e, SourceExpect, cat)
		if err != nil {
			var se *limits.SpecError
			if errors.As(err, &se) {
				err = se
			}
			return o, nil, hint.Usage(err, hint.Of(err))
		}
		o.Rules = append(o.Rules, rule)
	}
	return o, cat, nil
}

// Run reads the fleet's history and judges each volume, then writes the
// rules file when one is asked for. Mistakes in r are *hint.UsageError.
func (r *Request) Run(ctx context.Context, now time.Time) (*Report, error) {
	o, cat, err := r.options(now)
	if err != nil {
		return nil, err
	}
	c, err := promhist.NewClient(r.URL, r.Auth, promhist.Limits{})
	if err != nil {
		return nil, err
	}
	var notes []string
	if r.Cluster {
		if notes, err = r.addCluster(ctx, c, cat, &o); err != nil {
			return nil, err
		}
	}
	rep, err := Run(ctx, c, o)
	if err != nil {
		return nil, err
	}
	rep.Notes = append(notes, rep.Notes...)
	if r.Rules != "" {
		b, err := Rules(rep, o.Selector, r.RulesFormat)
		if err != nil {
			return nil, err
		}
		if err := userfile.Write(r.Rules, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
	}
	return rep, nil
}

// addCluster adds the claims of the cluster to o, with their notes.
func (r *Request) addCluster(ctx context.Context, c *promhist.Client, cat *limits.Catalog, o *Options) ([]string, error) {
	cs, err := promhist.Kube(r.Kubeconfig, r.KubeContext)
	if err != nil {
		return nil, err
	}
	var notes []string
	// The classes iolens measured (k8s diagnose) give their caps before
	// the catalog does; without a history there are none.
	st, err := store.OpenDefault(ctx, r.DB, store.Options{ReadOnly: true})
	switch {
	case err == nil:
		defer st.Close()
		o.Measured = MeasuredCaps(func(ctx context.Context, class string) ([]result.Result, error) {
			sel, err := store.ParseSelector("k8s.storage-class=" + class)
			if err != nil {
				return nil, err
			}
			return st.Select(ctx, sel)
		}, func(rs []result.Result) diagnosis.Diagnosis { return diagnosis.Saved(rs) })
	case errors.Is(err, store.ErrNoDatabase):
	default:
		notes = append(notes, "the history database could not be read ("+err.Error()+"): no class's measured caps are used")
	}
	pick := Claims{Namespace: r.Namespace, Selector: r.Selector}
	if r.PVC != "" {
		ns, name, err := promhist.ParsePVC(r.PVC)
		if err != nil {
			return nil, hint.Usage(err, hint.Of(err))
		}
		if r.Namespace != "" && r.Namespace != ns {
			return nil, hint.Usage(fmt.Errorf("--pvc %s is not in --namespace %s", r.PVC, r.Namespace), "give one of them")
		}
		pick.Namespace, pick.Name = ns, name
	}
	inv, err := FromCluster(ctx, cs, c, cat, pick, *o)
	if err != nil {
		return nil, err
	}
	o.Add(inv)
	return append(notes, inv.Notes...), nil
}
