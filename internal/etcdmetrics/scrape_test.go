package etcdmetrics

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics/etcdtest"
	"github.com/iolens/iolens/internal/hint"
)

func TestMetricsURL(t *testing.T) {
	tests := []struct {
		in   string
		tls  bool
		want string
		err  string
	}{
		{"http://10.0.0.1:2379", false, "http://10.0.0.1:2379/metrics", ""},
		{"https://10.0.0.1:2379/", false, "https://10.0.0.1:2379/metrics", ""},
		{"10.0.0.1:2379", false, "http://10.0.0.1:2379/metrics", ""},
		{"10.0.0.1:2379", true, "https://10.0.0.1:2379/metrics", ""},
		{"http://127.0.0.1:2381/metrics", false, "http://127.0.0.1:2381/metrics", ""},
		{"https://[::1]:2379", false, "https://[::1]:2379/metrics", ""},
		{"unix:///var/run/etcd.sock", false, "", "scheme"},
		{"http://user:pw@10.0.0.1:2379", false, "", "user information"},
		{"http://", false, "", "no host"},
		{" ", false, "", "empty"},
	}
	for _, tc := range tests {
		got, err := MetricsURL(tc.in, tc.tls)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func text(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		io.WriteString(w, body)
	}
}

func client(t *testing.T, o ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// wantScrapeError scrapes and checks the error and its hint.
func wantScrapeError(t *testing.T, c *Client, url, msg, wantHint string) {
	t.Helper()
	_, err := c.Scrape(context.Background(), url)
	var e *hint.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v, want a *hint.Error", url, err)
	}
	if !strings.Contains(err.Error(), msg) || !strings.Contains(e.Hint(), wantHint) {
		t.Errorf("%s:\n error %q\n hint  %q\nwant %q / %q", url, err, e.Hint(), msg, wantHint)
	}
}

func TestScrape(t *testing.T) {
	var accept string
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		text(page)(w, r)
	})
	before := time.Now()
	snap, err := client(t, ClientOptions{}).Scrape(context.Background(), s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if snap.WALFsync.Total() != 3 || snap.Time.Before(before) {
		t.Errorf("snapshot %+v", snap)
	}
	if !strings.HasPrefix(accept, "text/plain") {
		t.Errorf("Accept %q: ask for the text format only", accept)
	}
}

func TestScrapeErrors(t *testing.T) {
	c := client(t, ClientOptions{Timeout: 2 * time.Second})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	wantScrapeError(t, c, refused, "connection refused", "check the port")

	html := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><html><body>Welcome</body></html>")
	})
	wantScrapeError(t, c, html.URL, "answered with text/html, not Prometheus metrics", "etcd's client URL")

	other := serve(t, text("# TYPE go_goroutines gauge\ngo_goroutines 12\n# TYPE up gauge\nup 1\n"))
	wantScrapeError(t, c, other.URL, "is not an etcd member's metrics: no etcd metrics among the 2", "etcd's client URL")

	wantScrapeError(t, c, serve(t, http.NotFound).URL, "404", "check the path")

	var followed atomic.Bool
	target := serve(t, func(w http.ResponseWriter, r *http.Request) { followed.Store(true); text(page)(w, r) })
	redir := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/metrics", http.StatusFound)
	})
	wantScrapeError(t, c, redir.URL, "redirects", "the URL it points to")
	if followed.Load() {
		t.Error("the redirect was followed")
	}

	slow := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	short := client(t, ClientOptions{Timeout: 200 * time.Millisecond})
	wantScrapeError(t, short, slow.URL, "no answer within 200ms", "firewall")
}

// A body over the cap is refused, also when it arrives compressed: the
// cap counts what the parser would hold.
func TestScrapeSizeCap(t *testing.T) {
	big := page + strings.Repeat("# padding, as a hostile server might send\n", 200000) // about 8 MiB
	plain := serve(t, text(big))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, big)
	zw.Close()
	if gz.Len() > 1<<20 {
		t.Fatalf("compressed %d bytes", gz.Len())
	}
	bomb := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	})
	c := client(t, ClientOptions{})
	for _, u := range []string{plain.URL, bomb.URL} {
		wantScrapeError(t, c, u, "larger than 4 MiB", "is etcd's client URL")
	}
	small := serve(t, text(page))
	if _, err := client(t, ClientOptions{MaxBytes: int64(len(page))}).Scrape(context.Background(), small.URL); err != nil {
		t.Errorf("a body of exactly the cap: %v", err)
	}
	wantScrapeError(t, client(t, ClientOptions{MaxBytes: int64(len(page)) - 1}), small.URL, "larger than", "")
}

// tlsServer serves page with the test certificates, asking for client
// certificates when mutual.
func tlsServer(t *testing.T, certs *etcdtest.Certs, mutual bool, addr string) *httptest.Server {
	t.Helper()
	kp, err := tls.LoadX509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(text(page))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("cannot listen on %s: %v", addr, err)
		}
		s.Listener.Close()
		s.Listener = l
	}
	s.TLS = &tls.Config{Certificates: []tls.Certificate{kp}}
	if mutual {
		pem, _ := os.ReadFile(certs.CA)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		s.TLS.ClientCAs, s.TLS.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func TestScrapeTLS(t *testing.T) {
	certs := etcdtest.NewCerts(t)
	mtls := tlsServer(t, certs, true, "")
	ok := ClientOptions{CACert: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	if _, err := client(t, ok).Scrape(context.Background(), mtls.URL); err != nil {
		t.Fatalf("with the right flags: %v", err)
	}
	// Without a CA, then with the wrong one.
	wantScrapeError(t, client(t, ClientOptions{Cert: certs.ClientCert, Key: certs.ClientKey}), mtls.URL,
		"signed by a CA iolens does not trust", "set --cacert")
	wantScrapeError(t, client(t, ClientOptions{CACert: certs.OtherCA, Cert: certs.ClientCert, Key: certs.ClientKey}), mtls.URL,
		"does not trust", "did not sign etcd's serving certificate")
	// Without a client certificate, then with one etcd does not trust.
	wantScrapeError(t, client(t, ClientOptions{CACert: certs.CA}), mtls.URL, "refused the TLS handshake", "set --cert and --key")
	wantScrapeError(t, client(t, ClientOptions{CACert: certs.CA, Cert: certs.OtherClientCert, Key: certs.OtherClientKey}), mtls.URL,
		"refused the TLS handshake", "must be signed by the CA in etcd's --trusted-ca-file")
	// --insecure-skip-verify accepts the unknown CA, only when asked.
	if _, err := client(t, ClientOptions{InsecureSkipVerify: true, Cert: certs.ClientCert, Key: certs.ClientKey}).Scrape(context.Background(), mtls.URL); err != nil {
		t.Errorf("--insecure-skip-verify: %v", err)
	}
	// The wrong scheme, either way.
	plainURL := serve(t, text(page)).URL
	wantScrapeError(t, client(t, ok), strings.Replace(plainURL, "http://", "https://", 1), "does not speak TLS", "use http://")
	wantScrapeError(t, client(t, ClientOptions{}), strings.Replace(mtls.URL, "https://", "http://", 1), "400", "use https://")
	// A name the certificate does not list.
	other := tlsServer(t, certs, false, "127.0.0.2:0")
	wantScrapeError(t, client(t, ok), other.URL, "valid for 127.0.0.1, not 127.0.0.2", "SANs")
}

func TestNewClientRefuses(t *testing.T) {
	certs := etcdtest.NewCerts(t)
	for _, tc := range []struct {
		o    ClientOptions
		want string
	}{
		{ClientOptions{Cert: certs.ClientCert}, "go together"},
		{ClientOptions{CACert: "/nonexistent/ca.crt"}, "--cacert"},
		{ClientOptions{CACert: certs.ClientKey}, "no PEM certificate"},
		{ClientOptions{Cert: certs.ClientCert, Key: certs.OtherClientKey}, "private key does not match"},
	} {
		_, err := NewClient(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}
