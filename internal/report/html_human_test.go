package report

import (
	"bytes"
	"github.com/iolens/iolens/internal/diagnosis"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/browsertest"
)

// The page of a real diagnose run (an emulated P15) as a human meets
// it, in a phone's window (390 px) and a laptop's (1280 px): the first
// screen holds the verdict, what to change and the disk model; nothing
// is wider than the window; the model table reflows; charts fit their
// container with readable labels; one colour per metric; stalls shaded
// in a colour of their own; 250 ms series smoothed, and raw at a click;
// under 10 screens until the reader opens something. Screenshots of the
// first screen are kept as artifacts (go test -artifacts).
func TestHTMLForAHuman(t *testing.T) {
	rs := p15Run(t)
	var buf bytes.Buffer
	p := ResultsPage(diagnosis.Replay(rs))
	p.Generated = time.Date(2026, 11, 26, 18, 0, 0, 0, time.UTC)
	if err := WriteHTML(&buf, p); err != nil {
		t.Fatal(err)
	}
	for _, win := range []struct {
		name string
		w, h int
	}{{"390", 390, 844}, {"1280", 1280, 800}} {
		t.Run(win.name, func(t *testing.T) {
			d := browsertest.Start(t, win.w, win.h)
			openPage(t, d, buf.Bytes())
			if over, els := d.Overflow(); over > 0 {
				t.Errorf("the page is %d px wider than the window: %v", over, els)
			}
			// The first screen: the verdict, what to change, and the
			// disk model (its table and a chart, begun within the
			// window on a laptop).
			first := d.Exec(`
				var vh = window.innerHeight, out = {};
				function top(sel) { var e = document.querySelector(sel); return e ? e.getBoundingClientRect().top : -1; }
				function bottom(sel) { var e = document.querySelector(sel); return e ? e.getBoundingClientRect().bottom : -1; }
				out.vh = vh;
				out.lines = bottom("#verdict ul.lines");
				out.change = bottom("#verdict ul.change");
				out.table = top("#verdict table.model");
				out.chart = top("#verdict .model-chart canvas");
				out.findings = top("#findings");
				return out;
			`).(map[string]any)
			vh := first["vh"].(float64)
			for _, k := range []string{"lines", "change"} {
				if v := first[k].(float64); v < 0 || v > vh {
					t.Errorf("%s ends at %v px, below the first screen (%v px)", k, v, vh)
				}
			}
			if win.w >= 1280 {
				for _, k := range []string{"table", "chart"} {
					if v := first[k].(float64); v < 0 || v > vh {
						t.Errorf("the disk model's %s starts at %v px, below the first screen (%v px)", k, v, vh)
					}
				}
			}
			if first["findings"].(float64) < first["chart"].(float64) {
				t.Errorf("the findings come before the disk model: %v", first)
			}
			// The model table reflows on a phone: no cell narrower
			// than a word.
			narrow := d.Exec(`
				var n = [];
				document.querySelectorAll("#verdict table.model td").forEach(function (td) {
					if (td.textContent.trim() && td.getBoundingClientRect().width < 40) n.push(td.textContent);
				});
				return n;
			`).([]any)
			if len(narrow) > 0 {
				t.Errorf("model table cells squeezed: %v", narrow)
			}
			// Under 10 screens until the reader opens something.
			if h := d.Exec(`return document.documentElement.scrollHeight`).(float64); h > 10*vh {
				t.Errorf("the page is %.0f px tall: %.1f screens", h, h/vh)
			}
			png := d.Screenshot()
			if len(png) < 10000 {
				t.Fatalf("screenshot: %d bytes", len(png))
			}
			_ = os.WriteFile(filepath.Join(t.ArtifactDir(), "report-first-screen-"+win.name+".png"), png, 0o644)

			// Open every test: charts fit their container, labels are
			// readable, each metric keeps its colour, no metric takes
			// the stall shading's.
			d.Exec(`document.querySelectorAll("details").forEach(function (e) { e.open = true; }); return 0`)
			d.Exec(`return 0`)
			if over, els := d.Overflow(); over > 0 {
				t.Errorf("opened, the page is %d px wider than the window: %v", over, els)
			}
			res := d.Exec(`
				var out = {wide: [], colors: {}, clash: [], small: [], n: 0, fast: 0};
				(window.iolensCharts || []).forEach(function (u, i) {
					out.n++;
					var box = u.root.parentNode.getBoundingClientRect(), me = u.root.getBoundingClientRect();
					if (me.width > box.width + 1) out.wide.push(i + ": " + Math.round(me.width) + " in " + Math.round(box.width));
					if (u.iolensKind !== "series") return;
					if (u.iolensFast) out.fast++;
					u.series.forEach(function (s, j) {
						if (j === 0) return;
						var c = typeof s.stroke === "function" ? s.stroke(u, j) : s.stroke;
						var key = s.label.replace(/^(app|dev) /, "");
						(out.colors[key] = out.colors[key] || {})[c] = true;
						if (c === "#d62728") out.clash.push(s.label);
					});
				});
				document.querySelectorAll("svg.bars text").forEach(function (e) {
					var h = e.getBoundingClientRect().height;
					if (h > 0 && h < 9) out.small.push(e.textContent + " " + h.toFixed(1));
				});
				document.querySelectorAll(".u-legend, .u-axis").forEach(function (e) {
					var f = parseFloat(getComputedStyle(e).fontSize);
					if (f < 10) out.small.push("uplot " + f);
				});
				return out;
			`).(map[string]any)
			if l := res["wide"].([]any); len(l) > 0 {
				t.Errorf("charts wider than their container: %v", l)
			}
			for metric, cs := range res["colors"].(map[string]any) {
				if len(cs.(map[string]any)) != 1 {
					t.Errorf("%s is drawn in %d colours: %v", metric, len(cs.(map[string]any)), cs)
				}
			}
			if l := res["clash"].([]any); len(l) > 0 {
				t.Errorf("metrics in the stall shading's red: %v", l)
			}
			if l := res["small"].([]any); len(l) > 0 {
				t.Errorf("labels under 9 px: %v", l[:min(5, len(l))])
			}
			if res["fast"].(float64) == 0 {
				t.Fatal("no 250 ms series on the page")
			}
			d.Exec(`document.querySelector("details.test .ts").scrollIntoView(); return 0`)
			_ = os.WriteFile(filepath.Join(t.ArtifactDir(), "report-test-opened-"+win.name+".png"), d.Screenshot(), 0o644)
		})
	}
}

// The smoothing toggle: a capped test's 250 ms samples zig-zag; smoothed
// over a second they hold the cap; the box brings the raw samples back.
func TestHTMLSmoothingToggle(t *testing.T) {
	rs := p15Run(t)
	var buf bytes.Buffer
	if err := HTML(&buf, diagnosis.Replay(rs)); err != nil {
		t.Fatal(err)
	}
	d := browsertest.Start(t, 1280, 800)
	openPage(t, d, buf.Bytes())
	d.Exec(`document.querySelectorAll("details.test").forEach(function (e) { e.open = true; }); return 0`)
	d.Exec(`return 0`)
	wiggle := `
		var u = window.iolensCharts.filter(function (c) { return c.iolensFast; })[0];
		var y = u.data[1], s = 0, n = 0, prev = null;
		for (var i = 0; i < y.length; i++) {
			if (y[i] == null) continue;
			if (prev != null) { s += Math.abs(y[i] - prev); n++; }
			prev = y[i];
		}
		return n ? s / n : -1;`
	smooth := d.Exec(wiggle).(float64)
	if on := d.Exec(`return document.getElementById("smooth").checked`).(bool); !on {
		t.Fatal("smoothing is off by default")
	}
	d.Exec(`var b = document.getElementById("smooth"); b.click(); return 0`)
	raw := d.Exec(wiggle).(float64)
	if !(raw > 1.5*smooth) {
		t.Errorf("mean step between samples: %.3g raw, %.3g smoothed; want the raw series to zig-zag more", raw, smooth)
	}
	if errs := d.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	t.Logf("mean step between samples: raw %.3g, smoothed %.3g", raw, smooth)
}
