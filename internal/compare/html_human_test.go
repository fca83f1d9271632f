package compare_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/browsertest"
	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// realRun reads a real diagnose run kept with the report's tests.
func realRun(t *testing.T, name string) []result.Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := report.ReadResults(bytes.NewReader(b), name)
	if err != nil {
		t.Fatal(err)
	}
	analysis.Annotate(rs)
	return rs
}

// Two real diagnose runs (an emulated P15, and a P30 with 2 ms of
// latency) compared as a human reads them, at 390 and 1280 px: named by
// what they measured, their verdicts side by side where there is room
// (one above the other on a phone), the worst finding of either first,
// nothing wider than the window. Screenshots are kept as artifacts.
func TestComparePageForAHuman(t *testing.T) {
	a, b := realRun(t, "diagnose-emulated-p15.ndjson.gz"), realRun(t, "diagnose-emulated-p30-latency.ndjson.gz")
	ops := []compare.Operand{{Name: a[0].RunID, Label: compare.RunLabel(a), Results: a}, {Name: b[0].RunID, Label: compare.RunLabel(b), Results: b}}
	c := compareTold(ops)
	// Issue 39.2: diagnose varies its runtimes by design: no warning that
	// the runs were not alike for that; and one run a side judges p99
	// from each run's histogram.
	for _, m := range c.Mismatches {
		if m.Param == "runtime" {
			t.Errorf("warned of diagnose's own runtimes: %s", m)
		}
	}
	judged, rows := 0, 0
	for _, r := range c.Rows {
		if x := r.Cells[1]; x != nil && r.Cells[0] != nil && !x.NoPercentiles && r.Dir != "sync" {
			rows++
			if x.P99Test != nil && x.P99Test.Enough && x.P99Test.Basis == "histograms" {
				judged++
			}
		}
	}
	if rows == 0 || judged < rows*3/4 {
		t.Errorf("p99 judged from histograms in %d of %d comparable rows", judged, rows)
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, report.ComparePage(ops, c)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "p=") && !strings.Contains(buf.String(), `title="p=`) {
		t.Errorf("a p-value is printed in a cell, not in its title")
	}
	path := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, win := range []struct {
		name string
		w, h int
	}{{"390", 390, 844}, {"1280", 1280, 800}} {
		t.Run(win.name, func(t *testing.T) {
			d := browsertest.Start(t, win.w, win.h)
			d.Open(path)
			if errs := d.ConsoleErrors(); len(errs) > 0 {
				t.Errorf("console errors: %v", errs)
			}
			if over, els := d.Overflow(); over > 0 {
				t.Errorf("the page is %d px wider than the window: %v", over, els)
			}
			res := d.Exec(`
				var v = document.querySelectorAll("#verdict .verdict"), out = {n: v.length};
				if (v.length === 2) { out.dy = v[1].getBoundingClientRect().top - v[0].getBoundingClientRect().top; }
				out.h3 = Array.prototype.map.call(document.querySelectorAll("#verdict h3"), function (e) { return e.innerText; });
				var f = document.querySelector("#findings li");
				out.first = f ? f.className + " " + f.innerText : "";
				return out;
			`).(map[string]any)
			lay := d.Exec(`
				var out = {height: document.documentElement.scrollHeight, scrolls: [], broken: []};
				document.querySelectorAll(".scroll").forEach(function (e) {
					if (e.scrollWidth > e.clientWidth + 1) out.scrolls.push((e.parentNode.id || "?") + " " + e.scrollWidth + ">" + e.clientWidth);
				});
				document.querySelectorAll("#compare td.group, #compare td.repeat").forEach(function (td) {
					if (getComputedStyle(td).visibility === "hidden" || !td.firstChild) return;
					var text = td.firstChild, s = text.textContent, re = /[^ ·]+/g, m;
					while ((m = re.exec(s)) !== null) {
						var r = document.createRange();
						r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
						var tops = {};
						Array.prototype.forEach.call(r.getClientRects(), function (q) { tops[Math.round(q.top)] = 1; });
						if (Object.keys(tops).length > 1 && out.broken.length < 5) out.broken.push(m[0]);
					}
				});
				return out;
			`).(map[string]any)
			t.Logf("%s px: the page is %v px tall", win.name, lay["height"])
			t.Logf("sections: %v", d.Exec(`var o={}; document.querySelectorAll("main > *").forEach(function(e){ o[e.id||e.tagName] = Math.round(e.getBoundingClientRect().height); }); return o;`))
			d.Exec(`document.getElementById("compare").scrollIntoView(); return 0`)
			_ = os.WriteFile(filepath.Join(t.ArtifactDir(), "compare-table-"+win.name+".png"), d.Screenshot(), 0o644)
			d.Exec(`window.scrollTo(0, 0); return 0`)
			if sc := lay["scrolls"].([]any); len(sc) > 0 && win.w < 600 {
				t.Errorf("tables scroll sideways at %d px: %v", win.w, sc)
			}
			if br := lay["broken"].([]any); len(br) > 0 {
				t.Errorf("test names broken inside a word at %d px: %v", win.w, br)
			}
			if res["n"].(float64) != 2 {
				t.Fatalf("%v verdicts", res["n"])
			}
			sideBySide := res["dy"].(float64) == 0
			if sideBySide != (win.w >= 1280) {
				t.Errorf("verdicts side by side: %v at %d px", sideBySide, win.w)
			}
			h3 := res["h3"].([]any)
			if !strings.Contains(h3[0].(string), "A: diagnose of emulated w26p15") || !strings.Contains(h3[1].(string), "B: diagnose of emulated w26p30") {
				t.Errorf("verdicts named %v", h3)
			}
			if first := res["first"].(string); !strings.HasPrefix(first, "sev-fail") || !strings.Contains(first, "(B:") {
				t.Errorf("the first finding is not B's failing etcd: %q", first)
			}
			_ = os.WriteFile(filepath.Join(t.ArtifactDir(), "compare-first-screen-"+win.name+".png"), d.Screenshot(), 0o644)
		})
	}
}
