package k8s

import (
	"context"
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/hint"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeRequest is what node-check asks for: a directory on one node, its
// one target, as the user given uid when RunAsUser is set. Check and
// Targets are Request's.
type NodeRequest struct {
	Node, Path string
	RunAsUser  *int64
}

// Check refuses a malformed request (every error is a *RequestError) and
// sets cfg's host path and uid.
func (q NodeRequest) Check(cfg *Config) error {
	// The API server takes a uid from 0 to 2^31-1; a larger one would be
	// refused only after iolens has created the run's objects.
	if u := q.RunAsUser; u != nil && (*u < 0 || *u > math.MaxInt32) {
		return badRequest("--run-as-user %d: a uid is from 0 to %d", *u, math.MaxInt32)
	}
	if err := CheckName("node", q.Node); err != nil {
		return &RequestError{Err: hint.Wrap(err, "give the node's name, as 'kubectl get nodes' lists it")}
	}
	if err := CheckHostPath(q.Path); err != nil {
		return &RequestError{Err: err}
	}
	cfg.HostPath, cfg.RunAsUser = q.Path, q.RunAsUser
	return nil
}

// Targets checks that the node exists: its target is the run's one.
func (q NodeRequest) Targets(ctx context.Context, cs kubernetes.Interface, _ *Config) ([]Target, error) {
	if _, err := cs.CoreV1().Nodes().Get(ctx, q.Node, metav1.GetOptions{}); err != nil {
		return nil, hint.Wrap(fmt.Errorf("node %s: %w", q.Node, err), "list the nodes with 'kubectl get nodes'")
	}
	return []Target{{ID: "t1", Node: q.Node, Group: "g1"}}, nil
}
