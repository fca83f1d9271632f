package units

import "testing"

// TestPrecisionFlag: a precision flag reads what ParsePrecision reads,
// and refuses what it refuses.
func TestPrecisionFlag(t *testing.T) {
	var p Precision
	for in, want := range map[string]float64{"2%": 0.02, "0.05": 0.05} {
		if err := p.Set(in); err != nil || float64(p) != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, float64(p), err, want)
		}
	}
	for _, bad := range []string{"", "x", "NaN", "-1%", "200%"} {
		if err := p.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted: %v", bad, float64(p))
		}
	}
	if p.Type() != "precision" {
		t.Errorf("Type() = %q", p.Type())
	}
}
