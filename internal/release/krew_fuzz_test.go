package release

import (
	"os"
	"testing"
)

// FuzzParseKrew: a krew manifest (the template, or one given to check).
// What parses is a Plugin with a name.
func FuzzParseKrew(f *testing.F) {
	if b, err := os.ReadFile("../../deploy/krew/iolens.yaml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{"kind: Plugin\nmetadata:\n  name: x\n", "kind: Plugin\n", "a: [", "kind: Plugin\nmetadata:\n  name: x\nbogus: 1\n", "&a [*a, *a]", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseKrew(b)
		if err != nil {
			return
		}
		if p.Kind != "Plugin" || p.Metadata.Name == "" {
			t.Fatalf("parsed %+v", p)
		}
	})
}
