package cloudmeta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// client is the HTTP client of one Detect call: no proxy (a metadata
// request must never leave the host), no redirects, short dials, capped
// bodies.
type client struct {
	hc  *http.Client
	tr  *http.Transport
	max int64
}

func newClient(o *Options) *client {
	dial := (&net.Dialer{Timeout: o.DialTimeout}).DialContext
	if o.dial != nil {
		dial = o.dial
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dial,
		TLSHandshakeTimeout:    o.ProbeTimeout,
		ResponseHeaderTimeout:  o.ProbeTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true,
		MaxIdleConnsPerHost:    4,
	}
	return &client{
		tr:  tr,
		max: o.MaxBodyBytes,
		hc: &http.Client{
			Transport: tr,
			// A metadata service never redirects; one that does is not
			// one iolens trusts.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

func (c *client) close() { c.tr.CloseIdleConnections() }

// StatusError is a response other than the one a provider documents.
type StatusError struct {
	Code int
}

func (e *StatusError) Error() string {
	if e.Code >= 300 && e.Code < 400 {
		return fmt.Sprintf("HTTP %d (redirect refused)", e.Code)
	}
	return fmt.Sprintf("HTTP %d", e.Code)
}

// errTooLarge is a body over Options.MaxBodyBytes.
var errTooLarge = errors.New("response larger than the cap")

type response struct {
	header http.Header
	body   []byte
}

// do sends one request and returns a 200 (or 201) response's capped
// body. A 429 (Azure allows 5 requests a second) is tried once more.
func (c *client) do(ctx context.Context, method, url string, header map[string]string, body []byte) (*response, error) {
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, rd)
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		b, rerr := readCapped(resp.Body, c.max)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusTooManyRequests && attempt == 0:
			t := time.NewTimer(200 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			continue
		case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated:
			return nil, &StatusError{Code: resp.StatusCode}
		case rerr != nil:
			return nil, rerr
		}
		return &response{header: resp.Header, body: b}, nil
	}
}

// readCapped reads at most max bytes and fails on more.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w (%d bytes)", errTooLarge, max)
	}
	return b, nil
}

// describe says in a few words why a probe got no usable answer.
func describe(err error, dial, probe time.Duration) string {
	var se *StatusError
	var ne net.Error
	var pe *parseError
	var oe *net.OpError
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.As(err, &pe):
		return pe.Error()
	case errors.Is(err, errTooLarge):
		return err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to the metadata address"
	case errors.As(err, &oe) && oe.Op == "dial" && oe.Timeout():
		return fmt.Sprintf("no connection within the %v connect timeout", dial)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %v", probe)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "name does not resolve"
	}
	return "no usable answer: " + trimErr(err)
}

// trimErr shortens an error for a probe outcome.
func trimErr(err error) string {
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}
