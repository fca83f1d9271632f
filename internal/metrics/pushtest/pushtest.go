// Package pushtest starts a real Prometheus Pushgateway for tests.
package pushtest

import (
	"bytes"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// Start runs the Debian package's Pushgateway (prometheus-pushgateway) on
// a free loopback port, stopped when the test ends, and returns its URL;
// it skips the test without one.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus-pushgateway")
	if err != nil {
		if bin, err = exec.LookPath("pushgateway"); err != nil {
			t.Skip("no Pushgateway: install the Debian package prometheus-pushgateway ('make deps' does)")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--web.listen-address="+addr)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := "http://" + addr
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Pushgateway on %s not ready: %v\n%s", addr, err, logs.String())
		}
	}
}
