package promhist

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// Auth is how to reach a Prometheus (or a Grafana): basic auth with a
// password read from a file, or a bearer token read from a file, and TLS
// with a CA and a client certificate. Secrets are read from files only:
// a command line shows in ps and in shell history.
type Auth struct {
	User         string
	PasswordFile string
	TokenFile    string
	CAFile       string
	CertFile     string
	KeyFile      string
}

// Limits bound what one answer may cost.
type Limits struct {
	// MaxBodyBytes is the largest answer read (default 64 MiB).
	MaxBodyBytes int64
	// Timeout bounds each request (default 2 minutes).
	Timeout time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = 64 << 20
	}
	if l.Timeout <= 0 {
		l.Timeout = 2 * time.Minute
	}
	return l
}

// Client is a Prometheus HTTP API client with iolens's bounds.
type Client struct {
	api    v1.API
	base   *url.URL
	limits Limits
}

// ConfigError is a Prometheus or Grafana address or credential that
// cannot be used.
type ConfigError struct {
	Err  error
	Help string
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Hint says what to give instead.
func (e *ConfigError) Hint() string { return e.Help }

// ParseBase checks a Prometheus or Grafana base URL: http or https, a
// host, no query, and no credentials in it.
func ParseBase(raw, what string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{Err: fmt.Errorf("%s URL %q: want http(s)://host[:port][/path]", what, raw),
			Help: "e.g. http://prometheus.monitoring:9090 or https://prometheus.example.com/prometheus"}
	}
	if u.User != nil {
		return nil, &ConfigError{Err: fmt.Errorf("%s URL carries credentials", what),
			Help: "give the user with --prometheus-user and the password in a file (--prometheus-password-file), or a token file"}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, &ConfigError{Err: fmt.Errorf("%s URL %q has a query or fragment", what, raw), Help: "give the base URL only"}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// HTTPClient makes the HTTP client for base: TLS as a says, the
// credentials added to every request, answers read up to maxBody bytes,
// and redirects followed only within the same scheme and host (a
// redirect elsewhere would carry the credentials to a stranger, and the
// answer would not be this server's).
func HTTPClient(base *url.URL, a Auth, maxBody int64, timeout time.Duration) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.CAFile != "" {
		pem, err := readSecret(a.CAFile, "CA file")
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Err: fmt.Errorf("CA file %s holds no PEM certificate", a.CAFile), Help: "give the CA's certificate in PEM form"}
		}
		tc.RootCAs = pool
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return nil, &ConfigError{Err: errors.New("a client certificate needs both its certificate and its key file"), Help: "give --prometheus-cert and --prometheus-key together"}
	}
	if a.CertFile != "" {
		certPEM, err := readSecret(a.CertFile, "client certificate")
		if err != nil {
			return nil, err
		}
		keyPEM, err := readSecret(a.KeyFile, "client key")
		if err != nil {
			return nil, err
		}
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("client certificate: %w", err), Help: "give a PEM certificate and its PEM private key"}
		}
		tc.Certificates = []tls.Certificate{c}
	}
	tr.TLSClientConfig = tc
	var auth string
	switch {
	case a.TokenFile != "" && (a.User != "" || a.PasswordFile != ""):
		return nil, &ConfigError{Err: errors.New("both a bearer token and basic auth given"), Help: "give one: a token file, or a user and a password file"}
	case a.TokenFile != "":
		tok, err := readSecret(a.TokenFile, "token file")
		if err != nil {
			return nil, err
		}
		t := strings.TrimSpace(string(tok))
		if t == "" || strings.ContainsAny(t, "\r\n") {
			return nil, &ConfigError{Err: fmt.Errorf("token file %s: want one token on one line", a.TokenFile), Help: "write the token alone in the file"}
		}
		auth = "Bearer " + t
	case a.User != "" || a.PasswordFile != "":
		if a.User == "" || a.PasswordFile == "" {
			return nil, &ConfigError{Err: errors.New("basic auth needs a user and a password file"), Help: "give --prometheus-user and --prometheus-password-file together"}
		}
		pw, err := readSecret(a.PasswordFile, "password file")
		if err != nil {
			return nil, err
		}
		req := &http.Request{Header: http.Header{}}
		req.SetBasicAuth(a.User, strings.TrimRight(string(pw), "\r\n"))
		auth = req.Header.Get("Authorization")
	}
	if auth != "" && base.Scheme != "https" && !loopback(base.Hostname()) {
		return nil, &ConfigError{Err: fmt.Errorf("credentials would cross the network in clear to %s", base.Host),
			Help: "use an https:// URL (with --prometheus-ca if its certificate is private)"}
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: &bounded{next: tr, auth: auth, host: base.Host, max: maxBody},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			if req.URL.Host != base.Host || req.URL.Scheme != base.Scheme {
				return &ConfigError{Err: fmt.Errorf("%s redirected to %s://%s, another host: not followed", base.Host, req.URL.Scheme, req.URL.Host),
					Help: "give the URL the redirect points to, if that server is the one to ask"}
			}
			return nil
		},
	}, nil
}

func loopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// maxSecret bounds a token, password, certificate, key or CA file.
const maxSecret = 1 << 20

// readSecret reads a file named on the command line: a FIFO or a device
// is refused without blocking (a FIFO nobody writes would hang the
// command), and the size is bounded.
func readSecret(path, what string) ([]byte, error) {
	b, err := userfile.ReadFile(path, maxSecret)
	var big *userfile.TooLargeError
	switch {
	case errors.As(err, &big):
		return nil, &ConfigError{Err: fmt.Errorf("%s %s is larger than 1 MiB", what, path), Help: "give the file that holds only the secret"}
	case err != nil:
		return nil, &ConfigError{Err: fmt.Errorf("%s: %w", what, err), Help: "give a readable regular file"}
	}
	return b, nil
}

// bounded adds the credentials (to requests for the configured host only)
// and cuts an answer off at max bytes with an error.
type bounded struct {
	next http.RoundTripper
	auth string
	host string
	max  int64
}

func (b *bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	if b.auth != "" && req.URL.Host == b.host {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", b.auth)
	}
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > b.max {
		resp.Body.Close()
		return nil, &TooLargeError{Max: b.max}
	}
	resp.Body = &capped{r: resp.Body, left: b.max, max: b.max}
	return resp, nil
}

// TooLargeError is an answer larger than iolens reads.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer is larger than %d MiB", e.Max>>20)
}

// Hint says how to ask for less.
func (e *TooLargeError) Hint() string {
	return "ask for less: fewer devices (--device), one node (--instance), a shorter range or a coarser --step"
}

type capped struct {
	r         io.ReadCloser
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, &TooLargeError{Max: c.max}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

// NewClient connects to the Prometheus at rawURL.
func NewClient(rawURL string, a Auth, l Limits) (*Client, error) {
	l = l.withDefaults()
	base, err := ParseBase(rawURL, "Prometheus")
	if err != nil {
		return nil, err
	}
	hc, err := HTTPClient(base, a, l.MaxBodyBytes, l.Timeout)
	if err != nil {
		return nil, err
	}
	return newClientWith(base.String(), hc, l)
}

func newClientWith(rawURL string, hc *http.Client, l Limits) (*Client, error) {
	l = l.withDefaults()
	base, err := ParseBase(rawURL, "Prometheus")
	if err != nil {
		return nil, err
	}
	c, err := api.NewClient(api.Config{Address: base.String(), Client: hc})
	if err != nil {
		return nil, err
	}
	return &Client{api: v1.NewAPI(c), base: base, limits: l}, nil
}

// URL is the Prometheus address, as shown in reports.
func (c *Client) URL() string { return c.base.String() }

// reachError turns a transport failure into an error that says what to
// check.
func reachError(c *Client, err error) error {
	var ce *ConfigError
	var tl *TooLargeError
	switch {
	case errors.As(err, &ce), errors.As(err, &tl), errors.Is(err, context.Canceled):
		return err
	}
	return hint.Wrap(fmt.Errorf("asking Prometheus at %s: %w", c.base, err),
		"check the URL, that Prometheus answers there (curl URL/-/ready), and the TLS and auth flags")
}
