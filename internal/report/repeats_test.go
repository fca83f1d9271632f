package report

import (
	"bytes"
	"github.com/iolens/iolens/internal/diagnosis"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestRepeatsSection(t *testing.T) {
	var rs []result.Result
	for i, v := range []float64{1000, 1010, 995, 1005, 500} {
		rs = append(rs, result.Result{Schema: result.SchemaV1, RunID: "r", Suite: "s", Status: "ok", Repeat: i + 1,
			Test: result.TestSpec{Name: "randread-4k"}, Read: &result.DirResult{IOPS: v, Lat: result.Latency{N: 1, MeanNs: 1e6}}})
	}
	for _, render := range []Renderer{Text, markdown} {
		var b bytes.Buffer
		if err := render(&b, diagnosis.Replay(rs)); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		// mean 902, sd sqrt((98^2+108^2+93^2+103^2+402^2)/4) = 224.8,
		// CI half-width 2.776445*224.8/sqrt(5) = 279.1.
		for _, want := range []string{"Repeats", "902", "225", "623..1181", "24.9%", "repeat 5 is an outlier"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
	}
}
