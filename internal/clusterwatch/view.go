package clusterwatch

import (
	"context"
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/watch"
	"k8s.io/client-go/kubernetes"
)

// View is 'iolens k8s watch': the running pods of the watch DaemonSet in
// Namespace that Selector matches, their logs followed into one state,
// drawn every Interval; with Once, drawn once every pod has reported, or
// when Timeout has passed, with an error.
type View struct {
	Namespace, Selector string
	Once                bool
	Timeout, Interval   time.Duration
}

// Check refuses what cannot be watched; every error is a
// *k8s.RequestError.
func (v View) Check() error {
	if v.Interval <= 0 || v.Timeout <= 0 {
		return &k8s.RequestError{Err: fmt.Errorf("--refresh %s and --timeout %s must be positive", v.Interval, v.Timeout)}
	}
	if err := k8s.CheckName("namespace", v.Namespace); err != nil {
		return &k8s.RequestError{Err: hint.Wrap(err, "give the DaemonSet's namespace with --watch-namespace")}
	}
	return nil
}

// Run follows the pods until ctx ends (or, with Once, the one drawing)
// and has draw draw their state: again is a drawing that replaces the
// last one, never with Once.
func (v View) Run(ctx context.Context, cs kubernetes.Interface, draw func(st *watch.ClusterState, again bool)) error {
	running, err := RunningPods(ctx, cs, v.Namespace, v.Selector)
	if err != nil {
		return &hint.Error{Err: fmt.Errorf("listing watch pods: %w", err), Advice: "check the cluster connection and that you may list pods in " + v.Namespace}
	}
	if len(running) == 0 {
		return &hint.Error{Err: fmt.Errorf("no running iolens watch pod in namespace %s (selector %s)", v.Namespace, v.Selector),
			Advice: "deploy it: kubectl apply -f deploy/watch-daemonset.yaml"}
	}
	st := watch.NewClusterState()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer FollowWatchers(ctx, cs, running, st)()
	defer cancel()
	var deadline <-chan time.Time
	if v.Once {
		deadline = time.After(v.Timeout)
	}
	tick := time.NewTicker(v.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline:
			n := st.Reported()
			draw(st, false)
			return &hint.Error{Err: fmt.Errorf("only %d of %d watch pods reported within %s", n, len(running), v.Timeout),
				Advice: "check the pods: kubectl -n " + v.Namespace + " logs -l " + v.Selector}
		case <-tick.C:
			switch {
			case !v.Once:
				draw(st, true)
			case st.Reported() >= len(running):
				draw(st, false)
				return nil
			}
		}
	}
}
