package k8s

import (
	"context"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
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
