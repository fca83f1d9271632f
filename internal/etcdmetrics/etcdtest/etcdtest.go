package etcdtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
)

// Binary is the etcd server Debian's etcd-server package installs.
const Binary = "etcd"

// Unavailable says why a real etcd cannot be started here, or "".
func Unavailable() string {
	if _, err := exec.LookPath(Binary); err != nil {
		return "etcd is not installed: 'apt-get install etcd-server' (make deps) to run this test"
	}
	return ""
}

// Options say how to start etcd.
type Options struct {
	// DataDir is where etcd keeps its WAL and database; it must not exist
	// yet (etcd creates it with the permissions it wants). Default: in
	// t.TempDir().
	DataDir string
	// TLS, when set, serves the client URL over TLS and requires client
	// certificates signed by TLS.CA.
	TLS *Certs
	// Command builds the process, e.g. an emulated disk's Command, which
	// runs it inside the disk's throttled cgroup. Default
	// exec.CommandContext.
	Command func(ctx context.Context, name string, args ...string) *exec.Cmd
}

// Etcd is a running member.
type Etcd struct {
	// ClientURL is where clients and /metrics are served.
	ClientURL string
	opts      Options
	args      []string
	cmd       *exec.Cmd
	log       *lockedBuffer
	client    *http.Client
	done      chan struct{}
}

// Start runs etcd and waits until it serves. It stops it (SIGTERM, then
// SIGKILL) when t ends.
func Start(t testing.TB, o Options) *Etcd {
	t.Helper()
	if why := Unavailable(); why != "" {
		t.Skip(why)
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(t.TempDir(), "etcd")
	}
	if o.Command == nil {
		o.Command = exec.CommandContext
	}
	cport, pport := freePort(t), freePort(t)
	scheme := "http"
	if o.TLS != nil {
		scheme = "https"
	}
	e := &Etcd{ClientURL: fmt.Sprintf("%s://127.0.0.1:%d", scheme, cport), log: &lockedBuffer{}, opts: o}
	peer := fmt.Sprintf("http://127.0.0.1:%d", pport)
	e.args = []string{"--name", "t", "--data-dir", o.DataDir,
		"--listen-client-urls", e.ClientURL, "--advertise-client-urls", e.ClientURL,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "t=" + peer, "--initial-cluster-state", "new",
		// The test's writes are what it measures: no snapshots in
		// between.
		"--snapshot-count", "1000000"}
	tc := &tls.Config{}
	if o.TLS != nil {
		e.args = append(e.args, "--cert-file", o.TLS.ServerCert, "--key-file", o.TLS.ServerKey,
			"--client-cert-auth", "--trusted-ca-file", o.TLS.CA)
		var err error
		if tc, err = o.TLS.ClientTLS(); err != nil {
			t.Fatal(err)
		}
	}
	e.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, MaxIdleConnsPerHost: 64}}
	realio.Cleanup(t, func() {
		e.Stop()
		if t.Failed() {
			t.Logf("etcd log (last 4 KiB):\n%s", e.log.tail(4096))
		}
	})
	e.launch(t)
	return e
}

// launch starts the process and waits until it is healthy.
func (e *Etcd) launch(t testing.TB) {
	t.Helper()
	// Its own process group, so that a shell in front of it (an emulated
	// disk's cgroup prefix) goes with it.
	cmd := e.opts.Command(context.Background(), Binary, e.args...)
	cmd.Stdout, cmd.Stderr = e.log, e.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	done := make(chan struct{})
	e.cmd, e.done = cmd, done
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := e.health()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not become healthy within 30 s: %v\n%s", err, e.log.tail(4096))
		}
		select {
		case <-done:
			t.Fatalf("etcd exited at start:\n%s", e.log.tail(4096))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Restart stops etcd and starts it again on the same ports and data.
func (e *Etcd) Restart(t testing.TB) {
	t.Helper()
	e.Stop()
	e.launch(t)
}

// Stop ends etcd: SIGTERM, then SIGKILL after 10 s. It returns once the
// process is gone.
func (e *Etcd) Stop() {
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	select {
	case <-e.done:
		return
	default:
	}
	syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.done
	}
}

// Kill stops etcd at once (SIGKILL), as a crash would.
func (e *Etcd) Kill() {
	syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	<-e.done
}

// Log is what etcd printed so far.
func (e *Etcd) Log() string { return e.log.String() }

func (e *Etcd) health() error {
	resp, err := e.client.Get(e.ClientURL + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "true") {
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return nil
}

// Put writes one key through the gateway (POST /v3/kv/put, etcd 3.4's
// grpc-gateway path): one raft entry, one WAL fsync.
func (e *Etcd) Put(ctx context.Context, key, value string) error {
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString([]byte(value))})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.ClientURL+"/v3/kv/put", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "header") {
		return fmt.Errorf("put: %s: %s", resp.Status, b)
	}
	return nil
}

// Load writes from workers goroutines until ctx ends or d has passed,
// and returns how many puts succeeded. Concurrent writers keep etcd
// fsyncing back to back; perSecond > 0 paces them to that many puts a
// second in all, which leaves the CPU to etcd on a small machine.
func (e *Etcd) Load(ctx context.Context, d time.Duration, workers int, perSecond float64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var n atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	value := strings.Repeat("v", 2300) // the fio etcd test's write size
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pace *time.Ticker
			if perSecond > 0 {
				pace = time.NewTicker(time.Duration(float64(workers) / perSecond * float64(time.Second)))
				defer pace.Stop()
			}
			for i := 0; ctx.Err() == nil; i++ {
				if pace != nil {
					select {
					case <-ctx.Done():
						return
					case <-pace.C:
					}
				}
				if err := e.Put(ctx, fmt.Sprintf("k%d-%d", w, i%1000), value); err != nil {
					if ctx.Err() == nil {
						once.Do(func() { first = err; cancel() })
					}
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return n.Load(), first
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 8<<20 { // etcd logs every slow fsync: keep the memory bounded
		l.b.Reset()
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) tail(n int) string {
	s := l.String()
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// ClientTLS is a client configuration with the test client certificate,
// trusting the test CA.
func (c *Certs) ClientTLS() (*tls.Config, error) {
	pem, err := os.ReadFile(c.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no CA certificate")
	}
	kp, err := tls.LoadX509KeyPair(c.ClientCert, c.ClientKey)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{kp}}, nil
}
