package cloudmeta

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is a metadata service that answers as one provider does, from the
// recorded documents in testdata, and refuses what that provider refuses
// (a GET without the Metadata header, an IMDSv2 GET without its token).
type fake struct {
	t        testing.TB
	provider string
	// override replaces a testdata document by name
	// ("azure-instance.json").
	override map[string][]byte
	// handler replaces the whole service when set.
	handler http.HandlerFunc

	mu   sync.Mutex
	reqs []string
}

const (
	awsToken     = "AQAEAF5t-fake-session-token=="
	ibmTestToken = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwNzE3XzcwYWEwMGM2In0.c2lnbmF0dXJl"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func (f *fake) file(name string) []byte {
	if b, ok := f.override[name]; ok {
		return b
	}
	return readTestdata(f.t, name)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	if f.handler != nil {
		f.handler(w, r)
		return
	}
	if r.Header.Get("X-Forwarded-For") != "" {
		http.Error(w, "forwarded", http.StatusBadRequest)
		return
	}
	path, q := r.URL.Path, r.URL.Query()
	switch f.provider {
	case azure:
		switch {
		case path != "/metadata/instance":
			http.NotFound(w, r)
		case r.Header.Get("Metadata") != "true":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error": "Bad request. Required metadata header not specified"}`))
		case q.Get("api-version") != azureAPIVersion:
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error": "Bad request. api-version is invalid or was not specified in the request.", "newest-versions": ["2021-12-13"]}`))
		default:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(f.file("azure-instance.json"))
		}
	case aws:
		switch {
		case path == "/latest/api/token" && r.Method == http.MethodPut:
			if r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") == "" {
				http.Error(w, "", http.StatusBadRequest)
				return
			}
			w.Write([]byte(awsToken))
		case path == "/latest/dynamic/instance-identity/document" && r.Method == http.MethodGet:
			if r.Header.Get("X-aws-ec2-metadata-token") != awsToken {
				http.Error(w, "", http.StatusUnauthorized)
				return
			}
			w.Write(f.file("aws-identity.json"))
		default:
			http.NotFound(w, r)
		}
	case gcp:
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "Missing Metadata-Flavor:Google header.", http.StatusForbidden)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		switch {
		case path == "/computeMetadata/v1/instance/machine-type":
			w.Write(f.file("gcp-machine-type.txt"))
		case path == "/computeMetadata/v1/instance/zone":
			w.Write(f.file("gcp-zone.txt"))
		case path == "/computeMetadata/v1/instance/disks/" && q.Get("recursive") == "true":
			w.Header().Set("Content-Type", "application/json")
			w.Write(f.file("gcp-disks.json"))
		default:
			http.NotFound(w, r)
		}
	case ibm:
		switch {
		case path == "/instance_identity/v1/token" && r.Method == http.MethodPut:
			if r.Header.Get("Metadata-Flavor") != "ibm" || q.Get("version") == "" {
				http.Error(w, `{"errors":[{"code":"missing_metadata_flavor"}]}`, http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(f.file("ibm-token.json"))
		case strings.HasPrefix(path, "/metadata/v1/") && r.Header.Get("Authorization") != "Bearer "+ibmTestToken:
			http.Error(w, `{"errors":[{"code":"not_authorized"}]}`, http.StatusUnauthorized)
		case path == "/metadata/v1/instance":
			w.Header().Set("Content-Type", "application/json")
			w.Write(f.file("ibm-instance.json"))
		case path == "/metadata/v1/instance/volume_attachments":
			w.Header().Set("Content-Type", "application/json")
			w.Write(f.file("ibm-volume-attachments.json"))
		default:
			http.NotFound(w, r)
		}
	default:
		http.NotFound(w, r)
	}
}

// hang is a handler that never answers: it waits for the client to go
// away (serve's cleanup cuts every connection). It reads the request
// body first, since the server only notices a closed connection once
// the body is consumed.
func hang() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
}

// serve starts f on the loopback and stops it when the test ends.
func serve(t testing.TB, f *fake) *httptest.Server {
	t.Helper()
	f.t = t
	s := httptest.NewServer(f)
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// loopbackOnly dials the loopback and fails the test for any other
// address, so no test can ever reach a real metadata service.
func loopbackOnly(t testing.TB) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 200 * time.Millisecond}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("dial %s: a test may only reach the loopback", addr)
			return nil, errors.New("dial refused by the test")
		}
		return d.DialContext(ctx, network, addr)
	}
}

// testOptions points every address at base and the sys and dev roots
// at fix, with short timeouts.
func testOptions(t testing.TB, base string, fix string) Options {
	return Options{
		BaseURL:      base,
		GCPURL:       base,
		SysRoot:      filepath.Join(fix, "sys"),
		DevRoot:      filepath.Join(fix, "dev"),
		DialTimeout:  200 * time.Millisecond,
		ProbeTimeout: 800 * time.Millisecond,
		Timeout:      3 * time.Second,
		dial:         loopbackOnly(t),
	}
}

// fixture builds a sys and dev tree: files maps a path to its content,
// links a path to a symlink target (relative targets as udev and sysfs
// write them).
func fixture(t testing.TB, files, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"sys/block", "dev/disk"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range links {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
