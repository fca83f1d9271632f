package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"github.com/iolens/iolens/internal/diagnosis"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// fio's json+ of 1,000 random reads, whose p99.9 (399,360 ns: the
// midpoint of the histogram bucket that holds the slowest IOs) is above
// the max fio measured (398,626 ns). No report may print a percentile
// above the max: not the text, the CSV, the JSON, nor a merged summary.
func TestPercentilesNeverAboveMax(t *testing.T) {
	const fixture = "percentile_edgecase_N1000.jsonplus.json"
	const maxNs, rawP999 = 398626.0, 399360.0
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"99.900000" : 399360`)) || !bytes.Contains(b, []byte(`"max" : 398626`)) {
		t.Fatal("the fixture no longer has fio's p99.9 above its max")
	}
	rs, err := ReadResults(bytes.NewReader(b), fixture)
	if err != nil {
		t.Fatal(err)
	}
	d := rs[0].Read
	if d == nil || d.Lat.MaxNs != maxNs {
		t.Fatalf("read max %v, want %v", d, maxNs)
	}
	if d.Hist.Percentile(99.9) != rawP999 {
		t.Fatalf("the histogram's p99.9 is %v, want fio's %v", d.Hist.Percentile(99.9), rawP999)
	}
	for name, v := range map[string]float64{"p50": d.Lat.P50Ns, "p90": d.Lat.P90Ns, "p99": d.Lat.P99Ns, "p99.9": d.Lat.P999Ns, "p99.99": d.Lat.P9999Ns} {
		if v > maxNs || v <= 0 {
			t.Errorf("record %s = %v, max %v", name, v, maxNs)
		}
	}
	if !d.Clipped() {
		t.Error("the record does not say a percentile was held at the max")
	}

	// CSV.
	var buf bytes.Buffer
	if err := CSV(&buf, rs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		mx, _ := strconv.ParseFloat(r[col["lat_max_ns"]], 64)
		for _, c := range []string{"lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "lat_p99_9_ns", "lat_p99_99_ns"} {
			if v, _ := strconv.ParseFloat(r[col[c]], 64); v > mx {
				t.Errorf("CSV %s %v above max %v", c, v, mx)
			}
		}
	}

	// JSON, read back as any consumer would.
	buf.Reset()
	if err := JSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	var js []struct {
		Read struct {
			Lat map[string]float64 `json:"lat"`
		} `json:"read"`
	}
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	for k, v := range js[0].Read.Lat {
		if strings.HasPrefix(k, "p") && v > js[0].Read.Lat["max_ns"] {
			t.Errorf("JSON %s %v above max %v", k, v, js[0].Read.Lat["max_ns"])
		}
	}

	// The text table: p99.9 and max columns, and the note.
	buf.Reset()
	if err := Text(&buf, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	txt := buf.String()
	for _, l := range strings.Split(txt, "\n") {
		f := strings.Fields(l)
		if len(f) == 9 && f[1] == "read" {
			p999, _ := strconv.ParseFloat(f[7], 64)
			mx, _ := strconv.ParseFloat(f[8], 64)
			if p999 > mx {
				t.Errorf("text p99.9 %v above max %v: %q", p999, mx, l)
			}
		}
	}
	if !strings.Contains(txt, "held at the max") {
		t.Errorf("no note that a percentile was held at the max:\n%s", txt)
	}

	// A record written before the clip (fio's p99.9 as is) reads back
	// clipped.
	old := rs[0]
	oldRead := *old.Read
	oldRead.Lat.P999Ns, oldRead.Lat.P9999Ns = rawP999, rawP999
	old.Read = &oldRead
	line, err := result.Marshal(&old)
	if err != nil {
		t.Fatal(err)
	}
	back, err := result.Unmarshal(line)
	if err != nil {
		t.Fatal(err)
	}
	if back.Read.Lat.P999Ns != maxNs {
		t.Errorf("an old record's p99.9 reads back as %v, want the max %v", back.Read.Lat.P999Ns, maxNs)
	}

	// Merged over repeats (compare, the HTML page): from one histogram,
	// clipped at the largest max.
	two := []result.Result{rs[0], rs[0]}
	two[1].Repeat = 2
	for _, s := range analysis.Summarize(two, analysis.SummarizeOptions{}) {
		if s.P999Ns > maxNs || s.P9999Ns > maxNs {
			t.Errorf("summary p99.9 %v p99.99 %v above max %v", s.P999Ns, s.P9999Ns, maxNs)
		}
	}
	for _, v := range percentileCurve(&d.Hist, maxNs) {
		if v != nil && *v > maxNs/1e6 {
			t.Errorf("percentile curve point %v ms above max", *v)
		}
	}
}
