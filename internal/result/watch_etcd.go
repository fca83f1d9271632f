package result

// WatchEtcd is one etcd member's WAL fsync over watch's sliding window
// (watch --etcd), from the member's own histogram.
type WatchEtcd struct {
	Endpoint string `json:"endpoint"`
	// WindowS is the time the figures span (shorter while the window
	// fills); Fsyncs is how many WAL fsyncs they hold.
	WindowS float64 `json:"window_s"`
	Fsyncs  float64 `json:"fsyncs"`
	// P99Ns is histogram_quantile(0.99) over the window's fsyncs; the
	// true p99 lies in (P99LowerNs, P99UpperNs], P99UpperNs null above
	// the largest bucket. All null without fsyncs.
	P99Ns      *float64 `json:"p99_ns"`
	P99LowerNs *float64 `json:"p99_lower_ns"`
	P99UpperNs *float64 `json:"p99_upper_ns"`
	LimitNs    float64  `json:"limit_ns"`
	// Verdict is pass, warn, undecided, fail, no-data (no fsyncs, or
	// the window is not ready) or error (Error says why).
	Verdict string `json:"verdict"`
	Error   string `json:"error,omitempty"`
}
