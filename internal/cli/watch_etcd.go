package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/watch"
	"github.com/spf13/pflag"
)

// etcdWatchOptions are watch's --etcd flags.
type etcdWatchOptions struct {
	endpoints []string
	window    units.Duration
	tls       etcdTLS
}

func (o *etcdWatchOptions) addFlags(f *pflag.FlagSet) {
	o.window = units.Duration(watch.DefaultEtcdWindow)
	f.StringArrayVar(&o.endpoints, "etcd", nil, "also scrape this etcd member's /metrics every interval and follow its WAL fsync p99 (repeatable; a URL as for 'iolens etcd')")
	f.Var(&o.window, "etcd-window", "the sliding window of the WAL fsync p99")
	o.tls.addFlags(f, "etcd-")
}

// needsEtcd refuses an etcd option given without --etcd, which would
// otherwise be ignored without a word.
func (o *etcdWatchOptions) needsEtcd(f *pflag.FlagSet) error {
	if len(o.endpoints) > 0 {
		return nil
	}
	for _, name := range []string{"etcd-window", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-insecure-skip-verify"} {
		if f.Changed(name) {
			return &UsageError{Err: fmt.Errorf("--%s without --etcd", name), Help: "name the etcd member to follow, e.g. --etcd https://10.0.0.1:2379, or drop --" + name}
		}
	}
	return nil
}

// configure adds the etcd members to cfg; the returned func releases the
// client's connections.
func (o *etcdWatchOptions) configure(cfg *watch.Config, interval time.Duration) (func(), error) {
	if len(o.endpoints) == 0 {
		return func() {}, nil
	}
	if w := time.Duration(o.window); w < 2*interval {
		return nil, &UsageError{Err: fmt.Errorf("--etcd-window %s is shorter than two intervals (%s)", w, interval), Help: "use a window of several intervals, e.g. --etcd-window 1m"}
	}
	for _, e := range o.endpoints {
		if _, err := etcdmetrics.MetricsURL(e, true); err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--etcd %q: %w", e, err), Help: "give etcd's client URL, e.g. https://10.0.0.1:2379"}
		}
	}
	// A scrape must fit in an interval or two; a member that does not
	// answer in time shows as an error on that row.
	timeout := min(max(interval, time.Second), 5*time.Second)
	c, err := o.tls.client("etcd-", timeout)
	if err != nil {
		return nil, err
	}
	cfg.Etcd = &watch.Etcd{Client: c, Endpoints: o.endpoints, Window: time.Duration(o.window)}
	cfg.Notes = append(cfg.Notes, fmt.Sprintf("etcd: WAL fsync p99 of %s over a sliding %s window, from etcd's histogram buckets (read as histogram_quantile does); limit 10 ms",
		strings.Join(o.endpoints, ", "), time.Duration(o.window)))
	return c.Close, nil
}
