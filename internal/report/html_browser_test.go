package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The browser tests drive Debian's headless Chromium through chromedriver
// (WebDriver over HTTP), loading the page from a file:// URL.

type webDriver struct {
	t       *testing.T
	base    string
	session string
}

func (d *webDriver) call(method, path string, body any) map[string]any {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		d.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	if resp.StatusCode != 200 {
		d.t.Fatalf("webdriver %s %s: %d %v", method, path, resp.StatusCode, out["value"])
	}
	return out
}

func (d *webDriver) exec(script string) any {
	return d.call("POST", "/session/"+d.session+"/execute/sync", map[string]any{"script": script, "args": []any{}})["value"]
}

func startBrowser(t *testing.T) *webDriver {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	driver, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Skip("chromedriver is not installed: 'apt-get install chromium chromium-driver' to run the browser tests")
	}
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium is not installed: 'apt-get install chromium chromium-driver'")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := &webDriver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for i := 0; ; i++ {
		if resp, err := http.Get(d.base + "/status"); err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			t.Fatal("chromedriver did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	profile := t.TempDir()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": browser, "args": []string{"--headless=new", "--no-sandbox", "--disable-gpu",
			"--disable-dev-shm-usage", "--window-size=1200,2600", "--user-data-dir=" + profile, "--no-first-run"}},
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
	}}}
	out := d.call("POST", "/session", caps)
	d.session = out["value"].(map[string]any)["sessionId"].(string)
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", d.base+"/session/"+d.session, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return d
}

func (d *webDriver) open(path string) {
	d.call("POST", "/session/"+d.session+"/url", map[string]any{"url": "file://" + path})
}

// consoleErrors returns the browser log entries at SEVERE level.
func (d *webDriver) consoleErrors() []string {
	out := d.call("POST", "/session/"+d.session+"/se/log", map[string]any{"type": "browser"})
	var errs []string
	entries, _ := out["value"].([]any)
	for _, e := range entries {
		m := e.(map[string]any)
		if m["level"] == "SEVERE" {
			errs = append(errs, fmt.Sprint(m["message"]))
		}
	}
	return errs
}

func TestHTMLInBrowser(t *testing.T) {
	d := startBrowser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, render(t, synth(8, 900, map[string]string{"storage-class": "premium"})), 0o644); err != nil {
		t.Fatal(err)
	}
	d.open(page)

	if errs := d.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	// No request beyond the page itself (the CSP would also block any).
	if n := d.exec(`return performance.getEntriesByType("resource").length`); n.(float64) != 0 {
		t.Errorf("%v network requests", n)
	}
	// Every chart drew: canvases with non-blank pixels, SVG bars with rects.
	res := d.exec(`
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
	// 8 tests: 5 time-series charts each, 8 percentile charts, 1 QD chart;
	// 3 bar charts.
	if res["canvases"].(float64) != 8*5+8+1 || res["blank"].(float64) != 0 || res["svgs"].(float64) != 3 || res["emptySvg"].(float64) != 0 || res["emptyHosts"].(float64) != 0 {
		t.Errorf("charts not all drawn: %v", res)
	}
	shot := d.call("GET", "/session/"+d.session+"/screenshot", nil)["value"].(string)
	png, err := base64.StdEncoding.DecodeString(shot)
	if err != nil || len(png) < 10000 {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	art := t.ArtifactDir()
	if err := os.WriteFile(filepath.Join(art, "report.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(art, "report.html"), mustRead(t, page), 0o644)
	t.Logf("screenshot: %s", filepath.Join(art, "report.png"))
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHTMLHostileLabelsRunNoScript(t *testing.T) {
	d := startBrowser(t)
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
		Table: &Table{Title: evil[2], Header: evil, Rows: [][]string{evil}, Note: evil[4]}}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "hostile.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d.open(page)
	if v := d.exec(`return window.__pwned === undefined ? 0 : window.__pwned`); v.(float64) != 0 {
		t.Fatalf("a hostile label ran script %v", v)
	}
	if errs := d.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	// The strings are shown as text.
	txt := d.exec(`return document.body.innerText`).(string)
	if !strings.Contains(txt, "window.__pwned=4") || !strings.Contains(txt, "<img src=x") {
		t.Errorf("hostile strings not shown as text")
	}
	if title := d.exec(`return document.title`).(string); title != evil[1] {
		t.Errorf("title %q", title)
	}
}
