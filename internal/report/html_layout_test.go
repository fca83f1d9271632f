package report

import (
	"bytes"
	"github.com/iolens/iolens/internal/diagnosis"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"golang.org/x/net/html"
)

// diskResults is a small diagnosed run: a 1,100 IOPS and 125 MB/s cap
// (Azure P15's),
// an fsync test that fails etcd's limit, steady-state findings to fold,
// a warning, and what the plan could not establish.
func diskResults() []result.Result {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{"expect": "azure:P15", "expect_source": "cloud metadata (azure vm-1)"}
	mk := func(i int, name, rw string, bs int64, qd int, f ...result.Finding) result.Result {
		return result.Result{Schema: result.Schema, RunID: "run-1", Suite: "diagnose", Index: i, Repeat: 1, Status: "ok",
			Test:   result.TestSpec{Name: name, RW: rw, BlockSize: bs, IODepth: qd, NumJobs: 1, Direct: true},
			Target: result.Target{Kind: "dir", Path: "/mnt/data", Device: "nvme1n1", Labels: labels},
			Start:  start.Add(time.Duration(i) * time.Minute), Findings: f}
	}
	steady := func(code string) result.Finding {
		return result.Finding{Kind: result.KindSteady, Code: code, Severity: "info", Summary: "steady-state " + code}
	}
	rr := mk(1, "randread-4k-qd32", "randread", 4096, 32,
		result.Finding{Kind: result.KindLimit, Code: result.CodeIOPSCap, Dir: "read", Severity: "info", Summary: "a flat IOPS cap binds at 1,100 IOPS",
			Evidence: map[string]float64{"limit_iops": 1100}}, steady(result.CodeSteady))
	// Both rates held flat second to second, as a throttle paces them.
	flat := func(iops float64, bs int64) []result.FioSample {
		var out []result.FioSample
		for i := 1; i <= 10; i++ {
			v := iops * (1 + 1e-4*float64(i%2))
			out = append(out, result.FioSample{T: float64(i), ReadIOPS: v, ReadBWBytes: v * float64(bs)})
		}
		return out
	}
	rr.Read = &result.DirResult{IOPS: 1100, BWBytes: 1100 * 4096, RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: 29e6, P99Ns: 32e6}}
	rr.FioSeries = flat(1100, 4096)
	seq := mk(2, "read-1m-qd8", "read", 1<<20, 8,
		result.Finding{Kind: result.KindLimit, Code: result.CodeBandwidthCap, Dir: "read", Severity: "info", Summary: "a flat bandwidth cap binds at 125 MB/s",
			Evidence: map[string]float64{"limit_bw_bytes": 125e6}}, steady(result.CodeNotSteady),
		result.Finding{Kind: "writeback", Severity: "warn", Summary: "a 9 s writeback tail"})
	seq.Read = &result.DirResult{IOPS: 119.2, BWBytes: 125e6, RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: 67e6, P99Ns: 80e6}}
	seq.FioSeries = flat(119.2, 1<<20)
	sync := mk(3, "fdatasync-2300", "write", 2300, 1,
		result.Finding{Kind: result.KindEtcd, Code: result.CodeEtcdFail, Severity: "fail", Summary: "fdatasync p99 15 ms against the 10 ms limit: fail",
			Evidence: map[string]float64{"p99_ns": 15e6, "syncs": 2000}}, steady(result.CodeNotJudged))
	sync.Write = &result.DirResult{IOPS: 70, BWBytes: 70 * 2300, Lat: result.Latency{N: 2000, MeanNs: 1e6}}
	sync.Sync = &result.DirResult{IOPS: 70, Lat: result.Latency{N: 2000, MeanNs: 12e6, P99Ns: 15e6}}
	sync.Notes = []string{result.NoteNotEstablished + "the QD sweep: no time left in the budget"}
	return []result.Result{rr, seq, sync}
}

// textOf is the text of a node and its children.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

// elements lists the elements of a document in document order.
func elements(t *testing.T, page []byte) []*html.Node {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func within(n, anc *html.Node) bool {
	for ; n != nil; n = n.Parent {
		if n == anc {
			return true
		}
	}
	return false
}

func TestHTMLOpensWithVerdict(t *testing.T) {
	rs := diskResults()
	page := render(t, rs)
	els := elements(t, page)
	var verdict *html.Node
	for _, e := range els {
		if attr(e, "id") == "verdict" {
			verdict = e
			break
		}
		// Nothing but the header comes before the verdict: no table,
		// chart, figure or findings.
		switch e.Data {
		case "table", "svg", "figure", "canvas":
			t.Fatalf("a %s comes before the verdict", e.Data)
		}
		if id := attr(e, "id"); id == "findings" || id == "summary" || id == "series" {
			t.Fatalf("section %s comes before the verdict", id)
		}
	}
	if verdict == nil {
		t.Fatal(`no element id="verdict"`)
	}
	txt := textOf(verdict)
	d := diagnosis.Saved(rs)
	if len(d.Verdict) < 3 {
		t.Fatalf("verdict too short to test: %q", d.Verdict)
	}
	for _, l := range d.Verdict {
		if !strings.Contains(txt, l) {
			t.Errorf("verdict block lacks the model's line %q", l)
		}
	}
	for _, want := range []string{
		"the QD sweep: no time left in the budget",    // not established
		"azure:P15, from cloud metadata (azure vm-1)", // the expectation and its source
		"1,100", "IOPS cap", "125", "bandwidth cap", // the model
		"etcd FAIL",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("verdict block lacks %q:\n%s", want, txt)
		}
	}
	if len(d.CatalogMatch) == 0 || !strings.Contains(txt, d.CatalogMatch[0].Disk) {
		t.Errorf("verdict block lacks the catalog match %v", d.CatalogMatch)
	}
	// The fsync line fails, in the fail colour.
	found := false
	for _, e := range els {
		if within(e, verdict) && e.Data == "li" && strings.HasPrefix(textOf(e), "fsync:") {
			found = attr(e, "class") == "fail"
		}
	}
	if !found {
		t.Errorf("the failing fsync line is not marked fail")
	}
	// A page's own Unknown joins the verdict too.
	p := ResultsPage(diagnosis.Replay(rs))
	p.Unknown = []string{"the burst: the sustained write was cut short"}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("the burst: the sustained write was cut short")) {
		t.Errorf("page Unknown not shown")
	}
}

func TestHTMLFindingsWorstFirstFolded(t *testing.T) {
	page := render(t, diskResults())
	els := elements(t, page)
	var sev []string
	var steadyRows []string
	for _, e := range els {
		if e.Data == "li" && e.Parent != nil && attr(e.Parent, "class") == "findings" && strings.HasPrefix(attr(e, "class"), "sev-") {
			sev = append(sev, strings.TrimPrefix(attr(e, "class"), "sev-"))
			if strings.Contains(textOf(e), "steady") {
				steadyRows = append(steadyRows, textOf(e))
			}
		}
	}
	// fail (etcd), warn (writeback), then the infos: as the text report.
	var want []string
	rs := diskResults()
	d := diagnosis.Saved(rs) // the limits read off the model, as the page does
	for _, fl := range stories(rs, &d) {
		want = append(want, fl.Severity)
	}
	if strings.Join(sev, ",") != strings.Join(want, ",") || sev[0] != "fail" || sev[1] != "warn" {
		t.Errorf("severities %v, want %v", sev, want)
	}
	// Three steady-state findings fold into one line.
	if len(steadyRows) != 1 || !strings.Contains(steadyRows[0], "1 of 3 tests steady") || !strings.Contains(steadyRows[0], "never steady: read-1m-qd8") {
		t.Errorf("steady-state rows %q", steadyRows)
	}
}

// repeated is a test run twice whose IOPS vary by 116% (CV): the t
// interval of its mean reaches below zero.
func repeated() []result.Result {
	var rs []result.Result
	for i, v := range []float64{7667, 78589} {
		rs = append(rs, result.Result{Schema: result.Schema, RunID: "r", Suite: "s", Status: "ok", Repeat: i + 1, Index: 1,
			Test:   result.TestSpec{Name: "randread-4k", RW: "randread", BlockSize: 4096, IODepth: 32},
			Target: result.Target{Kind: "dir", Path: "/d"},
			Read: &result.DirResult{IOPS: v, BWBytes: v * 4096, Lat: result.Latency{N: 1000, MeanNs: 1e6, P99Ns: 2e6},
				Hist: result.HistogramOf(map[uint64]uint64{1003520: 990, 2023424: 10})}})
	}
	return rs
}

func TestIntervalsNeverNegative(t *testing.T) {
	// mean 43128, sd 50149 (CV 116.3%); t(0.975, 1) = 12.7062 gives
	// 43128 -/+ 450575: -407447..493703, which stops at zero.
	rs := repeated()
	for _, r := range []Renderer{Text, markdown, HTML} {
		var b bytes.Buffer
		if err := r(&b, diagnosis.Replay(rs)); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "0..493703 (too few runs)") || !strings.Contains(out, "116.3%") {
			t.Errorf("no truncated interval:\n%s", out)
		}
		if strings.Contains(out, "-407") {
			t.Errorf("a negative bound is printed")
		}
	}
}

func TestHTMLRepeatsAndErrorBars(t *testing.T) {
	// Two sets: the truncated one above, and one whose interval is
	// bounded (1000, 1010, 990: mean 1000, sd 10, t(0.975, 2) 4.3027:
	// 975.2..1024.8).
	tight := append(repeated(), repeated()[0])
	for i, v := range []float64{1000, 1010, 990} {
		r := *tight[i].Read
		r.IOPS, r.BWBytes = v, v*4096
		tight[i].Read, tight[i].Repeat, tight[i].RunID = &r, i+1, "t"
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, Page{Title: "x", Sets: []Set{{Name: "wide", Results: repeated()}, {Name: "tight", Results: tight}}}); err != nil {
		t.Fatal(err)
	}
	els := elements(t, buf.Bytes())
	var repeats *html.Node
	var errs []*html.Node
	for _, e := range els {
		if attr(e, "id") == "repeats" {
			repeats = e
		}
		if e.Data == "g" && strings.HasPrefix(attr(e, "class"), "err") {
			errs = append(errs, e)
		}
	}
	if repeats == nil {
		t.Fatal("no repeats table")
	}
	rt := textOf(repeats)
	for _, want := range []string{"0..493703 (too few runs)", "975..1025", "116.3%", "1.0%"} {
		if !strings.Contains(rt, want) {
			t.Errorf("repeats table lacks %q:\n%s", want, rt)
		}
	}
	// One whisker per set on the IOPS chart and one on the MB/s chart:
	// the truncated ones dashed, stopping at zero.
	if len(errs) != 4 {
		t.Fatalf("%d error bars, want 4", len(errs))
	}
	got := map[string]bool{}
	for _, e := range errs {
		got[attr(e, "class")+" "+attr(e, "data-lo")+".."+attr(e, "data-hi")] = true
	}
	// MB/s: 4.096 x the IOPS, from 975.2..1024.8 to 3.994..4.198.
	for _, want := range []string{"err short 0..493703", "err 975..1025", "err short 0..2022", "err 4.0..4.2"} {
		if !got[want] {
			t.Errorf("no error bar %q in %v", want, got)
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte("43128 (too few runs)</text>")) {
		t.Errorf("the truncated bar does not say so")
	}
}
