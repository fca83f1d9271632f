package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ExpectAnnotation on a StorageClass or a PersistentVolume names the disk
// its volumes are expected to be (k8s.ExpectAnnotation).
const ExpectAnnotation = k8s.ExpectAnnotation

// inClusterExpect connects with the pod's service account.
func inClusterExpect(node string, creditStart float64) (*k8s.NodeExpect, error) {
	if node == "" {
		return nil, &UsageError{Err: errors.New("--expect-from-cluster needs the node's name"),
			Help: "pass --node, or set NODE_NAME from the downward API (deploy/watch-daemonset.yaml does)"}
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, &UsageError{Err: errors.New("--expect-from-cluster runs in a pod"),
			Help: "deploy it with deploy/watch-daemonset.yaml; outside a cluster use --expect"}
	}
	rc, err := rest.InClusterConfig()
	if err != nil {
		return nil, &hint.Error{Err: fmt.Errorf("in-cluster config: %w", err), Advice: "the pod needs its service account token (automountServiceAccountToken)"}
	}
	rc.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return k8s.NewNodeExpect(cs, node, creditStart), nil
}
