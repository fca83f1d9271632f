package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/clusterwatch"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/watch"
	"github.com/spf13/cobra"
)

// WatchSelector selects the pods of deploy/watch-daemonset.yaml.
const WatchSelector = "app.kubernetes.io/name=iolens-watch"

// ---- iolens k8s watch ----

type k8sWatchOptions struct {
	namespace string
	selector  string
	once      bool
	timeout   time.Duration
	interval  time.Duration
}

func newK8sWatchCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	o := &k8sWatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Live cluster-wide table of disk states from the iolens watch DaemonSet",
		Long: `Read the NDJSON stream of every pod of the iolens watch DaemonSet
(deploy/watch-daemonset.yaml) through the API (pods/log) and show one row
per node and device: its state, rates, queue and the pod doing the most IO.
Findings from every node are listed below the table.`,
		Example: `  kubectl apply -f deploy/watch-daemonset.yaml
  iolens k8s watch
  iolens k8s watch --once          # one table as soon as every node reported`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams, kf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.namespace, "watch-namespace", "iolens-privileged", "namespace of the DaemonSet")
	f.StringVarP(&o.selector, "selector", "l", WatchSelector, "label selector of the DaemonSet's pods")
	f.BoolVar(&o.once, "once", false, "print one table once every pod has reported a sample, then exit")
	o.timeout = 30 * time.Second
	f.Var((*units.Duration)(&o.timeout), "timeout", "with --once, how long to wait for the samples")
	o.interval = 2 * time.Second
	f.Var((*units.Duration)(&o.interval), "refresh", "how often the table is redrawn")
	return cmd
}

func (o *k8sWatchOptions) run(ctx context.Context, streams IOStreams, kf *kubeFlags) error {
	if o.interval <= 0 || o.timeout <= 0 {
		return k8sUsage("watch", "--refresh %s and --timeout %s must be positive", o.interval, o.timeout)
	}
	if err := k8s.CheckName("namespace", o.namespace); err != nil {
		return &UsageError{Err: err, Help: "give the DaemonSet's namespace with --watch-namespace"}
	}
	c, _, _, err := kf.client()
	if err != nil {
		return err
	}
	running, err := clusterwatch.RunningPods(ctx, c.CS, o.namespace, o.selector)
	if err != nil {
		return &hint.Error{Err: fmt.Errorf("listing watch pods: %w", err), Advice: "check the cluster connection and that you may list pods in " + o.namespace}
	}
	if len(running) == 0 {
		return &hint.Error{Err: fmt.Errorf("no running iolens watch pod in namespace %s (selector %s)", o.namespace, o.selector),
			Advice: "deploy it: kubectl apply -f deploy/watch-daemonset.yaml"}
	}
	st := watch.NewClusterState()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer clusterwatch.FollowWatchers(ctx, c.CS, running, st)()
	defer cancel()

	tty, _ := terminal(streams.Out)
	var deadline <-chan time.Time
	if o.once {
		deadline = time.After(o.timeout)
	}
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline:
			n := st.Reported()
			watch.WriteCluster(streams.Out, st, false)
			return &hint.Error{Err: fmt.Errorf("only %d of %d watch pods reported within %s", n, len(running), o.timeout),
				Advice: "check the pods: kubectl -n " + o.namespace + " logs -l " + o.selector}
		case <-tick.C:
			n := st.Reported()
			if o.once {
				if n >= len(running) {
					watch.WriteCluster(streams.Out, st, false)
					return nil
				}
				continue
			}
			if tty {
				// Clear the screen with a code of iolens's own, past the
				// filter the table's cells go through.
				fmt.Fprint(rawOf(streams.Out), watch.ClearScreen)
			}
			watch.WriteCluster(streams.Out, st, false)
		}
	}
}
