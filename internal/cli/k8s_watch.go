package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "with --once, how long to wait for the samples")
	f.DurationVar(&o.interval, "refresh", 2*time.Second, "how often the table is redrawn")
	return cmd
}

// clusterState is the latest sample per node and the findings seen.
type clusterState struct {
	mu       sync.Mutex
	samples  map[string]result.WatchRecord // node -> last sample
	findings []string
	errs     map[string]string
}

func (c *clusterState) add(node string, r result.WatchRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.Type {
	case result.WatchTypeSample:
		c.samples[node] = r
	case result.WatchTypeFinding:
		c.findings = append(c.findings, node+"  "+findingLine(r))
		if len(c.findings) > 200 {
			c.findings = c.findings[len(c.findings)-200:]
		}
	}
}

func (o *k8sWatchOptions) run(ctx context.Context, streams IOStreams, kf *kubeFlags) error {
	c, _, _, err := kf.client()
	if err != nil {
		return err
	}
	pods, err := c.CS.CoreV1().Pods(o.namespace).List(ctx, metav1.ListOptions{LabelSelector: o.selector})
	if err != nil {
		return &hintError{err: fmt.Errorf("listing watch pods: %w", err), hint: "check the cluster connection and that you may list pods in " + o.namespace}
	}
	var running []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running = append(running, p)
		}
	}
	if len(running) == 0 {
		return &hintError{err: fmt.Errorf("no running iolens watch pod in namespace %s (selector %s)", o.namespace, o.selector),
			hint: "deploy it: kubectl apply -f deploy/watch-daemonset.yaml"}
	}
	st := &clusterState{samples: map[string]result.WatchRecord{}, errs: map[string]string{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range running {
		wg.Add(1)
		go func(p corev1.Pod) {
			defer wg.Done()
			node := p.Spec.NodeName
			since := int64(5)
			req := c.CS.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Follow: true, SinceSeconds: &since})
			rc, err := req.Stream(ctx)
			if err != nil {
				st.mu.Lock()
				st.errs[node] = err.Error()
				st.mu.Unlock()
				return
			}
			defer rc.Close()
			readWatchStream(rc, func(r result.WatchRecord) { st.add(node, r) })
		}(p)
	}
	defer wg.Wait()
	defer cancel()

	tty := false
	if f, ok := streams.Out.(*os.File); ok && isTerminal(f) {
		tty = true
	}
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
			st.mu.Lock()
			n := len(st.samples)
			st.mu.Unlock()
			renderCluster(streams.Out, st, false)
			return &hintError{err: fmt.Errorf("only %d of %d watch pods reported within %s", n, len(running), o.timeout),
				hint: "check the pods: kubectl -n " + o.namespace + " logs -l " + o.selector}
		case <-tick.C:
			st.mu.Lock()
			n := len(st.samples)
			st.mu.Unlock()
			if o.once {
				if n >= len(running) {
					renderCluster(streams.Out, st, false)
					return nil
				}
				continue
			}
			renderCluster(streams.Out, st, tty)
		}
	}
}

// readWatchStream decodes NDJSON watch records, skipping other lines.
func readWatchStream(r io.Reader, fn func(result.WatchRecord)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var rec result.WatchRecord
		if json.Unmarshal(line, &rec) != nil || !result.IsWatch(rec.Schema) {
			continue
		}
		fn(rec)
	}
}

// renderCluster prints one row per node and device, then the findings.
func renderCluster(w io.Writer, st *clusterState, redraw bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if redraw {
		fmt.Fprint(w, "\x1b[H\x1b[2J")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tDEVICE\tSTATE\tr/s\tw/s\tMB/s\tawait ms\taqu-sz\t%util\tTOP POD")
	for _, node := range sortedKeys(st.samples) {
		r := st.samples[node]
		for _, d := range r.Devices {
			top := d.TopCgroup
			for _, c := range r.Top {
				if c.Device == d.Device {
					top = c.Name()
					break
				}
			}
			if top == "" {
				top = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.0f\t%s\n", node, d.Device, d.State, d.ReadIOPS, d.WriteIOPS,
				(d.ReadBWBytes+d.WriteBWBytes)/1e6, max(d.ReadAwaitMs, d.WriteAwaitMs), d.QueueSize, d.UtilPct, top)
		}
	}
	for _, node := range sortedKeys(st.errs) {
		fmt.Fprintf(tw, "%s\t-\tno data\t\t\t\t\t\t\t%s\n", node, st.errs[node])
	}
	tw.Flush()
	if len(st.findings) > 0 {
		fmt.Fprintln(w, "\nFINDINGS")
		for _, f := range st.findings[max(0, len(st.findings)-20):] {
			fmt.Fprintln(w, f)
		}
	}
}
