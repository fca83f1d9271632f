package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry holding what every iolens /metrics
// endpoint serves besides its own metrics: iolens_build_info and the Go
// runtime and process collectors.
func NewRegistry(b Build) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(buildInfo(b), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Server serves a registry on /metrics, with /healthz for probes. It is
// the one metrics server of iolens: 'watch' and 'run' both use it.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
	once sync.Once
	err  error
}

// ListenError means the metrics address could not be listened on.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return fmt.Sprintf("metrics address %s: %v", e.Addr, e.Err) }
func (e *ListenError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *ListenError) Hint() string {
	return "give a free address, e.g. --metrics-addr :9101 or 127.0.0.1:0"
}

// Serve listens on addr (":9101", "127.0.0.1:0"...) at once, so that a
// busy port is an error now rather than a log line later, and serves reg
// until Close.
func Serve(addr string, reg prometheus.Gatherer) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "iolens metrics: /metrics\n")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &ListenError{Addr: addr, Err: err}
	}
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting a scrape in progress finish (2 s at
// most). Closing again returns the first result.
func (s *Server) Close() error {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.err = s.srv.Shutdown(ctx)
		if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && s.err == nil {
			s.err = serr
		}
	})
	return s.err
}
