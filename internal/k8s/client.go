package k8s

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Client is what the package needs from a cluster.
type Client struct {
	CS kubernetes.Interface
	// Logs opens a pod's log; nil uses CS. Tests replace it to cut
	// streams.
	Logs LogOpener
	// Poll is how often object state is checked (default 500 ms).
	Poll time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// LogOpener opens the log of a pod's agent container.
type LogOpener func(ctx context.Context, namespace, pod string, follow bool) (io.ReadCloser, error)

func (c *Client) openLogs(ctx context.Context, ns, pod string, follow bool) (io.ReadCloser, error) {
	if c.Logs != nil {
		return c.Logs(ctx, ns, pod, follow)
	}
	return c.CS.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: containerTag, Follow: follow}).Stream(ctx)
}

func (c *Client) poll() time.Duration {
	if c.Poll > 0 {
		return c.Poll
	}
	return 500 * time.Millisecond
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// inClusterNamespace is where a pod's service account token mount keeps
// the pod's namespace.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// InClusterClient is a client for code that runs in a pod, with the pod's
// service account, and the pod's namespace. Every request gives up after
// a few seconds: callers poll, and a slow API must not stall them.
func InClusterClient() (kubernetes.Interface, string, error) {
	rc, err := rest.InClusterConfig()
	if err != nil {
		return nil, "", fmt.Errorf("in-cluster API access: %w", err)
	}
	rc.Timeout = 3 * time.Second
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(inClusterNamespace)
	if err != nil {
		return nil, "", fmt.Errorf("the pod's namespace: %w", err)
	}
	return cs, strings.TrimSpace(string(b)), nil
}
