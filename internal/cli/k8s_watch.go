package cli

import (
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/clusterwatch"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/watch"
	"github.com/spf13/cobra"
)

// WatchSelector selects the pods of deploy/watch-daemonset.yaml.
const WatchSelector = "app.kubernetes.io/name=iolens-watch"

// ---- iolens k8s watch ----

func newK8sWatchCommand(streams IOStreams, kf *kubeFlags) *cobra.Command {
	v := &clusterwatch.View{Timeout: 30 * time.Second, Interval: 2 * time.Second}
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
			if err := v.Check(); err != nil {
				return requestErr("see 'iolens k8s watch --help'", err)
			}
			c, _, _, err := kf.client()
			if err != nil {
				return err
			}
			tty, _ := terminal(streams.Out)
			return v.Run(cmd.Context(), c.CS, func(st *watch.ClusterState, again bool) {
				if tty && again {
					// Clear the screen with a code of iolens's own, past the
					// filter the table's cells go through.
					fmt.Fprint(rawOf(streams.Out), watch.ClearScreen)
				}
				watch.WriteCluster(streams.Out, st, false)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&v.Namespace, "watch-namespace", "iolens-privileged", "namespace of the DaemonSet")
	f.StringVarP(&v.Selector, "selector", "l", WatchSelector, "label selector of the DaemonSet's pods")
	f.BoolVar(&v.Once, "once", false, "print one table once every pod has reported a sample, then exit")
	f.Var((*units.Duration)(&v.Timeout), "timeout", "with --once, how long to wait for the samples")
	f.Var((*units.Duration)(&v.Interval), "refresh", "how often the table is redrawn")
	return cmd
}
