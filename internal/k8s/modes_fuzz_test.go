package k8s

import "testing"

// FuzzParseNodeSelector: --node-selector k=v[,k=v].
func FuzzParseNodeSelector(f *testing.F) {
	for _, s := range []string{"", "zone=a", "a=b,c=d", "=x", "a", "a=b,,", " a = b "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseNodeSelector(s)
		if err != nil {
			return
		}
		for k := range m {
			if k == "" {
				t.Fatalf("%q: an empty key", s)
			}
		}
		if s == "" && m != nil {
			t.Fatal("a selector from nothing")
		}
	})
}
