package k8s

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ErrNoDefaultClass means no storage class was named and the cluster has
// no default one.
var ErrNoDefaultClass = errors.New("no --storage-class given and the cluster has no default storage class")

// ErrNoNodes means no node can take the run's pods.
var ErrNoNodes = errors.New("--all-nodes: no ready, schedulable node matches")

// DefaultClass returns the name of the cluster's default storage class.
func DefaultClass(ctx context.Context, cs kubernetes.Interface) (string, error) {
	cls, err := Classes(ctx, cs, nil)
	if err != nil {
		return "", err
	}
	for _, c := range cls {
		if c.Default {
			return c.Name, nil
		}
	}
	return "", &hint.Error{Err: ErrNoDefaultClass, Advice: "name one with --storage-class ('iolens k8s classes' lists them)"}
}

// SchedulableNodes lists ready, uncordoned nodes matching sel whose
// NoSchedule/NoExecute taints are all tolerated, sorted by name.
func SchedulableNodes(ctx context.Context, cs kubernetes.Interface, sel map[string]string, tol []corev1.Toleration) ([]string, error) {
	var lsel []string
	for k, v := range sel {
		lsel = append(lsel, k+"="+v)
	}
	sort.Strings(lsel)
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: strings.Join(lsel, ",")})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var out []string
	for _, n := range list.Items {
		if n.Spec.Unschedulable || !NodeReady(&n) {
			continue
		}
		ok := true
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectPreferNoSchedule {
				continue
			}
			tolerated := false
			for _, x := range tol {
				tolerated = tolerated || x.ToleratesTaint(&t)
			}
			ok = ok && tolerated
		}
		if ok {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, &hint.Error{Err: ErrNoNodes, Advice: "check --node-selector, and add --tolerate for tainted nodes"}
	}
	return out, nil
}

// NodeReady reports whether a node's Ready condition is true.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
