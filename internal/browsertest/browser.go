package browsertest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
)

// Driver is one browser session.
type Driver struct {
	t       testing.TB
	base    string
	session string
}

// Call sends one WebDriver command and returns its decoded answer.
func (d *Driver) Call(method, path string, body any) map[string]any {
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

// Exec runs script in the page (a function body: return a value).
func (d *Driver) Exec(script string) any {
	return d.Call("POST", "/session/"+d.session+"/execute/sync", map[string]any{"script": script, "args": []any{}})["value"]
}

// Start starts chromedriver and a headless Chromium session whose
// window is width x height CSS pixels; both stop when the test ends. It
// skips under -short and when either program is missing.
func Start(t testing.TB, width, height int) *Driver {
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
	realio.Cleanup(t, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := &Driver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port)}
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
	opts := map[string]any{"binary": browser, "args": []string{"--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-dev-shm-usage", fmt.Sprintf("--window-size=%d,%d", max(width, 500), height), "--user-data-dir=" + profile, "--no-first-run",
		"--force-device-scale-factor=1"}}
	if width < 500 {
		// Chromium's windows are at least 500 px wide: a phone's
		// viewport is emulated instead.
		opts["mobileEmulation"] = map[string]any{"deviceMetrics": map[string]any{"width": width, "height": height, "pixelRatio": 1}}
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": opts,
		"goog:loggingPrefs":  map[string]string{"browser": "ALL"},
	}}}
	out := d.Call("POST", "/session", caps)
	d.session = out["value"].(map[string]any)["sessionId"].(string)
	realio.Cleanup(t, func() {
		req, _ := http.NewRequest("DELETE", d.base+"/session/"+d.session, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return d
}

// Open loads a page from a file.
func (d *Driver) Open(path string) {
	d.Call("POST", "/session/"+d.session+"/url", map[string]any{"url": "file://" + path})
}

// ConsoleErrors returns the browser log entries at SEVERE level since
// the last call: uncaught exceptions among them.
func (d *Driver) ConsoleErrors() []string {
	out := d.Call("POST", "/session/"+d.session+"/se/log", map[string]any{"type": "browser"})
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

// Screenshot returns a PNG of the window.
func (d *Driver) Screenshot() []byte {
	shot := d.Call("GET", "/session/"+d.session+"/screenshot", nil)["value"].(string)
	png, err := base64.StdEncoding.DecodeString(shot)
	if err != nil {
		d.t.Fatalf("screenshot: %v", err)
	}
	return png
}

// Overflow is how many CSS pixels the page is wider than the window
// (0 when it fits), and the widest elements that stick out.
func (d *Driver) Overflow() (int, []string) {
	res := d.Exec(`
		var de = document.documentElement, w = de.clientWidth, out = [];
		document.querySelectorAll("body *").forEach(function (e) {
			var r = e.getBoundingClientRect();
			if (r.right > w + 0.5 && out.length < 5) out.push(e.tagName + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal === undefined ? "." + e.className : "") + " right=" + Math.round(r.right));
		});
		return {over: de.scrollWidth - w, els: out};
	`).(map[string]any)
	var els []string
	for _, e := range res["els"].([]any) {
		els = append(els, fmt.Sprint(e))
	}
	return int(res["over"].(float64)), els
}
