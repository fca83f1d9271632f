package compare_test

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

func nodeModel(readIOPS float64, limit string, fsyncP99Ns float64) diagnosis.Diagnosis {
	d := diagnosis.Diagnosis{Disk: diagnosis.Disk{
		Read:  &diagnosis.Direction{IOPS: readIOPS, IOPSLimit: limit, BWBytes: 200e6, BWLimit: result.CodeBandwidthCap},
		Write: &diagnosis.Direction{IOPS: readIOPS * 0.9, IOPSLimit: limit},
	}}
	if fsyncP99Ns > 0 {
		d.Disk.Fsync = &diagnosis.Fsync{P99Ns: fsyncP99Ns}
	}
	return d
}

func TestCompareNodes(t *testing.T) {
	cases := []struct {
		name   string
		models map[string]diagnosis.Diagnosis
		want   string // "node: figure, figure" per outlier, "; "-joined
		why    string
	}{
		{"alike within noise", map[string]diagnosis.Diagnosis{
			"a": nodeModel(5000, result.CodeIOPSCap, 2e6), "b": nodeModel(5400, result.CodeIOPSCap, 2.2e6)}, "", ""},
		{"a pair: the worse is named", map[string]diagnosis.Diagnosis{
			"a": nodeModel(40000, result.CodeDevice, 1e6), "b": nodeModel(400, result.CodeIOPSCap, 1e6)},
			"b: read IOPS, write IOPS", "flat cap (400 IOPS)"},
		{"three: the one off the median", map[string]diagnosis.Diagnosis{
			"a": nodeModel(5000, result.CodeIOPSCap, 2e6), "b": nodeModel(5100, result.CodeIOPSCap, 2e6), "c": nodeModel(4900, result.CodeIOPSCap, 9e6)},
			"c: fsync p99", "noisy neighbour"},
		{"three: a faster one is named too", map[string]diagnosis.Diagnosis{
			"a": nodeModel(5000, result.CodeIOPSCap, 0), "b": nodeModel(5000, result.CodeIOPSCap, 0), "c": nodeModel(20000, result.CodeIOPSCap, 0)},
			"c: read IOPS, write IOPS", "noisy neighbour"},
		{"figures a node lacks are not compared", map[string]diagnosis.Diagnosis{
			"a": nodeModel(5000, result.CodeIOPSCap, 2e6), "b": nodeModel(5000, result.CodeIOPSCap, 0)}, "", ""},
		{"one node: nothing to compare", map[string]diagnosis.Diagnosis{"a": nodeModel(5000, "", 0)}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp := compare.Nodes(c.models, 0.15)
			var got []string
			for _, o := range cmp.Outliers {
				var figs []string
				for _, f := range o.Figures {
					figs = append(figs, f.Name)
				}
				got = append(got, o.Node+": "+strings.Join(figs, ", "))
				if !strings.Contains(o.Why, c.why) {
					t.Errorf("why %q lacks %q", o.Why, c.why)
				}
			}
			if strings.Join(got, "; ") != c.want {
				t.Errorf("outliers %q, want %q", strings.Join(got, "; "), c.want)
			}
			if len(cmp.Nodes) != len(c.models) {
				t.Errorf("nodes %v", cmp.Nodes)
			}
		})
	}
	// The pair's ratio and the others' median are kept for the report.
	cmp := compare.Nodes(map[string]diagnosis.Diagnosis{"a": nodeModel(40000, result.CodeDevice, 0), "b": nodeModel(400, result.CodeIOPSCap, 0)}, 0.15)
	f := cmp.Outliers[0].Figures[0]
	if f.Value != 400 || f.Others != 40000 || f.Ratio != 0.01 || f.Limit != result.CodeIOPSCap || f.OthersLimit != result.CodeDevice {
		t.Errorf("figure %+v", f)
	}
	if compare.FormatFigure(f) != "400 IOPS" || compare.FormatOthers(f) != "40000 IOPS" {
		t.Errorf("%s against %s", compare.FormatFigure(f), compare.FormatOthers(f))
	}
}
