package etcdmetrics

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
)

// DefaultMaxBytes caps a /metrics body. An etcd member's page is a few
// hundred KiB (146 KiB for etcd 3.4 with default metrics); the text
// parser holds all of it, a few dozen bytes of memory per byte of a page
// of tiny series, so a hostile or runaway page is cut off here.
const DefaultMaxBytes = 4 << 20

// DefaultTimeout bounds one scrape, connection to last byte.
const DefaultTimeout = 10 * time.Second

// ClientOptions configure a Client. The TLS files are what etcdctl takes
// (--cacert, --cert, --key); on a kubeadm node they are
// /etc/kubernetes/pki/etcd/ca.crt and healthcheck-client.{crt,key}.
type ClientOptions struct {
	CACert, Cert, Key string
	// InsecureSkipVerify accepts any server certificate. Only ever set
	// because the user asked.
	InsecureSkipVerify bool
	// Timeout bounds one scrape (default DefaultTimeout).
	Timeout time.Duration
	// MaxBytes caps the body (default DefaultMaxBytes).
	MaxBytes int64
}

// Client scrapes etcd members' /metrics over HTTP or HTTPS.
type Client struct {
	http     *http.Client
	opts     ClientOptions
	hasTLS   bool
	maxBytes int64
}

// maxPEMBytes bounds a certificate or key file: a CA bundle is tens of
// KiB; /dev/zero or a misnamed file is refused, never read to the end.
const maxPEMBytes = 1 << 20

// NewClient loads the TLS files and builds the client. Each must be a
// regular file of at most 1 MiB.
func NewClient(o ClientOptions) (*Client, error) {
	if (o.Cert == "") != (o.Key == "") {
		return nil, &hint.Error{Err: errors.New("--cert and --key go together"), Advice: "give both the client certificate and its key"}
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify}
	if o.CACert != "" {
		pem, err := userfile.ReadFile(o.CACert, maxPEMBytes)
		if err != nil {
			return nil, &hint.Error{Err: fmt.Errorf("--cacert: %w", err), Advice: "name the CA certificate etcd's serving certificate is signed with (PEM)"}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &hint.Error{Err: fmt.Errorf("--cacert %s: no PEM certificate in it", o.CACert), Advice: "give a PEM file with -----BEGIN CERTIFICATE-----"}
		}
		tc.RootCAs = pool
	}
	if o.Cert != "" {
		certPEM, err := userfile.ReadFile(o.Cert, maxPEMBytes)
		var keyPEM []byte
		if err == nil {
			keyPEM, err = userfile.ReadFile(o.Key, maxPEMBytes)
		}
		var kp tls.Certificate
		if err == nil {
			kp, err = tls.X509KeyPair(certPEM, keyPEM)
		}
		if err != nil {
			return nil, &hint.Error{Err: fmt.Errorf("--cert %s / --key %s: %w", o.Cert, o.Key, err),
				Advice: "give a PEM client certificate and its unencrypted private key (etcdctl's --cert and --key)"}
		}
		tc.Certificates = []tls.Certificate{kp}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	max := o.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	tr := &http.Transport{
		// No proxy: a client certificate is for etcd, and a member's
		// address is the cluster's own.
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:        tc,
		TLSHandshakeTimeout:    o.Timeout,
		ResponseHeaderTimeout:  o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	hc := &http.Client{Transport: tr, Timeout: o.Timeout,
		// Never follow: the client certificate would go along to wherever
		// the page points.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{http: hc, opts: o, hasTLS: o.CACert != "" || o.Cert != "" || o.InsecureSkipVerify, maxBytes: max}, nil
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// MetricsURL turns an endpoint as etcdctl takes it (https://10.0.0.1:2379,
// 10.0.0.1:2379) into its /metrics URL. Without a scheme it is https when
// TLS options were given, as etcdctl does, else http. A URL with a path
// is used as it is (a --listen-metrics-urls endpoint, a proxy path).
func MetricsURL(endpoint string, tlsGiven bool) (string, error) {
	e := strings.TrimSpace(endpoint)
	if e == "" {
		return "", errors.New("empty endpoint")
	}
	if !strings.Contains(e, "://") {
		if tlsGiven {
			e = "https://" + e
		} else {
			e = "http://" + e
		}
	}
	u, err := url.Parse(e)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("scheme %q: http or https", u.Scheme)
	}
	if u.Host == "" {
		return "", errors.New("no host")
	}
	if u.User != nil {
		return "", errors.New("user information in the URL: etcd's /metrics takes a client certificate, not a password")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	u.Fragment = ""
	return u.String(), nil
}

// Scrape reads one member's /metrics.
func (c *Client) Scrape(ctx context.Context, endpoint string) (*Snapshot, error) {
	u, err := MetricsURL(endpoint, c.hasTLS)
	if err != nil {
		return nil, &hint.Error{Err: fmt.Errorf("endpoint %q: %w", endpoint, err), Advice: "give etcd's client URL as etcdctl takes it, e.g. https://10.0.0.1:2379"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &hint.Error{Err: err}
	}
	// The text format only: the parser reads nothing else, and some
	// servers would otherwise answer in protobuf or OpenMetrics.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.explain(endpoint, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(endpoint, u, resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, c.explain(endpoint, u, err)
	}
	at := time.Now()
	if int64(len(body)) > c.maxBytes {
		return nil, &hint.Error{Err: fmt.Errorf("%s: the answer is larger than %s", u, units.IOSize(c.maxBytes)),
			Advice: "an etcd member's /metrics is a few hundred KiB: check the URL is etcd's client URL"}
	}
	s, err := Parse(bytes.NewReader(body))
	if err != nil {
		return nil, pageError(endpoint, u, resp, err)
	}
	s.Time = at
	return s, nil
}

func pageError(endpoint, u string, resp *http.Response, err error) error {
	e := &hint.Error{Err: err}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	var fe *FormatError
	var ne *NotEtcdError
	switch {
	case errors.As(err, &fe) && mt != "" && mt != "text/plain":
		e.Err = fmt.Errorf("%s answered with %s, not Prometheus metrics: %w", u, printable(ct, 80), err)
		e.Advice = "give etcd's client URL (https://HOST:2379) or its --listen-metrics-urls address (kubeadm: http://127.0.0.1:2381)"
	case errors.As(err, &fe):
		e.Err = fmt.Errorf("%s: %w", u, err)
		e.Advice = "this is not a metrics page: give etcd's client URL (https://HOST:2379) or its --listen-metrics-urls address"
	case errors.As(err, &ne) && ne.OtherEtcd:
		e.Err = fmt.Errorf("%s: %w", u, err)
		e.Advice = "scrape each etcd member's own client URL, not a proxy or an aggregate"
	case errors.As(err, &ne):
		e.Err = fmt.Errorf("%s is not an etcd member's metrics: %w", u, err)
		e.Advice = "give etcd's client URL (https://HOST:2379, as in etcdctl --endpoints) or its --listen-metrics-urls address"
	default:
		e.Err = fmt.Errorf("%s: %w", u, err)
	}
	return e
}

func statusError(endpoint, u string, resp *http.Response) error {
	e := &hint.Error{}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := printable(strings.TrimSpace(string(snippet)), 120)
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		loc := printable(resp.Header.Get("Location"), 200)
		e.Err = fmt.Errorf("%s redirects (%s) to %q; iolens does not follow redirects", u, resp.Status, loc)
		e.Advice = "give the URL it points to, if that is etcd"
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(text, "HTTPS"):
		e.Err = fmt.Errorf("%s: %s: %s", u, resp.Status, text)
		e.Advice = "the port speaks TLS: use https:// (with --cacert, and --cert and --key if etcd wants client certificates)"
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Err = fmt.Errorf("%s: %s", u, resp.Status)
		e.Advice = "etcd's /metrics wants a client certificate: set --cert and --key"
	case resp.StatusCode == http.StatusNotFound:
		e.Err = fmt.Errorf("%s: %s", u, resp.Status)
		e.Advice = "etcd serves /metrics on its client URLs and --listen-metrics-urls; check the path"
	default:
		e.Err = fmt.Errorf("%s: %s", u, resp.Status)
		if text != "" {
			e.Err = fmt.Errorf("%s: %s: %s", u, resp.Status, text)
		}
	}
	return e
}

// explain turns a transport error into what went wrong and which flag
// fixes it.
func (c *Client) explain(endpoint, u string, err error) error {
	e := &hint.Error{Err: err}
	host := u
	if pu, perr := url.Parse(u); perr == nil {
		host = pu.Host
	}
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var dnsErr *net.DNSError
	var alert tls.AlertError
	var recHdr tls.RecordHeaderError
	msg := err.Error()
	switch {
	case errors.Is(err, context.Canceled):
		e.Err = fmt.Errorf("%s: interrupted", u)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		e.Err = fmt.Errorf("%s: no answer within %s", u, c.opts.Timeout)
		e.Advice = "check the address and port (etcd's client port is usually 2379) and that no firewall drops the connection"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Err = fmt.Errorf("%s: connection refused: nothing listens on %s", u, host)
		e.Advice = "check the port: etcd's client URLs (--listen-client-urls, usually :2379) or --listen-metrics-urls (kubeadm: 127.0.0.1:2381)"
	case errors.As(err, &dnsErr):
		e.Err = fmt.Errorf("%s: %w", u, dnsErr)
		e.Advice = "check the host name, or give the member's IP address"
	case errors.As(err, &unknownCA):
		e.Err = fmt.Errorf("%s: the server's certificate is signed by a CA iolens does not trust (%s)", u, certName(unknownCA.Cert))
		e.Advice = "set --cacert to the CA that signed etcd's serving certificate (kubeadm: /etc/kubernetes/pki/etcd/ca.crt)"
		if c.opts.CACert != "" {
			e.Advice = "--cacert " + c.opts.CACert + " did not sign etcd's serving certificate: give etcd's --trusted-ca-file CA"
		}
	case errors.As(err, &hostErr):
		e.Err = fmt.Errorf("%s: %w", u, hostErr)
		e.Advice = "connect by a name or address the certificate lists (its SANs), as etcd's --advertise-client-urls do"
	case errors.As(err, &invalid):
		e.Err = fmt.Errorf("%s: %w", u, invalid)
		e.Advice = "the server's certificate is not valid (expired, or not for serving): renew it"
	case errors.As(err, &alert) || strings.Contains(msg, "remote error: tls:"):
		e.Err = fmt.Errorf("%s: the server refused the TLS handshake: %v", u, unwrapAll(err))
		switch {
		case c.opts.Cert == "":
			e.Advice = "etcd asks for a client certificate (--client-cert-auth): set --cert and --key (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.crt and .key)"
		default:
			e.Advice = "etcd refused --cert " + c.opts.Cert + ": the client certificate must be signed by the CA in etcd's --trusted-ca-file, for client authentication"
		}
	case errors.As(err, &recHdr) || strings.Contains(msg, "first record does not look like a TLS handshake"):
		e.Err = fmt.Errorf("%s: the server does not speak TLS", u)
		e.Advice = "use http:// for this endpoint"
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		e.Err = fmt.Errorf("%s: the server does not speak TLS", u)
		e.Advice = "use http:// for this endpoint"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(msg, "malformed HTTP response"):
		e.Err = fmt.Errorf("%s: the server closed the connection without an HTTP answer (%v)", u, unwrapAll(err))
		if strings.HasPrefix(u, "http://") {
			e.Advice = "the port may speak TLS: use https:// (with --cacert, and --cert and --key if etcd wants client certificates)"
		}
	default:
		e.Err = fmt.Errorf("%s: %v", u, unwrapAll(err))
	}
	return e
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unwrapAll drops url.Error's "Get URL:" prefix, which the message
// already carries.
func unwrapAll(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func certName(c *x509.Certificate) string {
	if c == nil {
		return "unknown issuer"
	}
	return "issuer " + printable(c.Issuer.String(), 120)
}
