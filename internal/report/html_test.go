package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/iolens/iolens/internal/diagnosis"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"golang.org/x/net/html"
)

// synth builds n results of secs 1 s samples each. Every test has a 20 s
// stall (zero throughput) starting at secs/3, and a finding for it; tests
// 1-4 form a QD sweep whose IOPS flatten from QD 8.
func synth(n, secs int, labels map[string]string) []result.Result {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var rs []result.Result
	for i := 0; i < n; i++ {
		qd := 1 << (i % 6)
		spec := result.TestSpec{Name: fmt.Sprintf("randwrite-4k-qd%d-%d", qd, i), RW: "randwrite", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true, RuntimeS: float64(secs)}
		iops := 1000 * math.Min(float64(qd), 8)
		if i < 6 {
			spec.Group = "qd-sweep:randwrite-4k"
		}
		stallAt, stallLen := float64(secs/3), 20.0
		r := result.Result{Schema: result.SchemaV1, RunID: "20240501-120000-abcdef", Suite: "standard", Index: i + 1, Repeat: 1, Test: spec,
			Target: result.Target{Kind: "dir", Path: "/mnt/data", Device: "vdb", Filesystem: "ext4", Labels: labels},
			Host:   result.Host{Hostname: "node-1", Kernel: "6.1.0", CPUs: 2, MemTotalBytes: 4 << 30, IolensVersion: "test"},
			Start:  start.Add(time.Duration(i*secs) * time.Second), Status: "ok", FioVersion: "fio-3.33",
			Write: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, LatKind: "lat",
				Lat:  result.Latency{N: 1000, P50Ns: 1003520, P99Ns: 4046848 * float64(qd)},
				Hist: result.HistogramOf(map[uint64]uint64{1003520: 900, 2023424: 90, 4046848: 9, 16252928: 1})},
			Findings: []result.Finding{{Kind: "stall", Severity: "fail", Summary: "IO stopped for 20 s", StartS: &stallAt, DurationS: &stallLen,
				Evidence: map[string]float64{"duration_s": 20, "ceiling_iops": 5000}}},
		}
		r.End = r.Start.Add(time.Duration(secs) * time.Second)
		dev := result.DeviceSeries{Device: "vdb", Role: "direct"}
		for t := 0; t < secs; t++ {
			v := iops * (1 + 0.05*math.Sin(float64(t)))
			if float64(t) >= stallAt && float64(t) < stallAt+stallLen {
				v = 0
			}
			r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(t + 1), WriteIOPS: v, WriteBWBytes: v * 4096, WriteLatMeanNs: 1e6})
			dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(t) + 0.5, WriteIOPS: v, WriteBWBytes: v * 4096, WriteAwaitMs: 1, QueueSize: float64(qd), UtilPct: 99})
			r.System = append(r.System, result.SystemSample{T: float64(t) + 0.5, DirtyBytes: uint64(t%60) << 20, WritebackBytes: 1 << 20, IowaitPct: 12})
		}
		r.Devices = []result.DeviceSeries{dev}
		rs = append(rs, r)
	}
	return rs
}

func render(t testing.TB, rs []result.Result) []byte {
	var buf bytes.Buffer
	if err := HTML(&buf, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// external reports attribute values and style text that would load
// something from outside the file.
func external(t *testing.T, page []byte) []string {
	var bad []string
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatalf("page does not parse: %v", z.Err())
			}
			return bad
		}
		tok := z.Token()
		for _, a := range tok.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			switch a.Key {
			case "src", "href", "action", "data", "poster", "srcset", "xlink:href":
				if !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "data:") {
					bad = append(bad, tok.Data+" "+a.Key+"="+a.Val)
				}
			}
		}
		if tok.Data == "link" {
			bad = append(bad, "link element")
		}
		if tt == html.TextToken && (strings.Contains(tok.Data, "@import") || strings.Contains(tok.Data, "url(http")) {
			bad = append(bad, "stylesheet import")
		}
	}
}

func readPageData(t *testing.T, page []byte) pageDataJSON {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var raw string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "script" {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Val == "iolens-data" && n.FirstChild != nil {
					raw = n.FirstChild.Data
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	var d pageDataJSON
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatalf("chart data: %v", err)
	}
	return d
}

type pageDataJSON struct {
	Sets   []string `json:"sets"`
	Series []struct {
		ID    string   `json:"id"`
		Fio   *table   `json:"fio"`
		Dev   *table   `json:"dev"`
		Sys   *table   `json:"sys"`
		Shade [][3]any `json:"shade"`
	} `json:"series"`
	Pct []struct {
		ID string       `json:"id"`
		X  []float64    `json:"x"`
		Ys [][]*float64 `json:"ys"`
	} `json:"pct"`
	Model []struct {
		Unit  string    `json:"unit"`
		X     []float64 `json:"x"`
		Lines []struct {
			Label string     `json:"label"`
			Kind  string     `json:"kind"`
			Y     []*float64 `json:"y"`
		} `json:"lines"`
		Knees []struct {
			QD float64 `json:"qd"`
		} `json:"knees"`
	} `json:"model"`
}

func TestHTMLSelfContainedWithData(t *testing.T) {
	rs := synth(6, 600, map[string]string{"storage-class": "premium"})
	page := render(t, rs)
	if bad := external(t, page); len(bad) > 0 {
		t.Errorf("external references: %v", bad)
	}
	for _, s := range []string{"http://", "https://"} {
		// The only URL allowed is the library's own banner comment.
		if n := bytes.Count(page, []byte(s)); n > 1 {
			t.Errorf("%d occurrences of %s", n, s)
		}
	}
	for _, want := range []string{"<svg class=\"bars\"", "Tests side by side", "Disk model: IOPS against queue depth", "IO stopped for 20 s", "storage-class=premium", "uPlot", "@media print"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	d := readPageData(t, page)
	if len(d.Series) != 6 || len(d.Pct) != 6 || len(d.Model) != 1 {
		t.Fatalf("charts: %d series, %d pct, %d model", len(d.Series), len(d.Pct), len(d.Model))
	}
	s := d.Series[0]
	if s.Fio == nil || s.Dev == nil || s.Sys == nil || len(s.Fio.Cols[0]) != 600 {
		t.Fatalf("series 0 tables: %+v", s)
	}
	if len(s.Shade) != 1 || s.Shade[0][0].(float64) != 200 || s.Shade[0][1].(float64) != 220 || s.Shade[0][2] != "stall" {
		t.Errorf("shade %v", s.Shade)
	}
	// The disk model: IOPS 1000..8000 measured at QD 1..32, each depth
	// a point, with the fitted line drawn over the whole axis and the
	// latency of each depth.
	m := d.Model[0]
	if m.Unit != "IOPS" || len(m.Lines) != 3 {
		t.Fatalf("model chart %+v", m)
	}
	count := func(y []*float64) (n int) {
		for _, v := range y {
			if v != nil {
				n++
			}
		}
		return n
	}
	for _, l := range m.Lines {
		want := 6
		if l.Kind == "fit" {
			want = len(m.X)
		}
		if got := count(l.Y); got != want {
			t.Errorf("%s (%s): %d points, want %d", l.Label, l.Kind, got, want)
		}
	}
	for _, q := range []float64{1, 2, 4, 8, 16, 32} {
		i := slices.Index(m.X, q)
		if i < 0 || m.Lines[0].Y[i] == nil {
			t.Errorf("QD%v not measured on the chart", q)
		}
	}
	// The percentile curve: 90% of samples at 1003520 ns, 99% by 2023424,
	// the max in the bucket of 16252928 (midpoint 16318464 ns).
	p := d.Pct[0]
	at := func(nines float64) float64 {
		for i, x := range p.X {
			if math.Abs(x-nines) < 1e-9 {
				return *p.Ys[0][i]
			}
		}
		t.Fatalf("no point at %g nines", nines)
		return 0
	}
	if at(0) != 1.004 || at(1) != 1.004 || at(2) != 2.023 || at(5) != 16.32 {
		t.Errorf("percentile curve: min %v p90 %v p99 %v p99.999 %v", at(0), at(1), at(2), at(5))
	}
	// The expected ceiling from the findings' evidence is drawn.
	if !bytes.Contains(page, []byte(`class="ceil"`)) {
		t.Errorf("no ceiling line")
	}
}

func TestHTMLEscapesHostileStrings(t *testing.T) {
	const evil = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`
	rs := synth(2, 30, map[string]string{"team": evil, evil: "v"})
	rs[0].Test.Name = evil
	rs[0].Target.Path = "/mnt/" + evil
	rs[0].Findings[0].Summary = evil
	rs[1].Notes = []string{evil}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, Page{Title: evil, Sets: []Set{{Name: evil, Results: rs}, {Name: "b", Results: synth(1, 30, nil)}},
		Tables: []*Table{{ID: evil, Title: evil, Header: []string{evil}, Rows: [][]string{{evil}}, Class: [][]string{{evil}}, Note: evil}}, Warnings: []string{evil}}); err != nil {
		t.Fatal(err)
	}
	page := buf.Bytes()
	if bytes.Contains(page, []byte(evil)) || bytes.Contains(page, []byte("<img")) || bytes.Contains(page, []byte(`"pwned"</script>`)) {
		t.Fatalf("hostile string written unescaped")
	}
	// Exactly the three script elements of the page exist.
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.ElementNode && (x.Data == "script" || x.Data == "img") {
			n++
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if n != 3 {
		t.Errorf("%d script/img elements, want the page's 3 scripts", n)
	}
	d := readPageData(t, page)
	if d.Sets[0] != evil {
		t.Errorf("set name did not round-trip through the data block: %q", d.Sets[0])
	}
}

func TestLTTBKeepsStalls(t *testing.T) {
	const n = 3600
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = float64(i), 100+float64(i%7)
		if i >= 1000 && i < 1005 { // a 5 s stall
			ys[i] = 0
		}
	}
	idx := lttb(xs, ys, 600)
	if len(idx) != 600 || idx[0] != 0 || idx[len(idx)-1] != n-1 {
		t.Fatalf("%d indices, first %d last %d", len(idx), idx[0], idx[len(idx)-1])
	}
	zero := false
	for i, j := range idx {
		if i > 0 && j <= idx[i-1] {
			t.Fatalf("indices not increasing at %d", i)
		}
		if ys[j] == 0 {
			zero = true
		}
	}
	if !zero {
		t.Errorf("the stall was lost in downsampling")
	}
	if got := lttb(xs[:10], ys[:10], 600); len(got) != 10 {
		t.Errorf("short series: %d", len(got))
	}
}

func TestHTMLRendererAndArtifact(t *testing.T) {
	r, err := RendererFor("html")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r(&buf, diagnosis.Replay(synth(3, 120, nil))); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("IOLENS_ARTIFACTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "report.html"), buf.Bytes(), 0o644)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("<!DOCTYPE html>")) {
		t.Errorf("not an HTML page")
	}
}
