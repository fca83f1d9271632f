package cli

import (
	"context"
	"errors"
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

// watchOptions are watch's flags: the library's request, and where the
// records go.
type watchOptions struct {
	watch.Request
	duration    units.Duration
	output      *format
	out         string
	top         units.Count
	fromCluster bool
	metricsAddr string
	kubeAPI     bool
}

func newWatchCommand(streams IOStreams) *cobra.Command {
	o := &watchOptions{Request: watch.Request{Th: watch.DefaultThresholds()}}
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
			o.Set = cmd.Flags().Changed
			if err := o.CheckEtcd(); err != nil {
				return err
			}
			return o.run(cmd.Context(), streams, args)
		},
	}
	f := cmd.Flags()
	o.Interval = time.Second
	f.Var((*units.Duration)(&o.Interval), "interval", "sampling interval")
	f.Var(&o.duration, "duration", "stop after this long, e.g. 10m (default: until Ctrl-C)")
	o.output = formatFlag(f, report.Watches, "auto is a live view on a terminal and NDJSON otherwise, text one line per finding: ")
	f.StringVar(&o.out, "out", "", "also append the NDJSON stream to this file")
	markOutput(f, "out")
	o.top = units.Count{N: 5, Min: 0, Max: 1000}
	f.Var(&o.top, "top", "list the N cgroups (processes, pods) doing the most IO; 0 turns attribution off")
	f.StringVar(&o.Expect, "expect", "", "the disk's expected limits: a catalog disk (azure:P10) or iops=N,bw=SIZE[,burst-iops=N,burst-bw=SIZE,burst-s=S]")
	f.BoolVar(&o.fromCluster, "expect-from-cluster", false, "in a pod: expect each volume's disk from its storage class and size, on the node's instance type "+
		"(or the "+clusterwatch.ExpectAnnotation+" annotation of its PV or class); --expect then covers the other devices")
	f.StringVar(&o.VM, "vm", "", "the VM size, whose disk limits also apply (with --expect)")
	o.CreditStartPct = 100
	f.Var(&units.Number{P: &o.CreditStartPct, Min: 0, Max: 100}, "burst-credit", "burst credit (%, 0 to 100) assumed when watching starts")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (e.g. :9101) at /metrics")
	f.StringVar(&o.ProcRoot, "proc-root", "/proc", "proc file system to read (the host's, in a pod)")
	f.StringVar(&o.SysRoot, "sys-root", "/sys", "sys file system to read")
	f.StringVar(&o.CgroupRoot, "cgroup-root", "", "cgroup file system (default SYS-ROOT/fs/cgroup)")
	f.StringVar(&o.PodLogs, "pod-logs", "/var/log/pods", "the kubelet's pod log directory, which names pods by UID")
	f.StringVar(&o.Node, "node", os.Getenv("NODE_NAME"), "node name label on metrics and records")
	f.BoolVar(&o.kubeAPI, "kube-api", true, "in a pod, name pods and containers through the API (falls back to --pod-logs)")
	f.Var(&units.Number{P: &o.Th.StallRatio, Min: 0.001, Max: 0.99}, "stall-ratio", "a rate below this share of the recent median (0.001 to 0.99), with IO pending, is a stall")
	f.Var(&units.Number{P: &o.Th.SaturatedQueue, Min: 0.5, Max: 1e6}, "saturated-queue", "aqu-sz at which a fully utilized device is saturated")
	f.Var(&units.Number{P: &o.Th.AtCapPct, Min: 1, Max: 100}, "at-cap", "% of the expected ceiling (1 to 100) at which a device is at cap")
	o.EtcdWindow = units.Duration(watch.DefaultEtcdWindow)
	f.StringArrayVar(&o.Etcd, "etcd", nil, "also scrape this etcd member's /metrics every interval and follow its WAL fsync p99 (repeatable; a URL as for 'iolens etcd')")
	f.Var(&o.EtcdWindow, "etcd-window", "the sliding window of the WAL fsync p99")
	etcdTLSFlags(f, &o.EtcdTLS, "etcd-")
	return cmd
}

func (o *watchOptions) run(ctx context.Context, streams IOStreams, args []string) error {
	if err := checkOutputs(reads{}, [2]string{"--out", o.out}); err != nil {
		return err
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
	o.Top = int(o.top.N)
	if o.fromCluster {
		o.Volumes = clusterwatch.Volumes(o.Node, o.CreditStartPct)
	}
	if o.kubeAPI {
		o.Pods = clusterwatch.Pods(o.Node)
	}
	w, cfg, stop, err := o.Start(ctx, args)
	if err != nil {
		return requestErr("see 'iolens watch --help'", err)
	}
	defer stop()
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
		sinks = append(sinks, watch.NDJSON(file))
	}
	if o.metricsAddr != "" {
		reg := metrics.NewRegistry(buildOf())
		feed := watch.NewMetrics(reg, o.Node).Feed(w, cfg)
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
		sinks = append(sinks, watch.NDJSON(reportOut(streams.Out, ndjson)))
	case "text":
		sinks = append(sinks, watch.TextLog(streams.Out, w, o.Interval))
	case "tty":
		f, _ := rawFile(streams.Out) // -o tty checked that it is a terminal
		v := watch.NewScreen(f, func() (int, int, error) { return term.GetSize(int(f.Fd())) }, w)
		v.Open()
		defer v.Close()
		sinks = append(sinks, v.Add)
	}
	// --duration running out is a normal end: w.Run returns nil.
	err = w.Run(ctx, watch.Fanout(sinks...))
	return errors.Join(err, file.Close())
}
