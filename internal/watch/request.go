package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/units"
)

// Request is a watch as the command asks for it: which devices, how
// often, what each is expected to be, who is doing the IO, and the etcd
// members to follow.
type Request struct {
	Interval time.Duration
	Top      int
	// Expect and VM are the disk every device is expected to be
	// (ParseExpect), its burst bucket CreditStartPct full.
	Expect, VM     string
	CreditStartPct float64
	ProcRoot       string
	SysRoot        string
	CgroupRoot     string
	PodLogs        string
	Node           string
	Th             Thresholds
	// Etcd are members to follow (each as etcdmetrics.MetricsURL reads
	// it), their WAL fsync p99 over EtcdWindow.
	Etcd       []string
	EtcdWindow units.Duration
	EtcdTLS    etcdmetrics.ClientOptions
	// Volumes, when set, gives what finds the node's volumes and what
	// each is expected to be (from the cluster); the named devices stay.
	Volumes func() (VolumeSource, error)
	// Pods, when set, gives what names pods before the kubelet's log
	// directory does (nil for nothing).
	Pods func() PodNamer
	// Set says which options were given, even as their defaults.
	Set func(name string) bool
}

// VolumeSource finds a node's volumes over time, beside the devices
// named (fixed).
type VolumeSource interface {
	Discoverer(ctx context.Context, procRoot, sysRoot string, fixed []string) func() (Discovery, error)
}

// CheckEtcd refuses an etcd option given without Etcd, which would
// otherwise be ignored without a word. Mistakes are *hint.UsageError.
func (r *Request) CheckEtcd() error {
	if len(r.Etcd) > 0 {
		return nil
	}
	for _, name := range []string{"etcd-window", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-insecure-skip-verify"} {
		if r.Set(name) {
			return hint.Usage(fmt.Errorf("--%s without --etcd", name), "name the etcd member to follow, e.g. --etcd https://10.0.0.1:2379, or drop --"+name)
		}
	}
	return nil
}

// Start checks r and makes the watcher of the devices args name (every
// disk behind a mounted file system when none), with its Config; stop
// releases what it holds. Mistakes in r are *hint.UsageError.
func (r *Request) Start(ctx context.Context, args []string) (w *Watcher, cfg *Config, stop func(), err error) {
	if r.Interval < 100*time.Millisecond {
		return nil, nil, nil, hint.Usage(fmt.Errorf("--interval %s is too short", r.Interval), "use 100ms or more; 1s matches iostat")
	}
	cfg = &Config{ProcRoot: r.ProcRoot, SysRoot: r.SysRoot, Interval: r.Interval, Th: r.Th, Top: r.Top, Host: r.Node}
	if len(args) > 0 {
		if cfg.Devices, err = ResolveArgs(args, r.ProcRoot, r.SysRoot); err != nil {
			return nil, nil, nil, &hint.Error{Err: err, Advice: "name a device (vdb, /dev/vdb) or a directory on a block device; 'lsblk' lists devices"}
		}
	}
	if r.Expect != "" {
		c, err := ParseExpect(r.Expect, r.VM)
		var ee *ExpectError
		var se *limits.SpecError
		switch {
		case errors.As(err, &ee):
			return nil, nil, nil, hint.Usage(ee.Err, hint.Of(err))
		case errors.As(err, &se):
			return nil, nil, nil, hint.Usage(se, hint.Of(se))
		case err != nil:
			return nil, nil, nil, err
		}
		c.CreditStartPct = r.CreditStartPct
		cfg.Ceiling = c
	} else if r.VM != "" {
		return nil, nil, nil, hint.Usage(errors.New("--vm needs --expect"), "say which disk: --expect azure:P10 --vm Standard_D4s_v3")
	}
	if r.Volumes != nil {
		vs, err := r.Volumes()
		if err != nil {
			return nil, nil, nil, err
		}
		cfg.DiscoverWith(vs.Discoverer(ctx, r.ProcRoot, r.SysRoot, cfg.Devices))
	} else {
		cfg.DiscoverMounted()
	}
	if r.Top > 0 {
		namers := PodNamers{}
		if r.Pods != nil {
			if n := r.Pods(); n != nil {
				namers = append(namers, n)
			}
		}
		cfg.AttributeCgroups(r.CgroupRoot, append(namers, &KubeletDirs{LogDir: r.PodLogs}))
	}
	stop, err = r.followEtcd(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	if w, err = New(*cfg); err != nil {
		stop()
		if errors.Is(err, ErrNoDevices) {
			return nil, nil, nil, &hint.Error{Err: err, Advice: "no mounted filesystem is on a disk here; name a device: iolens watch vdb"}
		}
		return nil, nil, nil, err
	}
	return w, cfg, stop, nil
}

// followEtcd adds the etcd members to cfg; stop releases the client's
// connections.
func (r *Request) followEtcd(cfg *Config) (stop func(), err error) {
	if len(r.Etcd) == 0 {
		return func() {}, nil
	}
	if w := time.Duration(r.EtcdWindow); w < 2*r.Interval {
		return nil, hint.Usage(fmt.Errorf("--etcd-window %s is shorter than two intervals (%s)", w, r.Interval), "use a window of several intervals, e.g. --etcd-window 1m")
	}
	for _, e := range r.Etcd {
		if _, err := etcdmetrics.MetricsURL(e, true); err != nil {
			return nil, hint.Usage(fmt.Errorf("--etcd %q: %w", e, err), "give etcd's client URL, e.g. https://10.0.0.1:2379")
		}
	}
	// A scrape must fit in an interval or two; a member that does not
	// answer in time shows as an error on that row.
	tls := r.EtcdTLS
	tls.Timeout = min(max(r.Interval, time.Second), 5*time.Second)
	c, err := tls.Open("etcd-")
	if err != nil {
		return nil, err
	}
	cfg.Etcd = &Etcd{Client: c, Endpoints: r.Etcd, Window: time.Duration(r.EtcdWindow)}
	cfg.Notes = append(cfg.Notes, fmt.Sprintf("etcd: WAL fsync p99 of %s over a sliding %s window, from etcd's histogram buckets (read as histogram_quantile does); limit 10 ms",
		strings.Join(r.Etcd, ", "), time.Duration(r.EtcdWindow)))
	return c.Close, nil
}
