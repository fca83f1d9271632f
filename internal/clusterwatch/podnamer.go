package clusterwatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/watch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIPodNamer names pods and containers on one node through the API, for
// 'iolens watch' in a pod whose service account may list pods. A lookup
// never waits for the API: an unknown UID starts a relist in the
// background (at most one at a time, and at most every 10 s) and misses,
// so that the caller falls back to its next namer and its sampling loop
// keeps its pace when the API is slow or out of reach.
type APIPodNamer struct {
	cs   kubernetes.Interface
	node string

	mu      sync.Mutex
	pods    map[string][2]string // uid -> namespace, name
	ctrs    map[string]string    // container id -> name
	listed  time.Time
	listing bool
}

// NewAPIPodNamer lists the pods of node with cs.
func NewAPIPodNamer(cs kubernetes.Interface, node string) *APIPodNamer {
	return &APIPodNamer{cs: cs, node: node}
}

// InClusterPodNamer is an APIPodNamer with the pod's own service account,
// or nil outside a cluster.
func InClusterPodNamer(node string) *APIPodNamer {
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil
	}
	cs, err := inCluster(3 * time.Second)
	if err != nil {
		return nil
	}
	return NewAPIPodNamer(cs, node)
}

// inCluster connects with the pod's service account.
func inCluster(timeout time.Duration) (kubernetes.Interface, error) {
	rc, err := rest.InClusterConfig()
	if err != nil {
		return nil, hint.Wrap(fmt.Errorf("in-cluster config: %w", err), "the pod needs its service account token (automountServiceAccountToken)")
	}
	rc.Timeout = timeout
	return kubernetes.NewForConfig(rc)
}

// InClusterNodeExpect is NewNodeExpect in a pod, connected with its
// service account. Not in a pod, or no node name, is a *k8s.RequestError.
func InClusterNodeExpect(node string, creditStart float64) (*NodeExpect, error) {
	if node == "" {
		return nil, &k8s.RequestError{Err: hint.Wrap(errors.New("--expect-from-cluster needs the node's name"),
			"pass --node, or set NODE_NAME from the downward API (deploy/watch-daemonset.yaml does)")}
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, &k8s.RequestError{Err: hint.Wrap(errors.New("--expect-from-cluster runs in a pod"),
			"deploy it with deploy/watch-daemonset.yaml; outside a cluster use --expect")}
	}
	cs, err := inCluster(10 * time.Second)
	if err != nil {
		return nil, err
	}
	return NewNodeExpect(cs, node, creditStart), nil
}

// Pod returns the namespace, pod and container of a pod UID and container
// id, if it knows them yet.
func (a *APIPodNamer) Pod(uid, cid string) (string, string, string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pods[uid]; ok {
		return p[0], p[1], a.ctrs[cid], true
	}
	if !a.listing && time.Since(a.listed) >= 10*time.Second {
		a.listing, a.listed = true, time.Now()
		go a.relist()
	}
	return "", "", "", false
}

// relist lists the node's pods and replaces the maps; on an error it keeps
// the last good ones.
func (a *APIPodNamer) relist() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	opts := metav1.ListOptions{}
	if a.node != "" {
		opts.FieldSelector = "spec.nodeName=" + a.node
	}
	list, err := a.cs.CoreV1().Pods("").List(ctx, opts)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listing = false
	if err != nil {
		return
	}
	a.pods, a.ctrs = map[string][2]string{}, map[string]string{}
	for _, p := range list.Items {
		a.pods[string(p.UID)] = [2]string{p.Namespace, p.Name}
		for _, st := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if _, id, ok := strings.Cut(st.ContainerID, "://"); ok {
				a.ctrs[id] = st.Name
			}
		}
	}
}

// Volumes is watch.Request's Volumes in a pod: the node's volumes, and
// the disk each is expected to be, through its service account.
func Volumes(node string, creditStart float64) func() (watch.VolumeSource, error) {
	return func() (watch.VolumeSource, error) {
		ne, err := InClusterNodeExpect(node, creditStart)
		if err != nil {
			return nil, err
		}
		return ne, nil
	}
}

// Pods is watch.Request's Pods: an InClusterPodNamer, none outside a
// cluster.
func Pods(node string) func() watch.PodNamer {
	return func() watch.PodNamer {
		if n := InClusterPodNamer(node); n != nil {
			return n
		}
		return nil
	}
}
