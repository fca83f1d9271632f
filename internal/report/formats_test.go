package report

import (
	"bytes"
	"testing"

	"github.com/iolens/iolens/internal/diagnosis"
)

// Every format of every registry writes its report, and no name (or
// other name) is taken twice within a registry.
func TestRegistriesWrite(t *testing.T) {
	rs := fixed(t)
	d := Diagnose(rs, nil)
	c := Comparison{Schema: "iolens.comparison/v1", Operands: []string{"a"}, Labels: []string{"a"}, Alpha: 0.05}
	nodes := NodeDiagnoses{Schema: "iolens.k8s-diagnosis/v1", Nodes: map[string]diagnosis.Diagnosis{"node-1": d}}
	in := Input{Results: rs, Diagnosis: &d, Comparison: &c, Nodes: &nodes}
	if len(Registries()) != 4 {
		t.Fatalf("%d registries", len(Registries()))
	}
	for _, reg := range Registries() {
		seen := map[string]bool{}
		for _, f := range reg.Formats {
			for _, n := range append([]string{f.Name}, f.Aliases...) {
				if seen[n] {
					t.Errorf("%s: %q twice", reg.Kind, n)
				}
				seen[n] = true
			}
			if f.Write == nil {
				t.Errorf("%s: %s writes nothing", reg.Kind, f.Name)
				continue
			}
			var buf bytes.Buffer
			if err := f.Write(&buf, in); err != nil || buf.Len() == 0 {
				t.Errorf("%s -o %s: %v, %d bytes", reg.Kind, f.Name, err, buf.Len())
			}
		}
		if !seen["text"] || !seen["json"] {
			t.Errorf("%s lacks text or json: %v", reg.Kind, reg.Names())
		}
		if _, err := reg.Lookup("no-such-format"); err == nil {
			t.Errorf("%s accepts a format it lacks", reg.Kind)
		}
	}
}
