package promhist

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics/etcdtest"
	"github.com/iolens/iolens/internal/hint"
	"github.com/prometheus/common/model"
	"golang.org/x/sys/unix"
)

func matrix(streams ...*model.SampleStream) model.Matrix { return model.Matrix(streams) }

func sstream(labels map[string]string, pts ...[2]float64) *model.SampleStream {
	m := model.Metric{}
	for k, v := range labels {
		m[model.LabelName(k)] = model.LabelValue(v)
	}
	s := &model.SampleStream{Metric: m}
	for _, p := range pts {
		s.Values = append(s.Values, model.SamplePair{Timestamp: model.Time(int64(p[0] * 1000)), Value: model.SampleValue(p[1])})
	}
	return s
}

// TestColumns: the response parser takes what a range query answers and
// refuses the rest, each with an error that names it.
func TestColumns(t *testing.T) {
	g := grid{start: time.Unix(1000, 0), step: time.Second, n: 3}
	a := map[string]string{"instance": "n:9100", "device": "sda"}
	b := map[string]string{"instance": "n:9100", "device": "sdb"}
	tests := []struct {
		name string
		val  model.Value
		want string // "" for success
	}{
		{"ok", matrix(sstream(a, [2]float64{1000, 1}, [2]float64{1002, 3}), sstream(b, [2]float64{1001, 2})), ""},
		{"nil", nil, "no data"},
		{"a vector", model.Vector{}, "vector where a range"},
		{"a scalar", &model.Scalar{}, "scalar where a range"},
		{"too many series", matrix(sstream(a), sstream(b), sstream(map[string]string{"device": "c"})), "matches 3 series"},
		{"twice", matrix(sstream(a, [2]float64{1000, 1}), sstream(a, [2]float64{1001, 1})), "twice"},
		{"off the grid", matrix(sstream(a, [2]float64{1000.5, 1})), "off the grid"},
		{"before the start", matrix(sstream(a, [2]float64{999, 1})), "off the grid"},
		{"after the end", matrix(sstream(a, [2]float64{1003, 1})), "off the grid"},
		{"out of order", matrix(sstream(a, [2]float64{1001, 1}, [2]float64{1000, 1})), "out of order"},
		{"twice at one instant", matrix(sstream(a, [2]float64{1001, 1}, [2]float64{1001, 2})), "out of order or twice"},
		{"more points than asked", matrix(sstream(a, [2]float64{1000, 1}, [2]float64{1001, 1}, [2]float64{1002, 1}, [2]float64{1003, 1})), "4 points"},
		{"an empty series", matrix(nil), "empty series"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := columns("q", tc.val, g, 2)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(cols) != 2 || cols[0].labels["device"] != "sda" || cols[0].v[0] != 1 || !math.IsNaN(cols[0].v[1]) || cols[0].v[2] != 3 {
					t.Fatalf("columns %+v", cols)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if hint.Of(err) == "" {
				t.Errorf("%v has no hint", err)
			}
		})
	}
	// Values that are not numbers are no sample.
	cols, err := columns("q", matrix(sstream(a, [2]float64{1000, math.NaN()}, [2]float64{1001, math.Inf(1)}, [2]float64{1002, 5})), g, 2)
	if err != nil || !math.IsNaN(cols[0].v[0]) || !math.IsNaN(cols[0].v[1]) || cols[0].v[2] != 5 {
		t.Fatalf("NaN and Inf: %+v %v", cols, err)
	}
}

// serverTLS serves the test server certificate and wants a client
// certificate from the test CA.
func serverTLS(t *testing.T, c *etcdtest.Certs) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(c.ServerCert, c.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(c.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
}

func clientOf(t *testing.T, url string, a Auth, l Limits) *Client {
	t.Helper()
	c, err := NewClient(url, a, l)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHostileServer: answers too large, too slow, redirected elsewhere,
// not JSON or not Prometheus's give errors that say so; nothing panics.
func TestHostileServer(t *testing.T) {
	g := grid{start: time.Unix(1000, 0), step: time.Second, n: 3}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host was asked: %s (Authorization %q)", r.URL, r.Header.Get("Authorization"))
	}))
	defer other.Close()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		limits  Limits
		want    string
	}{
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[` + strings.Repeat(" ", 1<<20) + `]}}`))
		}, Limits{MaxBodyBytes: 64 << 10}, "larger than"},
		{"too large, said up front", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(1<<30))
			w.WriteHeader(200)
		}, Limits{MaxBodyBytes: 64 << 10}, "larger than"},
		{"too slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}, Limits{Timeout: 200 * time.Millisecond}, "exceeded"},
		{"redirect elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}, Limits{}, "another host"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html>login</html>"))
		}, Limits{}, "not valid"},
		{"a gateway error", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
		}, Limits{}, "bad gateway"},
		{"the wrong type", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
		}, Limits{}, "vector where a range"},
		{"an error with success", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"status":"error","errorType":"execution","error":"boom"}`))
		}, Limits{}, "boom"},
		{"max samples", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(422)
			w.Write([]byte(`{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`))
		}, Limits{}, "refused the query for its size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c := clientOf(t, srv.URL, Auth{}, tc.limits)
			_, _, err := c.rangeQuery(t.Context(), "up", g, 8)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if hint.Of(err) == "" {
				t.Errorf("%v has no hint", err)
			}
		})
	}
}

// TestRedirectSameHost: a redirect within the server (a path prefix) is
// followed, with the credentials.
func TestRedirectSameHost(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("s3cret\n"), 0o600)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/prom/") {
			http.Redirect(w, r, "/prom"+r.URL.Path, http.StatusPermanentRedirect)
			return
		}
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no token", 401)
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	c := clientOf(t, srv.URL, Auth{TokenFile: tok}, Limits{})
	if _, _, err := c.rangeQuery(t.Context(), "up", grid{start: time.Unix(1000, 0), step: time.Second, n: 3}, 8); err != nil {
		t.Fatal(err)
	}
}

// TestAuth: basic auth and a bearer token reach the server as they
// should; conflicting or unsafe settings are refused before any request.
func TestAuth(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pw, tok := write("pw", "pa:ss word\n"), write("tok", "abc.def\n")
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	g := grid{start: time.Unix(1000, 0), step: time.Second, n: 1}
	for _, tc := range []struct {
		a    Auth
		want string
	}{
		{Auth{User: "ops", PasswordFile: pw}, "Basic b3BzOnBhOnNzIHdvcmQ="},
		{Auth{TokenFile: tok}, "Bearer abc.def"},
		{Auth{}, ""},
	} {
		c := clientOf(t, srv.URL, tc.a, Limits{})
		if _, _, err := c.rangeQuery(t.Context(), "up", g, 1); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%+v: Authorization %q, want %q", tc.a, got, tc.want)
		}
	}
	for _, tc := range []struct {
		url  string
		a    Auth
		want string
	}{
		{srv.URL, Auth{User: "ops", PasswordFile: pw, TokenFile: tok}, "both"},
		{srv.URL, Auth{User: "ops"}, "a user and a password file"},
		{srv.URL, Auth{TokenFile: filepath.Join(dir, "none")}, "token file"},
		{srv.URL, Auth{TokenFile: write("two", "a\nb\n")}, "one token on one line"},
		{srv.URL, Auth{CertFile: pw}, "both its certificate and its key"},
		{srv.URL, Auth{CAFile: pw}, "no PEM certificate"},
		{"http://prometheus.example.com:9090", Auth{TokenFile: tok}, "in clear"},
		{"http://ops:pw@prometheus:9090", Auth{}, "carries credentials"},
		{"prometheus:9090", Auth{}, "want http(s)://"},
		{"ftp://prometheus", Auth{}, "want http(s)://"},
		{"http://prometheus:9090/?x=1", Auth{}, "query"},
	} {
		_, err := NewClient(tc.url, tc.a, Limits{})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || ce.Hint() == "" {
			t.Errorf("%s %+v: error %v, want a ConfigError saying %q", tc.url, tc.a, err, tc.want)
		}
	}
}

// TestTLS: a server that wants a client certificate from its CA takes
// iolens's with --prometheus-ca, -cert and -key, and refuses it without
// one or with another CA's; iolens refuses a server its CA did not sign.
func TestTLS(t *testing.T) {
	certs := etcdtest.NewCerts(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	srv.TLS = serverTLS(t, certs)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()
	g := grid{start: time.Unix(1000, 0), step: time.Second, n: 1}
	ask := func(a Auth) error {
		c, err := NewClient(srv.URL, a, Limits{Timeout: 5 * time.Second})
		if err != nil {
			return err
		}
		_, _, err = c.rangeQuery(t.Context(), "up", g, 1)
		return err
	}
	if err := ask(Auth{CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}); err != nil {
		t.Fatalf("with the CA and a client certificate: %v", err)
	}
	for name, a := range map[string]Auth{
		"no client certificate":         {CAFile: certs.CA},
		"another CA's client":           {CAFile: certs.CA, CertFile: certs.OtherClientCert, KeyFile: certs.OtherClientKey},
		"a server its CA did not sign":  {CAFile: certs.OtherCA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey},
		"the system's CAs, not the one": {CertFile: certs.ClientCert, KeyFile: certs.ClientKey},
	} {
		if err := ask(a); err == nil {
			t.Errorf("%s: the request went through", name)
		} else if hint.Of(err) == "" {
			t.Errorf("%s: %v has no hint", name, err)
		}
	}
}

// A credential file that is a FIFO nobody writes, or a device, is refused
// at once: reading it would block the command, or never end.
func TestSecretFilesNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscallMkfifo(fifo); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	base, _ := url.Parse("https://prom.example.com")
	for _, path := range []string{fifo, "/dev/zero"} {
		for name, a := range map[string]Auth{
			"ca":       {CAFile: path},
			"token":    {TokenFile: path},
			"password": {User: "u", PasswordFile: path},
			"cert":     {CertFile: path, KeyFile: path},
		} {
			done := make(chan error, 1)
			go func() { _, err := HTTPClient(base, a, 1<<20, time.Second); done <- err }()
			select {
			case err := <-done:
				var ce *ConfigError
				if !errors.As(err, &ce) || hint.Of(err) == "" {
					t.Errorf("%s %s: got %v, want a ConfigError with a hint", name, path, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s: still reading after 5 s", name, path)
			}
		}
	}
}

func syscallMkfifo(path string) error { return unix.Mkfifo(path, 0o600) }
