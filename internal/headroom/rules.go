package headroom

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/units"
	"go.yaml.in/yaml/v3"
)

// Rule formats.
const (
	RulesPlain    = "plain"
	RulesOperator = "operator"
)

// The names the rules record.
const (
	RecIOPS       = "iolens:volume_iops:rate"
	RecBW         = "iolens:volume_bw_bytes:rate"
	RecCapIOPS    = "iolens:volume_cap_iops"
	RecCapBW      = "iolens:volume_cap_bw_bytes"
	RecBurstIOPS  = "iolens:volume_burst_iops"
	RecBurstBW    = "iolens:volume_burst_bw_bytes"
	RecBucketIOs  = "iolens:volume_burst_bucket_ios"
	RecCreditIOs  = "iolens:volume_burst_credit_ios"
	RecVMCapIOPS  = "iolens:vm_cap_iops"
	RecVMCapBW    = "iolens:vm_cap_bw_bytes"
	AlertAtCap    = "IolensVolumeAtCap"
	AlertCredit   = "IolensVolumeBurstCreditLow"
	AlertVMAtCap  = "IolensVMCapBinds"
	rulesCreditH  = 3600 // the credit estimate's lookback, in seconds
	rulesCreditS  = 900  // "runs out within 15 minutes"
	rulesAtCapFor = "10m"
)

type promRule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type promGroup struct {
	Name     string     `yaml:"name"`
	Interval string     `yaml:"interval,omitempty"`
	Rules    []promRule `yaml:"rules"`
}

// constant is a series of value with the instance and device labels
// given (no device for a VM's).
func constant(v float64, inst, dev string) string {
	e := fmt.Sprintf("label_replace(vector(%s), \"instance\", %s, \"\", \"\")", units.Exact(v), strconv.Quote(inst))
	if dev != "" {
		e = fmt.Sprintf("label_replace(%s, \"device\", %s, \"\", \"\")", e, strconv.Quote(dev))
	}
	return e
}

// Rules writes Prometheus rules for the report's volumes and nodes: each
// volume's caps recorded, its use at the cap for 10 minutes, its burst
// credit running out within 15 minutes, and a node's VM cap binding.
// Volumes whose cap is unknown get no rule.
func Rules(r *Report, sel promql.Selector, format string) ([]byte, error) {
	win := int(math.Max(60, 4*r.ScrapeIntervalS))
	dsel := sel.With("device", "!~", diskstats.StackedPattern)
	rate := func(m string) string { return fmt.Sprintf("rate(%s[%ds])", dsel.Of(m), win) }
	use := promGroup{Name: "iolens-headroom-use", Rules: []promRule{
		{Record: RecIOPS, Expr: fmt.Sprintf("sum by (instance, device) (%s + %s)", rate(mReads), rate(mWrites))},
		{Record: RecBW, Expr: fmt.Sprintf("sum by (instance, device) (%s + %s)", rate(mReadBytes), rate(mWrittenBytes))},
	}}
	caps := promGroup{Name: "iolens-headroom-caps"}
	vols := append([]*Volume(nil), r.Volumes...)
	sort.Slice(vols, func(i, j int) bool {
		return vkey(vols[i].Instance, vols[i].Device) < vkey(vols[j].Instance, vols[j].Device)
	})
	for _, v := range vols {
		c := v.Cap
		if c == nil || v.Instance == "" {
			continue
		}
		lbl := map[string]string{"iolens_cap": c.Name}
		add := func(name string, x float64) {
			if x > 0 {
				caps.Rules = append(caps.Rules, promRule{Record: name, Expr: constant(x, v.Instance, v.Device), Labels: lbl})
			}
		}
		add(RecCapIOPS, c.IOPS)
		add(RecCapBW, c.BWBytes)
		if c.bursts() {
			add(RecBurstIOPS, math.Max(c.BurstIOPS, c.IOPS))
			add(RecBurstBW, math.Max(c.BurstBWBytes, c.BWBytes))
			if c.BurstIOPS > c.IOPS && c.IOPS > 0 {
				add(RecBucketIOs, (c.BurstIOPS-c.IOPS)*c.BurstSeconds)
			}
		}
	}
	for _, n := range r.Nodes {
		if n.VMIOPS > 0 {
			caps.Rules = append(caps.Rules, promRule{Record: RecVMCapIOPS, Expr: constant(n.VMIOPS, n.Instance, ""), Labels: map[string]string{"iolens_vm": n.VM}})
		}
		if n.VMBWBytes > 0 {
			caps.Rules = append(caps.Rules, promRule{Record: RecVMCapBW, Expr: constant(n.VMBWBytes, n.Instance, ""), Labels: map[string]string{"iolens_vm": n.VM}})
		}
	}
	on := " / on (instance, device) group_left () "
	// The burst credit, estimated as the catalog's bucket would hold it
	// had it been full an hour ago: its size less what ran above the base
	// since.
	credit := promRule{Record: RecCreditIOs, Expr: fmt.Sprintf(
		"clamp_min(max without (iolens_cap) (%s) - clamp_min(sum by (instance, device) (increase(%s[%ds]) + increase(%s[%ds])) - on (instance, device) group_left () %d * max without (iolens_cap) (%s), 0), 0)",
		RecBucketIOs, dsel.Of(mReads), rulesCreditH, dsel.Of(mWrites), rulesCreditH, rulesCreditH, RecCapIOPS)}
	use.Rules = append(use.Rules, credit)
	held := func(rec, capRec, burstRec string) string {
		// At the cap in force: at 95% of the burst cap, or held within 5%
		// of the base when the volume bursts (its credit gone), or at 95%
		// of the base when it does not burst.
		capM := "max without (iolens_cap) (" + capRec + ")"
		burstM := "max without (iolens_cap) (" + burstRec + ")"
		return fmt.Sprintf("(%s%s%s >= 0.95 unless on (instance, device) %s)"+
			" or (%s%s%s >= 0.95 and %s%s%s <= 1.05)"+
			" or (%s%s%s >= 0.95)",
			rec, on, capM, burstM,
			rec, on, capM, rec, on, capM,
			rec, on, burstM)
	}
	alerts := promGroup{Name: "iolens-headroom-alerts", Rules: []promRule{
		{Alert: AlertAtCap, Expr: held(RecIOPS, RecCapIOPS, RecBurstIOPS) + " or " + held(RecBW, RecCapBW, RecBurstBW), For: rulesAtCapFor,
			Labels:      map[string]string{"severity": "warning"},
			Annotations: map[string]string{"summary": "{{ $labels.instance }} {{ $labels.device }} has run at 95% or more of its cap for 10 minutes: the cap, not the workload, sets its pace"}},
		{Alert: AlertCredit, Expr: fmt.Sprintf("(%s%s clamp_min(%s - on (instance, device) max without (iolens_cap) (%s), 1e-9)) < %d and on (instance, device) (%s - on (instance, device) max without (iolens_cap) (%s)) > 0",
			RecCreditIOs, on, RecIOPS, RecCapIOPS, rulesCreditS, RecIOPS, RecCapIOPS), For: "1m",
			Labels:      map[string]string{"severity": "warning"},
			Annotations: map[string]string{"summary": "{{ $labels.instance }} {{ $labels.device }}: at this rate its burst credit runs out within 15 minutes (estimated from a full bucket an hour ago); then it falls to its base"}},
		{Alert: AlertVMAtCap, Expr: fmt.Sprintf("(sum by (instance) (%s) / on (instance) group_left () max without (iolens_vm) (%s) >= 0.95) or (sum by (instance) (%s) / on (instance) group_left () max without (iolens_vm) (%s) >= 0.95)",
			RecIOPS, RecVMCapIOPS, RecBW, RecVMCapBW), For: "5m",
			Labels:      map[string]string{"severity": "warning"},
			Annotations: map[string]string{"summary": "{{ $labels.instance }}: its volumes together run at 95% or more of the VM's cap for 5 minutes: the VM, not each volume, sets their pace"}},
	}}
	groups := []promGroup{use, caps, alerts}
	var doc any = map[string]any{"groups": groups}
	switch format {
	case "", RulesPlain:
	case RulesOperator:
		doc = map[string]any{
			"apiVersion": "monitoring.coreos.com/v1",
			"kind":       "PrometheusRule",
			"metadata":   map[string]any{"name": "iolens-headroom", "labels": map[string]string{"app.kubernetes.io/name": "iolens"}},
			"spec":       map[string]any{"groups": groups},
		}
	default:
		return nil, &ExpectError{Err: fmt.Errorf("--rules-format %q", format), Help: "plain (a Prometheus rules file) or operator (a PrometheusRule)"}
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return []byte(b.String()), enc.Close()
}
