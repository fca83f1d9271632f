package diagnosis

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// A cache in front of a slow disk: at QD1, 71% of reads in about 1.2 ms
// and 29% in about 8 ms. The verdict and the JSON say both populations
// beside the mean, which is neither; the same run's unimodal tests (the
// fixture as it was measured) say none.
func TestQD1LatencyPopulations(t *testing.T) {
	rs := readFixture(t, "quick-3000iops-80MBps.ndjson")
	analysis.Annotate(rs)
	if d := Build(rs, Options{}); d.Disk.Read.QD1Modes != nil || strings.Contains(strings.Join(d.Verdict, "\n"), "populations") {
		t.Errorf("one population measured, two said: %+v %q", d.Disk.Read.QD1Modes, d.Verdict)
	}
	found := false
	for i := range rs {
		r := &rs[i]
		if r.Test.Name != "randread-4k-qd1" {
			continue
		}
		found = true
		var h result.Histogram
		// Hits spread over 1.1 to 1.3 ms, misses over 7 to 9 ms.
		for j := 0; j < 71; j++ {
			h.Add(uint64(1.1e6+float64(j)*0.2e6/70), 100)
		}
		for j := 0; j < 29; j++ {
			h.Add(uint64(7e6+float64(j)*2e6/28), 100)
		}
		r.Read.Hist, r.Read.Lat.N, r.Read.Lat.MeanNs, r.Read.Lat.P99Ns = h, h.Count(), h.Mean(), h.Percentile(99)
	}
	if !found {
		t.Fatal("no QD1 read test in the fixture")
	}
	d := Build(rs, Options{})
	m := d.Disk.Read.QD1Modes
	if len(m) != 2 || m[0].Share < 0.705 || m[0].Share > 0.715 || m[0].LatNs < 1.15e6 || m[0].LatNs > 1.25e6 || m[1].LatNs < 7.8e6 || m[1].LatNs > 8.2e6 {
		t.Fatalf("modes %+v, want 71%% at about 1.2 ms and 29%% at about 8 ms", m)
	}
	v := strings.Join(d.Verdict, "\n")
	if !strings.Contains(v, "two latency populations: 71% at ~1.2") || !strings.Contains(v, "ms (hits), 29% at ~8") || !strings.Contains(v, "(misses)") {
		t.Errorf("verdict %q", v)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"qd1_modes":[{"share":0.71`) {
		t.Errorf("JSON lacks the populations: %.600s", b[strings.Index(string(b), `"disk"`):])
	}
}
