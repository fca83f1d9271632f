package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/iolens/iolens/internal/clusterwatch"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/units"

	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/watch"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type watchOptions struct {
	interval    time.Duration
	duration    units.Duration
	output      *format
	out         string
	top         units.Count
	expect      string
	fromCluster bool
	vm          string
	creditStart float64
	metricsAddr string
	procRoot    string
	sysRoot     string
	cgroupRoot  string
	podLogs     string
	node        string
	kubeAPI     bool
	th          watch.Thresholds
	etcd        etcdWatchOptions
}

func newWatchCommand(streams IOStreams) *cobra.Command {
	o := &watchOptions{th: watch.DefaultThresholds()}
	cmd := &cobra.Command{
		Use:   "watch [DEVICE|DIR ...]",
		Short: "Watch disks live: state, stalls, caps and who is doing the IO",
		Long: `Watch block devices while the real workload runs. Every interval each device
gets a row of iostat figures and a state:

  ok         nothing to worry about
  busy       utilization over 60% or requests queued
  saturated  util over 90% with aqu-sz 4 or more: more work than it serves
  stalled    IO pending but (almost) nothing completes: a cache draining,
             a throttle, a dying disk
  at_cap     at 95% or more of the expected ceiling (--expect)

Findings (stall started/ended, saturation, cliffs, writeback storms, burst
credit running out) are logged with timestamps. On a terminal the view is
redrawn in place; otherwise, or with -o ndjson, samples and findings stream
as NDJSON that 'iolens report' and 'iolens analyze' read back.

Without arguments, every disk backing a mounted filesystem is watched
(loop and ram devices only when named).`,
		Example: `  iolens watch
  iolens watch /var/lib/postgresql --expect azure:P10
  iolens watch vdb --expect iops=500,bw=100MB,burst-iops=3500,burst-s=1800
  iolens watch -o ndjson --out watch.ndjson --duration 10m
  iolens report watch.ndjson
  iolens watch --metrics-addr :9101 --top 5
  iolens watch --expect-from-cluster --metrics-addr :9101   # in a pod: each volume against its class's disk`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.etcd.needsEtcd(cmd.Flags()); err != nil {
				return err
			}
			return o.run(cmd.Context(), streams, args)
		},
	}
	f := cmd.Flags()
	o.interval = time.Second
	f.Var((*units.Duration)(&o.interval), "interval", "sampling interval")
	f.Var(&o.duration, "duration", "stop after this long, e.g. 10m (default: until Ctrl-C)")
	o.output = formatFlag(f, report.Watches, "auto is a live view on a terminal and NDJSON otherwise, text one line per finding: ")
	f.StringVar(&o.out, "out", "", "also append the NDJSON stream to this file")
	markOutput(f, "out")
	o.top = units.Count{N: 5, Min: 0, Max: 1000}
	f.Var(&o.top, "top", "list the N cgroups (processes, pods) doing the most IO; 0 turns attribution off")
	f.StringVar(&o.expect, "expect", "", "the disk's expected limits: a catalog disk (azure:P10) or iops=N,bw=SIZE[,burst-iops=N,burst-bw=SIZE,burst-s=S]")
	f.BoolVar(&o.fromCluster, "expect-from-cluster", false, "in a pod: expect each volume's disk from its storage class and size, on the node's instance type "+
		"(or the "+clusterwatch.ExpectAnnotation+" annotation of its PV or class); --expect then covers the other devices")
	f.StringVar(&o.vm, "vm", "", "the VM size, whose disk limits also apply (with --expect)")
	o.creditStart = 100
	f.Var(&units.Number{P: &o.creditStart, Min: 0, Max: 100}, "burst-credit", "burst credit (%, 0 to 100) assumed when watching starts")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (e.g. :9101) at /metrics")
	f.StringVar(&o.procRoot, "proc-root", "/proc", "proc file system to read (the host's, in a pod)")
	f.StringVar(&o.sysRoot, "sys-root", "/sys", "sys file system to read")
	f.StringVar(&o.cgroupRoot, "cgroup-root", "", "cgroup file system (default SYS-ROOT/fs/cgroup)")
	f.StringVar(&o.podLogs, "pod-logs", "/var/log/pods", "the kubelet's pod log directory, which names pods by UID")
	f.StringVar(&o.node, "node", os.Getenv("NODE_NAME"), "node name label on metrics and records")
	f.BoolVar(&o.kubeAPI, "kube-api", true, "in a pod, name pods and containers through the API (falls back to --pod-logs)")
	f.Var(&units.Number{P: &o.th.StallRatio, Min: 0.001, Max: 0.99}, "stall-ratio", "a rate below this share of the recent median (0.001 to 0.99), with IO pending, is a stall")
	f.Var(&units.Number{P: &o.th.SaturatedQueue, Min: 0.5, Max: 1e6}, "saturated-queue", "aqu-sz at which a fully utilized device is saturated")
	f.Var(&units.Number{P: &o.th.AtCapPct, Min: 1, Max: 100}, "at-cap", "% of the expected ceiling (1 to 100) at which a device is at cap")
	o.etcd.addFlags(f)
	return cmd
}

func (o *watchOptions) run(ctx context.Context, streams IOStreams, args []string) error {
	if err := checkOutputs(reads{}, [2]string{"--out", o.out}); err != nil {
		return err
	}
	if o.interval < 100*time.Millisecond {
		return &UsageError{Err: fmt.Errorf("--interval %s is too short", o.interval), Help: "use 100ms or more; 1s matches iostat"}
	}
	// -o is one of report.Watches, checked as it was parsed: the records
	// stream to the sink of the one chosen.
	mode := o.output.v
	tty, _ := terminal(streams.Out)
	if mode == "auto" {
		mode = "ndjson"
		if tty {
			mode = "tty"
		}
	}
	if mode == "tty" && !tty {
		return &UsageError{Err: errors.New("-o tty needs a terminal"), Help: "use -o ndjson to stream records"}
	}
	cfg := watch.Config{ProcRoot: o.procRoot, SysRoot: o.sysRoot, Interval: o.interval, Th: o.th, Top: int(o.top.N), Host: o.node}
	if len(args) > 0 {
		devs, err := watch.ResolveArgs(args, o.procRoot, o.sysRoot)
		if err != nil {
			return &hint.Error{Err: err, Advice: "name a device (vdb, /dev/vdb) or a directory on a block device; 'lsblk' lists devices"}
		}
		cfg.Devices = devs
	}
	if o.expect != "" {
		c, err := parseExpect(o.expect, o.vm)
		if err != nil {
			return err
		}
		c.CreditStartPct = o.creditStart
		cfg.Ceiling = c
	} else if o.vm != "" {
		return &UsageError{Err: errors.New("--vm needs --expect"), Help: "say which disk: --expect azure:P10 --vm Standard_D4s_v3"}
	}
	var cluster *clusterwatch.NodeExpect
	if o.fromCluster {
		var err error
		if cluster, err = clusterwatch.InClusterNodeExpect(o.node, o.creditStart); err != nil {
			return requestErr("see 'iolens watch --help'", err)
		}
	}
	if cluster != nil {
		cfg.DiscoverWith(cluster.Discoverer(ctx, o.procRoot, o.sysRoot, cfg.Devices))
	} else {
		cfg.DiscoverMounted()
	}
	if o.top.N > 0 {
		namers := watch.PodNamers{}
		if o.kubeAPI {
			if n := clusterwatch.InClusterPodNamer(o.node); n != nil {
				namers = append(namers, n)
			}
		}
		cfg.AttributeCgroups(o.cgroupRoot, append(namers, &watch.KubeletDirs{LogDir: o.podLogs}))
	}
	closeEtcd, err := o.etcd.configure(&cfg, o.interval)
	if err != nil {
		return err
	}
	defer closeEtcd()
	w, err := watch.New(cfg)
	if err != nil {
		if errors.Is(err, watch.ErrNoDevices) {
			return &hint.Error{Err: err, Advice: "no mounted filesystem is on a disk here; name a device: iolens watch vdb"}
		}
		return err
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(o.duration))
		defer cancel()
	}

	var sinks []func(result.WatchRecord) error
	file, err := openOut(o.out)
	if err != nil {
		return err
	}
	defer file.Close()
	if file != nil {
		enc := json.NewEncoder(file)
		sinks = append(sinks, func(r result.WatchRecord) error { return enc.Encode(r) })
	}
	if o.metricsAddr != "" {
		reg := metrics.NewRegistry(buildOf())
		feed := watch.NewMetrics(reg, o.node).Feed(w, &cfg)
		srv, err := metrics.Serve(o.metricsAddr, reg)
		if err != nil {
			return &hint.Error{Err: err, Advice: "pick a free port: --metrics-addr :9101"}
		}
		defer srv.Close()
		sinks = append(sinks, feed)
	}
	switch mode {
	case "ndjson":
		ndjson, err := report.Watches.Lookup("ndjson")
		if err != nil {
			return err
		}
		enc := json.NewEncoder(reportOut(streams.Out, ndjson))
		sinks = append(sinks, func(r result.WatchRecord) error { return enc.Encode(r) })
	case "text":
		sinks = append(sinks, watch.TextLog(streams.Out, w, o.interval))
	case "tty":
		f, _ := rawFile(streams.Out) // -o tty checked that it is a terminal
		v := watch.NewScreen(f, func() (int, int, error) { return term.GetSize(int(f.Fd())) }, w)
		v.Open()
		defer v.Close()
		sinks = append(sinks, v.Add)
	}
	// --duration running out is a normal end: w.Run returns nil.
	err = w.Run(ctx, func(r result.WatchRecord) error {
		for _, s := range sinks {
			if err := s(r); err != nil {
				return err
			}
		}
		return nil
	})
	return errors.Join(err, file.Close())
}

// parseExpect reads --expect (watch.ParseExpect); its mistakes are usage
// errors.
func parseExpect(spec, vm string) (*watch.Ceiling, error) {
	c, err := watch.ParseExpect(spec, vm)
	var ee *watch.ExpectError
	if errors.As(err, &ee) {
		return nil, &UsageError{Err: ee.Err, Help: hint.Of(err)}
	}
	if err != nil {
		return nil, specError(err)
	}
	return c, nil
}
