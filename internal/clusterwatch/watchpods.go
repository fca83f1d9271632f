package clusterwatch

import (
	"context"
	"sync"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/watch"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// RunningPods lists the running pods in ns that selector matches.
func RunningPods(ctx context.Context, cs kubernetes.Interface, ns, selector string) ([]corev1.Pod, error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var running []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running = append(running, p)
		}
	}
	return running, nil
}

// FollowWatchers follows the log of each iolens watch pod (pods/log, from
// five seconds back) until ctx ends, adding its records to st under the
// pod's node; a log that cannot be read fails the node. The returned
// func waits for every follower to end.
func FollowWatchers(ctx context.Context, cs kubernetes.Interface, pods []corev1.Pod, st *watch.ClusterState) (wait func()) {
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Add(1)
		go func(p corev1.Pod) {
			defer wg.Done()
			node := p.Spec.NodeName
			since := int64(5)
			req := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Follow: true, SinceSeconds: &since})
			rc, err := req.Stream(ctx)
			if err != nil {
				st.Fail(node, err.Error())
				return
			}
			defer rc.Close()
			watch.ReadStream(rc, func(r result.WatchRecord) { st.Add(node, r) })
		}(p)
	}
	return wg.Wait
}
