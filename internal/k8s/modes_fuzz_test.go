package k8s

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseNodeSelector: --node-selector k=v[,k=v].
func FuzzParseNodeSelector(f *testing.F) {
	for _, s := range []string{"", "zone=a", "a=b,c=d", "=x", "a", "a=b,,", " a = b ", "a=b=c", "a=b,a=c", "bad key=x", "k=" + string(make([]byte, 64))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseNodeSelector(s)
		if err != nil {
			return
		}
		for k, v := range m {
			if k == "" {
				t.Fatalf("%q: an empty key", s)
			}
			// Issue 34.6: what is accepted is what the API accepts.
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				t.Fatalf("%q: accepted %q=%q, which the API refuses", s, k, v)
			}
		}
		if s == "" && m != nil {
			t.Fatal("a selector from nothing")
		}
	})
}

// Issue 34.6: selectors the API would refuse are refused here.
func TestParseNodeSelector(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]string // nil: refused
	}{
		{"zone=a", map[string]string{"zone": "a"}},
		{" zone = a , disk=ssd", map[string]string{"zone": "a", "disk": "ssd"}},
		{"topology.kubernetes.io/zone=eu-1a", map[string]string{"topology.kubernetes.io/zone": "eu-1a"}},
		{"a=", map[string]string{"a": ""}},
		{"a=b=c", nil},
		{"a=b,a=c", nil},
		{"bad key=x", nil},
		{"a=x y", nil},
		{"=x", nil},
		{"a", nil},
	} {
		m, err := ParseNodeSelector(c.in)
		if c.want == nil {
			if err == nil {
				t.Errorf("%q: accepted %v", c.in, m)
			}
			continue
		}
		if err != nil || len(m) != len(c.want) {
			t.Errorf("%q = %v, %v; want %v", c.in, m, err, c.want)
			continue
		}
		for k, v := range c.want {
			if m[k] != v {
				t.Errorf("%q: %s=%q, want %q", c.in, k, m[k], v)
			}
		}
	}
}
