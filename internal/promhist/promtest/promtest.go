package promtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
)

// The Debian packages' binaries.
const (
	PrometheusBinary   = "prometheus"
	NodeExporterBinary = "prometheus-node-exporter"
)

// Unavailable says why the real components cannot run here, or "".
func Unavailable() string {
	for _, b := range []struct{ bin, pkg string }{{PrometheusBinary, "prometheus"}, {NodeExporterBinary, "prometheus-node-exporter"}} {
		if _, err := exec.LookPath(b.bin); err != nil {
			return fmt.Sprintf("%s is not installed: 'apt-get install %s' (make deps) to run this test", b.bin, b.pkg)
		}
	}
	return ""
}

// FreeAddr is a free loopback address.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proc is a started process, stopped when the test ends.
type proc struct {
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		l.b.Reset()
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

func start(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	p := &proc{log: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	realio.Cleanup(t, func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s log (last 4 KiB):\n%s", name, p.log.tail(4096))
		}
	})
	return p
}

// stop sends SIGTERM, then SIGKILL after 10 s, and waits.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitHTTP waits until url answers 200 (with client), or fails the test.
func waitHTTP(t testing.TB, p *proc, client *http.Client, url, what string) {
	t.Helper()
	if err := readyHTTP(p, client, url); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, p.log.tail(4096))
	}
}

// readyHTTP waits until url answers 200, and says why not.
func readyHTTP(p *proc, client *http.Client, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready at %s after 30 s: %v", url, err)
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited at start")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// NodeExporter is a running node exporter.
type NodeExporter struct {
	Addr string
}

// StartNodeExporter runs the node exporter on a loopback port with the
// collectors iolens reads only, and the disk statistics of the devices
// matching deviceRE only; extra flags (another collector) follow them.
func StartNodeExporter(t testing.TB, deviceRE string, extra ...string) *NodeExporter {
	t.Helper()
	if why := Unavailable(); why != "" {
		t.Skip(why)
	}
	args := []string{"--collector.disable-defaults", "--collector.diskstats", "--collector.diskstats.device-include=" + deviceRE,
		"--collector.cpu", "--collector.meminfo", "--collector.pressure", "--collector.uname"}
	args = append(args, extra...)
	// Version 1.5 counts its default device-exclude as given and refuses
	// it beside device-include unless it is cleared; later versions may
	// refuse the cleared one instead.
	var err error
	for _, clear := range [][]string{{"--collector.diskstats.device-exclude="}, nil} {
		addr := FreeAddr(t)
		p := start(t, NodeExporterBinary, append(append([]string{"--web.listen-address=" + addr}, clear...), args...)...)
		if err = readyHTTP(p, http.DefaultClient, "http://"+addr+"/metrics"); err == nil {
			return &NodeExporter{Addr: addr}
		}
		p.stop()
		err = fmt.Errorf("%v\n%s", err, p.log.tail(2048))
	}
	t.Fatalf("node exporter: %v", err)
	return nil
}

// Options say how to run Prometheus.
type Options struct {
	// Targets are node exporter addresses, scraped every second as job
	// "node".
	Targets []string
	// DataDir is the TSDB directory (default: in t.TempDir()); a test
	// that backfills blocks gives its own.
	DataDir string
	// MaxSamples is --query.max-samples (0: Prometheus's default).
	MaxSamples int
	// WebConfig is the content of --web.config.file (TLS, basic auth).
	WebConfig string
	// Retention is --storage.tsdb.retention.time (default 15d).
	Retention string
	// TLS is the client configuration to reach it when WebConfig serves
	// TLS.
	TLS *tls.Config
	// Header is added to the readiness check (basic auth).
	Header http.Header
	// Scrape are more targets, each group with its job and the labels
	// its series get (the job's name may repeat: one job, several
	// groups).
	Scrape []Targets
	// RuleFiles are rule files (globs) to evaluate every second; one
	// that does not exist yet is read at Reload.
	RuleFiles []string
	// ScrapeInterval is every target's (default 1 s).
	ScrapeInterval time.Duration
}

// Targets are a group of scrape targets.
type Targets struct {
	Job    string
	Addrs  []string
	Labels map[string]string
}

// Prometheus is a running server.
type Prometheus struct {
	URL string
	p   *proc
}

// StartPrometheus runs Prometheus on a loopback port and waits until it
// is ready.
func StartPrometheus(t testing.TB, o Options) *Prometheus {
	t.Helper()
	if why := Unavailable(); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	if o.DataDir == "" {
		o.DataDir = filepath.Join(dir, "data")
	}
	var cfg strings.Builder
	iv := o.ScrapeInterval
	if iv <= 0 {
		iv = time.Second
	}
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: %dms\n  scrape_timeout: %dms\n  evaluation_interval: 1s\n", iv.Milliseconds(), (iv * 9 / 10).Milliseconds())
	if len(o.RuleFiles) > 0 {
		cfg.WriteString("rule_files:\n")
		for _, f := range o.RuleFiles {
			fmt.Fprintf(&cfg, "  - %q\n", f)
		}
	}
	groups := append([]Targets{{Job: "node", Addrs: o.Targets}}, o.Scrape...)
	var jobs []string
	byJob := map[string][]Targets{}
	for _, g := range groups {
		if _, ok := byJob[g.Job]; !ok {
			jobs = append(jobs, g.Job)
		}
		byJob[g.Job] = append(byJob[g.Job], g)
	}
	cfg.WriteString("scrape_configs:\n")
	for _, j := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %q\n    static_configs:\n", j)
		for _, g := range byJob[j] {
			cfg.WriteString("      - targets: [")
			for i, tg := range g.Addrs {
				if i > 0 {
					cfg.WriteString(", ")
				}
				fmt.Fprintf(&cfg, "%q", tg)
			}
			cfg.WriteString("]\n")
			if len(g.Labels) > 0 {
				keys := make([]string, 0, len(g.Labels))
				for k := range g.Labels {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				cfg.WriteString("        labels:\n")
				for _, k := range keys {
					fmt.Fprintf(&cfg, "          %s: %q\n", k, g.Labels[k])
				}
			}
		}
	}
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	ret := o.Retention
	if ret == "" {
		ret = "15d"
	}
	args := []string{"--config.file=" + cfgFile, "--storage.tsdb.path=" + o.DataDir, "--web.listen-address=" + addr,
		"--storage.tsdb.retention.time=" + ret}
	if o.MaxSamples > 0 {
		args = append(args, fmt.Sprintf("--query.max-samples=%d", o.MaxSamples))
	}
	scheme := "http"
	client := &http.Client{Timeout: 5 * time.Second}
	if o.WebConfig != "" {
		wc := filepath.Join(dir, "web.yml")
		if err := os.WriteFile(wc, []byte(o.WebConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--web.config.file="+wc)
		if o.TLS != nil {
			scheme = "https"
			client.Transport = &http.Transport{TLSClientConfig: o.TLS}
		}
	}
	p := start(t, PrometheusBinary, args...)
	url := scheme + "://" + addr
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	client.Transport = headerRT{rt, o.Header}
	waitHTTP(t, p, client, url+"/-/ready", "Prometheus")
	return &Prometheus{URL: url, p: p}
}

// Reload makes Prometheus read its configuration and rule files again
// (SIGHUP), as after a rule file is written.
func (p *Prometheus) Reload() error {
	return p.p.cmd.Process.Signal(syscall.SIGHUP)
}

type headerRT struct {
	next http.RoundTripper
	h    http.Header
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header[k] = v
		}
	}
	return h.next.RoundTrip(r)
}

// Backfill writes OpenMetrics text into TSDB blocks under dataDir with
// promtool, as Prometheus's own backfilling does.
func Backfill(t testing.TB, openMetrics, dataDir string) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("promtool is not installed: 'apt-get install prometheus' (make deps) to run this test")
	}
	in := filepath.Join(t.TempDir(), "data.om")
	if err := os.WriteFile(in, []byte(openMetrics), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "promtool", "tsdb", "create-blocks-from", "openmetrics", in, dataDir).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
}
