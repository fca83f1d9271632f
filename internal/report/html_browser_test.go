package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/browsertest"
	"github.com/iolens/iolens/internal/result"
)

// The browser tests load each page in headless Chromium from a file://
// URL and fail on any console error.

func openPage(t *testing.T, d *browsertest.Driver, page []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	d.Open(path)
	if errs := d.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	return path
}

func TestHTMLInBrowser(t *testing.T) {
	d := browsertest.Start(t, 1200, 2600)
	path := openPage(t, d, render(t, synth(8, 900, map[string]string{"storage-class": "premium"})))

	// No request beyond the page itself (the CSP would also block any).
	if n := d.Exec(`return performance.getEntriesByType("resource").length`); n.(float64) != 0 {
		t.Errorf("%v network requests", n)
	}
	// Every chart drew once its test is opened: canvases with non-blank
	// pixels, SVG bars with rects.
	d.Exec(`document.querySelectorAll("details").forEach(function (e) { e.open = true; }); return 0`)
	d.Exec(`return 0`) // the toggle events run before the next script
	res := d.Exec(`
		var cs = document.querySelectorAll("canvas"), blank = 0;
		cs.forEach(function (c) {
			var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, ink = false;
			for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) { ink = true; break; }
			if (!ink) blank++;
		});
		var svgs = document.querySelectorAll("svg.bars"), emptySvg = 0;
		svgs.forEach(function (s) { if (s.querySelectorAll("rect").length === 0) emptySvg++; });
		var hosts = document.querySelectorAll(".ts, .plot"), emptyHosts = 0;
		hosts.forEach(function (h) { if (!h.querySelector("canvas")) emptyHosts++; });
		return {canvases: cs.length, blank: blank, svgs: svgs.length, emptySvg: emptySvg, hosts: hosts.length, emptyHosts: emptyHosts,
			charts: document.body.getAttribute("data-charts")};
	`).(map[string]any)
	// 8 tests: 5 time-series charts each, 8 percentile charts, 1 chart
	// of the disk model; 3 bar charts.
	if res["canvases"].(float64) != 8*5+8+1 || res["blank"].(float64) != 0 || res["svgs"].(float64) != 3 || res["emptySvg"].(float64) != 0 || res["emptyHosts"].(float64) != 0 {
		t.Errorf("charts not all drawn: %v", res)
	}
	png := d.Screenshot()
	if len(png) < 10000 {
		t.Fatalf("screenshot: %d bytes", len(png))
	}
	art := t.ArtifactDir()
	if err := os.WriteFile(filepath.Join(art, "report.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(art, "report.html"), mustRead(t, path), 0o644)
	t.Logf("screenshot: %s", filepath.Join(art, "report.png"))
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A report without a QD sweep (data.qd empty), without series, without
// histograms: the script must not throw.
func TestHTMLWithoutSweepOrSeries(t *testing.T) {
	d := browsertest.Start(t, 1000, 900)
	noSweep := synth(3, 60, nil)
	for i := range noSweep {
		noSweep[i].Test.Group = ""
	}
	bare := diskResults() // no series, no histograms
	for _, tc := range []struct {
		name string
		rs   []result.Result
	}{{"no sweep", noSweep}, {"no series", bare}, {"nothing", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			page := render(t, tc.rs)
			openPage(t, d, page)
			if n := d.Exec(`return document.body.getAttribute("data-charts")`); n == nil {
				t.Errorf("the script did not finish")
			}
		})
	}
	// An old page's data, with null lists, must not throw either.
	page := bytes.Replace(render(t, bare), []byte(`"pct":[]`), []byte(`"pct":null`), 1)
	if !bytes.Contains(page, []byte(`"pct":null`)) {
		t.Fatal("no pct list to null")
	}
	openPage(t, d, page)
}

// Time series are readable: at least 160 px of plot, y from zero, a unit
// on every y axis, and legends that show a value without hovering.
func TestHTMLTimeSeriesReadable(t *testing.T) {
	d := browsertest.Start(t, 1000, 900)
	openPage(t, d, render(t, synth(2, 120, nil)))
	d.Exec(`document.querySelectorAll("details.test").forEach(function (e) { e.open = true; }); return 0`)
	d.Exec(`return 0`)
	res := d.Exec(`
		var out = {n: 0, short: [], notZero: [], noUnit: [], dashes: []};
		(window.iolensCharts || []).forEach(function (u, i) {
			var h = u.bbox.height / devicePixelRatio;
			if (u.iolensKind !== "pct" && h < 160) out.short.push(i + ": " + Math.round(h) + " px");
			if (u.iolensKind !== "series") return;
			out.n++;
			Object.keys(u.scales).forEach(function (k) {
				if (k !== "x" && u.scales[k].min != null && u.scales[k].min !== 0) out.notZero.push(i + " " + k + ": " + u.scales[k].min);
			});
			u.axes.forEach(function (a, j) { if (j > 0 && !a.label) out.noUnit.push(i + " axis " + j); });
		});
		document.querySelectorAll(".u-legend .u-value").forEach(function (v) {
			var s = v.textContent.trim();
			if (s === "--" || s === "") out.dashes.push(s);
		});
		return out;
	`).(map[string]any)
	// 2 tests x 5 charts.
	if res["n"].(float64) != 10 {
		t.Fatalf("%v time-series charts, want 10", res["n"])
	}
	for _, k := range []string{"short", "notZero", "noUnit", "dashes"} {
		if l := res[k].([]any); len(l) > 0 {
			t.Errorf("%s: %v", k, l)
		}
	}
	// The legend shows the mean: the app write IOPS of test 0 are
	// 1000 x (1 + 0.05 sin t) over 120 s, less a 20 s stall at zero.
	txt := d.Exec(`return document.querySelector("#ts-0-0").innerText`).(string)
	if !strings.Contains(txt, "mean") {
		t.Errorf("no mean in the legend:\n%s", txt)
	}
	// Hovering still shows the value under the cursor.
	v := d.Exec(`
		var u = window.iolensCharts.filter(function (c) { return c.iolensKind === "series"; })[1];
		u.setCursor({left: u.bbox.width / devicePixelRatio / 2, top: 10});
		return u.root.querySelector(".u-legend .u-series:nth-child(2) .u-value").textContent;
	`).(string)
	if strings.HasPrefix(v, "mean") || v == "--" {
		t.Errorf("hover value %q", v)
	}
}

// The report fits a 1000 px window.
func TestHTMLFits1000px(t *testing.T) {
	d := browsertest.Start(t, 1000, 900)
	rs := append(synth(2, 60, map[string]string{"a-rather-long-label-name": strings.Repeat("long-value-", 12)}), diskResults()...)
	rs[0].Notes = []string{strings.Repeat("a note without spaces ", 3) + strings.Repeat("x", 200)}
	openPage(t, d, render(t, rs))
	if over, els := d.Overflow(); over > 0 {
		t.Errorf("the page is %d px wider than the window: %v", over, els)
	}
}

func TestHTMLHostileLabelsRunNoScript(t *testing.T) {
	d := browsertest.Start(t, 1200, 2600)
	evil := []string{
		`<script>window.__pwned=1</script>`,
		`</script><script>window.__pwned=2</script>`,
		`<img src=x onerror="window.__pwned=3">`,
		`"><svg onload="window.__pwned=4">`,
		`\u003c/script\u003e<script>window.__pwned=5</script>`,
	}
	rs := synth(3, 60, map[string]string{"team": evil[0], evil[1]: "x"})
	rs[0].Test.Name = evil[2]
	rs[1].Target.Path = evil[3]
	rs[2].Findings[0].Summary = evil[4]
	rs[2].Notes = evil
	var buf bytes.Buffer
	if err := WriteHTML(&buf, Page{Title: evil[1], Sets: []Set{{Name: evil[0], Results: rs[:2]}, {Name: evil[3], Results: rs[2:]}},
		Tables: []*Table{{Title: evil[2], Header: evil, Rows: [][]string{evil}, Class: [][]string{evil}, Note: evil[4]}}, Warnings: evil}); err != nil {
		t.Fatal(err)
	}
	openPage(t, d, buf.Bytes())
	if v := d.Exec(`return window.__pwned === undefined ? 0 : window.__pwned`); v.(float64) != 0 {
		t.Fatalf("a hostile label ran script %v", v)
	}
	// The strings are shown as text.
	txt := d.Exec(`return document.body.innerText`).(string)
	if !strings.Contains(txt, "window.__pwned=4") || !strings.Contains(txt, "<img src=x") {
		t.Errorf("hostile strings not shown as text")
	}
	if title := d.Exec(`return document.title`).(string); title != evil[1] {
		t.Errorf("title %q", title)
	}
}
